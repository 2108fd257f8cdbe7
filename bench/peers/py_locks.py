"""Benchmark scenarios for the Python peers of redlua: redis-py's Lock and
python-redis-lock. Run by the redlua-bench runner inside a throwaway venv.

    python py_locks.py LIBRARY URL SCENARIO PARAMS_JSON

LIBRARY is `redis-py` or `python-redis-lock`; SCENARIO is `uncontended`
(PARAMS: {"iterations": N}) or `contended` (PARAMS: {"contenders": N,
"seconds": S, "critical_ms": C}). Prints one JSON object: for uncontended
{"seconds": elapsed}, for contended {"events": [[contender, acquired_s,
released_s], ...]} with times from one monotonic clock.
"""

import json
import sys
import threading
import time

import redis

LEASE_S = 30


def make_lock(library, conn, name):
    if library == "redis-py":
        return conn.lock(name, timeout=LEASE_S)
    if library == "python-redis-lock":
        import redis_lock

        return redis_lock.Lock(conn, name, expire=LEASE_S)
    raise SystemExit(f"unknown library {library}")


def uncontended(library, url, params):
    conn = redis.Redis.from_url(url)
    lock = make_lock(library, conn, "bench:uncontended")
    for _ in range(50):
        lock.acquire()
        lock.release()
    start = time.perf_counter()
    for _ in range(params["iterations"]):
        lock.acquire()
        lock.release()
    return {"seconds": time.perf_counter() - start}


def contended(library, url, params):
    events = []
    guard = threading.Lock()
    deadline = time.perf_counter() + params["seconds"]
    critical = params["critical_ms"] / 1000.0

    def contender(index):
        conn = redis.Redis.from_url(url)
        lock = make_lock(library, conn, "bench:contended")
        mine = []
        while time.perf_counter() < deadline:
            lock.acquire()
            acquired = time.perf_counter()
            time.sleep(critical)
            released = time.perf_counter()
            lock.release()
            mine.append([index, acquired, released])
        with guard:
            events.extend(mine)

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(params["contenders"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"events": events}


def main():
    library, url, scenario, params = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    run = {"uncontended": uncontended, "contended": contended}[scenario]
    print(json.dumps(run(library, url, params)))


if __name__ == "__main__":
    main()
