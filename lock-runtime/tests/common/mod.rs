//! Helpers of the lock tests: a private redis-server with a raw connection
//! for looking at (and tampering with) what the locks store, a listener on a
//! pub/sub channel, time limits that turn hangs into failures, and faults
//! injected for a while ([`chaos`]).

#![allow(dead_code)]

pub mod chaos;

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redlua_runtime::LockClient;
use redlua_test_support::{FaultProxy, RedisServer};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A private redis-server and a raw connection to it.
pub struct Redis {
    pub server: RedisServer,
    pub con: MultiplexedConnection,
}

impl Redis {
    /// Starts a server (panics with install instructions if there is none).
    pub async fn start() -> Redis {
        let server = tokio::task::spawn_blocking(RedisServer::start)
            .await
            .expect("starting redis-server");
        let con = server
            .client()
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        Redis { server, con }
    }

    /// Starts a server that keeps every write it acknowledged across a
    /// [`restart`](Self::restart): an append-only file, written out before
    /// each reply.
    pub async fn start_persistent() -> Redis {
        let server = tokio::task::spawn_blocking(|| {
            RedisServer::start_with(["--appendonly", "yes", "--appendfsync", "always"])
        })
        .await
        .expect("starting redis-server");
        let con = server
            .client()
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        Redis { server, con }
    }

    /// Kills the server (`SIGKILL`) and starts it again on the same port
    /// (see [`RedisServer::restart`]); the raw connection is a new one.
    pub async fn restart(self) -> Redis {
        let Redis { mut server, .. } = self;
        let server = tokio::task::spawn_blocking(move || {
            server.restart();
            server
        })
        .await
        .expect("restarting redis-server");
        let con = server
            .client()
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        Redis { server, con }
    }

    /// How many clients are subscribed to `channel` (`PUBSUB NUMSUB`), asked
    /// on a fresh connection.
    pub async fn subscribers(&self, channel: &str) -> i64 {
        let mut con = self
            .server
            .client()
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let reply: (String, i64) = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(channel)
            .query_async(&mut con)
            .await
            .expect("PUBSUB NUMSUB");
        reply.1
    }

