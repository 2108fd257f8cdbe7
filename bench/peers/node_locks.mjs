// Benchmark scenarios for the Node.js peer of redlua: redis-semaphore's
// Mutex (on ioredis). Run by the redlua-bench runner with a throwaway npm
// prefix.
//
//   node node_locks.mjs URL SCENARIO PARAMS_JSON
//
// Same scenarios, parameters and output as py_locks.py.
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(process.env.REDLUA_BENCH_NODE_MODULES + "/");
const Redis = require("ioredis");
const { Mutex, Semaphore } = require("redis-semaphore");

const LEASE_MS = 30000;
const now = () => performance.now() / 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function mutex(client, name) {
  return new Mutex(client, name, { lockTimeout: LEASE_MS, acquireTimeout: 600000 });
}

async function uncontended(url, params) {
  const client = new Redis(url);
  const lock = mutex(client, "bench:uncontended");
  for (let i = 0; i < 50; i++) {
    await lock.acquire();
    await lock.release();
  }
  const start = now();
  for (let i = 0; i < params.iterations; i++) {
    await lock.acquire();
    await lock.release();
  }
  const seconds = now() - start;
  client.disconnect();
  return { seconds };
}

// redis-semaphore's Semaphore (a sorted set of holders), 1000 permits.
async function semaphore_uncontended(url, params) {
  const client = new Redis(url);
  const semaphore = new Semaphore(client, "bench:semaphore", 1000, {
    lockTimeout: LEASE_MS,
    acquireTimeout: 600000,
  });
  for (let i = 0; i < 50; i++) {
    await semaphore.acquire();
    await semaphore.release();
  }
  const start = now();
  for (let i = 0; i < params.iterations; i++) {
    await semaphore.acquire();
    await semaphore.release();
  }
  const seconds = now() - start;
  client.disconnect();
  return { seconds };
}

async function contended(url, params) {
  const events = [];
  const deadline = now() + params.seconds;
  const contenders = [];
  for (let index = 0; index < params.contenders; index++) {
    contenders.push((async () => {
      const client = new Redis(url);
      const lock = mutex(client, "bench:contended");
      while (now() < deadline) {
        await lock.acquire();
        const acquired = now();
        await sleep(params.critical_ms);
        const released = now();
        await lock.release();
        events.push([index, acquired, released]);
      }
      client.disconnect();
    })());
  }
  await Promise.all(contenders);
  return { events };
}

const [url, scenario, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson);
const run = { uncontended, contended, semaphore_uncontended }[scenario];
console.log(JSON.stringify(await run(url, params)));