    /// Waits until at least `n` clients are subscribed to `channel`: how
    /// many are then.
    pub async fn subscribers_become(&self, channel: &str, n: i64, limit: Duration) -> i64 {
        let deadline = Instant::now() + limit;
        loop {
            let now = self.subscribers(channel).await;
            if now >= n || Instant::now() >= deadline {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// A lock client with default settings (30 s watchdog).
    pub async fn client(&self) -> LockClient {
        LockClient::connect(self.url()).await.expect("connect")
    }

    /// A lock client that never waits for replicas (`SyncReplicas::Off`):
    /// one poll of its `lock()` sends the acquire script itself. (A client
    /// in the default synced mode counts a primary without replicas again
    /// every second: then one poll sends only the `INFO`.)
    pub async fn unsynced_client(&self) -> LockClient {
        LockClient::builder(self.url())
            .sync_replicas(redlua_runtime::SyncReplicas::Off)
            .connect()
            .await
            .expect("connect")
    }

    /// Closes every normal client connection but the raw one's (as a
    /// server's idle timeout, a proxy or a load balancer would): how many.
    pub async fn close_client_connections(&self) -> i64 {
        redis::cmd("CLIENT")
            .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
            .query_async(&mut self.raw())
            .await
            .expect("CLIENT KILL")
    }

    /// A fault proxy in front of the server (delays, refused connections)
    /// and an unsynced lock client through it, with `response_timeout` if
    /// one is given.
    pub async fn behind_proxy(
        &self,
        response_timeout: Option<Duration>,
    ) -> (FaultProxy, LockClient) {
        let proxy = FaultProxy::start(self.server.port());
        let mut builder =
            LockClient::builder(proxy.url()).sync_replicas(redlua_runtime::SyncReplicas::Off);
        if let Some(limit) = response_timeout {
            builder = builder.response_timeout(limit);
        }
        let client = builder.connect().await.expect("connect");
        (proxy, client)
    }

    /// A lock client with a short watchdog timeout.
    pub async fn client_with_watchdog(&self, timeout: Duration) -> LockClient {
        LockClient::builder(self.url())
            .watchdog_timeout(timeout)
            .connect()
            .await
            .expect("connect")
    }

    pub fn raw(&self) -> MultiplexedConnection {
        self.con.clone()
    }

    pub async fn exists(&self, key: &str) -> bool {
        let n: i64 = self.raw().exists(key).await.unwrap();
        n == 1
    }

    pub async fn pttl(&self, key: &str) -> i64 {
        self.raw().pttl(key).await.unwrap()
    }

    pub async fn hget(&self, key: &str, field: &str) -> Option<String> {
        self.raw().hget(key, field).await.unwrap()
    }

    pub async fn hgetall(&self, key: &str) -> HashMap<String, String> {
        self.raw().hgetall(key).await.unwrap()
    }

    pub async fn del(&self, key: &str) -> bool {
        let n: i64 = self.raw().del(key).await.unwrap();
        n == 1
    }

    /// Every key in the database, sorted.
    pub async fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.raw().keys("*").await.unwrap();
        keys.sort();
        keys
    }

    /// Waits until `key` is gone; false if it is still there after `limit`.
    pub async fn gone_within(&self, key: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if !self.exists(key).await {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits `delay` (`Some`), or until `key` exists (`None`, at most 5 s):
    /// how long a test lets an abandoned acquire travel, the last of its
    /// delays being "until it took effect", however loaded the machine.
    /// Whether `key` exists then.
    pub async fn exists_after(&self, key: &str, delay: Option<Duration>) -> bool {
        match delay {
            Some(delay) => tokio::time::sleep(delay).await,
            None => {
                let deadline = Instant::now() + Duration::from_secs(5);
                while !self.exists(key).await && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
        self.exists(key).await
    }

    /// Waits until the database is empty; false if it is not after `limit`.
    pub async fn empty_within(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.keys().await.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Subscribes to `channel` (confirmed when this returns).
    pub async fn listen(&self, channel: &str) -> Listener {
        Listener::start(&self.server, channel).await
    }
}

/// Messages published on one channel, each with when it arrived, read by a
/// plain blocking subscriber on its own thread (a "foreign" client: neither
/// the lock client's pub/sub nor tokio's).
pub struct Listener {
    messages: mpsc::UnboundedReceiver<(String, Instant)>,
    stop: Arc<AtomicBool>,
}

impl Listener {
    async fn start(server: &RedisServer, channel: &str) -> Listener {
        let mut con = server.connection();
        let channel = channel.to_string();
        let (tx, messages) = mpsc::unbounded_channel();
        let (ready_tx, ready) = tokio::sync::oneshot::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut pubsub = con.as_pubsub();
            pubsub.subscribe(&channel).expect("SUBSCRIBE");
            pubsub
                .set_read_timeout(Some(Duration::from_millis(50)))
                .expect("read timeout");
            let _ = ready_tx.send(());
            while !stopped.load(Ordering::Relaxed) {
                match pubsub.get_message() {
                    Ok(msg) => {
                        let payload: String = msg.get_payload().expect("text payload");
                        if tx.send((payload, Instant::now())).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.is_timeout() => {}
                    // The server is gone (the test is over, or failed):
                    // missing messages fail the test, not this thread.
                    Err(_) => return,
                }
            }
        });
        ready.await.expect("the listener thread subscribed");
        Listener { messages, stop }
    }

    /// The next message, if one arrives within `limit`.
    pub async fn next_within(&mut self, limit: Duration) -> Option<(String, Instant)> {
        tokio::time::timeout(limit, self.messages.recv())
            .await
            .ok()
            .flatten()
    }

    /// Every message received so far, without waiting.
    pub fn drain(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok((payload, _)) = self.messages.try_recv() {
            out.push(payload);
        }
        out
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Two waiters for one wake-up, started 150 ms apart so that the first
/// waits longest (it is the one a message wakes); `acquire` makes each
/// one's wait, and the second also tells when it got through. Returns once
/// both are waiting.
pub async fn two_waiters<T, F>(
    acquire: impl Fn() -> F,
) -> (
    tokio::task::JoinHandle<T>,
    tokio::task::JoinHandle<(T, Instant)>,
)
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let first = tokio::spawn(acquire());
    tokio::time::sleep(ms(150)).await;
    let second = acquire();
    let second = tokio::spawn(async move { (second.await, Instant::now()) });
    tokio::time::sleep(ms(150)).await;
    (first, second)
}

/// Runs `fut`, failing the test if it takes longer than `limit` (a hang
/// becomes a failure naming what hung).
pub async fn within<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(value) => value,
        Err(_) => panic!("{what}: did not complete within {limit:?}"),
    }
}

/// Shorthand for milliseconds.
pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What became of an acquire that [`abandon_in_flight`] polled by hand.
pub enum InFlight<T> {
    /// It finished within a poll (its reply was there already).
    Finished(T),
    /// It was dropped with its reply unread; `took_effect`: Redis showed
    /// its hold before the drop.
    Abandoned { took_effect: bool },
}

/// Polls `acquire` by hand, so that it sends its script, and drops it
/// with the reply unread: after `delay`, or (`None`) once Redis shows its
/// hold on `key`. In that last case it is polled again until then (at most
/// 5 s): a first poll may stop before anything is sent, while the client's
/// connection is opened anew for example, and nothing else would wake it.
///
/// Polled outside tokio's cooperative budget: a task that spent its
/// budget gets `Pending` from the send itself, and a poll would then send
/// nothing (the waker is a no-op).
pub async fn abandon_in_flight<F: Future>(
    redis: &Redis,
    key: &str,
    acquire: F,
    delay: Option<Duration>,
) -> InFlight<F::Output> {
    use std::task::{Context, Poll, Waker};
    let mut acquire = std::pin::pin!(tokio::task::unconstrained(acquire));
    let mut cx = Context::from_waker(Waker::noop());
    if let Poll::Ready(output) = acquire.as_mut().poll(&mut cx) {
        return InFlight::Finished(output);
    }
    let took_effect = match delay {
        Some(delay) => redis.exists_after(key, Some(delay)).await,
        None => {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                if redis.exists(key).await {
                    break true;
                }
                if Instant::now() >= deadline {
                    break false;
                }
                if let Poll::Ready(output) = acquire.as_mut().poll(&mut cx) {
                    return InFlight::Finished(output);
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    };
    InFlight::Abandoned { took_effect }
}

/// How long the cancellation tests let an abandoned acquire travel before
/// dropping it: fixed delays, then (`None`) until it took effect
/// ([`Redis::exists_after`]), so that some abandoned acquire surely reached
/// Redis.
pub const DROP_DELAYS: [Option<Duration>; 7] = [
    Some(ms(0)),
    Some(ms(1)),
    Some(ms(2)),
    Some(ms(5)),
    Some(ms(10)),
    Some(ms(20)),
    None,
];

/// A command `MONITOR` showed: its server time in seconds since the epoch,
/// its name, and its arguments as `MONITOR` quotes them.
pub type Seen = (f64, String, String);

/// What `MONITOR` shows until [`Monitor::stop`].
pub struct Monitor {
    stream: std::net::TcpStream,
    reader: std::thread::JoinHandle<Vec<Seen>>,
}

/// The command that ends a [`Monitor`]'s reading: every command sent
/// before it has been read once it is.
const MONITOR_END: &str = "redlua-test-monitor-end";

impl Monitor {
    /// Every client command seen so far (scripts' own calls left out).
    pub async fn stop(self, redis: &Redis) -> Vec<Seen> {
        let _: String = redis::cmd("ECHO")
            .arg(MONITOR_END)
            .query_async(&mut redis.raw())
            .await
            .expect("ECHO");
        let seen = self.reader.join().expect("MONITOR reader");
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        seen
    }
}

/// Starts watching the client commands with `MONITOR`.
pub fn monitor(redis: &Redis) -> Monitor {
    use std::io::{BufRead, BufReader, Write};
    let address = redis
        .url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string();
    let mut stream = std::net::TcpStream::connect(address).expect("MONITOR connection");
    stream.write_all(b"MONITOR\r\n").expect("MONITOR");
    let mut lines = BufReader::new(stream.try_clone().expect("clone")).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("+OK"));
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in lines.map_while(Result::ok) {
            if line.contains(MONITOR_END) {
                break;
            }
            if line.contains(" lua] ") {
                continue;
            }
            let time: f64 = line
                .split(' ')
                .next()
                .and_then(|t| t.parse().ok())
                .unwrap_or(0.0);
            let command = line.split('"').nth(1).unwrap_or("?").to_ascii_uppercase();
            let arguments = line.split_once("] ").map_or("", |(_, a)| a).to_string();
            seen.push((time, command, arguments));
        }
        seen
    });
    Monitor { stream, reader }
}
