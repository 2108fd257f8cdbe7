//! The blocking API, from plain `#[test]` functions with no tokio runtime of
//! their own, against a private redis-server each: acquire and release,
//! contention between threads, timeouts, read/write locks, a holder that
//! stays in blocking code for several lease periods, drops, and a client
//! dropped before its guards.

use redis::Commands;
use redlua_runtime::Error;
use redlua_runtime::blocking::LockClient;
use redlua_test_support::RedisServer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

fn client(server: &RedisServer) -> LockClient {
    LockClient::connect(server.url()).expect("connect")
}

fn client_with_watchdog(server: &RedisServer, timeout: Duration) -> LockClient {
    LockClient::builder(server.url())
        .watchdog_timeout(timeout)
        .connect()
        .expect("connect")
}

fn exists(con: &mut redis::Connection, key: &str) -> bool {
    con.exists(key).unwrap()
}

/// The number of connections the server has, this one included.
fn connections(con: &mut redis::Connection) -> usize {
    let list: String = redis::cmd("CLIENT").arg("LIST").query(con).unwrap();
    list.lines().count()
}

#[test]
fn lock_reenter_and_unlock() {
    let server = RedisServer::start();
    let mut raw = server.connection();
    let client = client(&server);
    let lock = client.lock("blocking:plain");
    assert!(!lock.is_locked().unwrap());

    let guard = lock.lock().unwrap();
    assert_eq!(guard.name(), "blocking:plain");
    assert_eq!(guard.lease(), None);
    assert!(!guard.is_lost());
    let fields: Vec<String> = raw.hkeys("blocking:plain").unwrap();
    assert_eq!(fields, [guard.owner().to_string()]);
    assert!(guard.owner().to_string().starts_with(client.id()));
    assert!(lock.is_locked().unwrap());
    let ttl = lock.remaining_ttl().unwrap().expect("a lease");
    assert!(ttl > Duration::from_secs(25) && ttl <= Duration::from_secs(30));

    let inner = guard.reenter().unwrap();
    assert_eq!(inner.token(), guard.token());
    assert_eq!(lock.hold_count(guard.owner()).unwrap(), 2);
    let third = lock.reenter(guard.owner()).unwrap();
    assert_eq!(lock.hold_count(guard.owner()).unwrap(), 3);
    third.unlock().unwrap();
    inner.unlock().unwrap();
    assert_eq!(lock.hold_count(guard.owner()).unwrap(), 1);
    let info = client.inspect("blocking:plain").unwrap();
    assert_eq!(info.holders.len(), 1);
    assert_eq!(info.holders[0].count, 1);

    guard.unlock().unwrap();
    assert!(!exists(&mut raw, "blocking:plain"));
    assert!(!lock.is_locked().unwrap());

    // A fixed lease: no watchdog, Redis frees it.
    let leased = lock.lock_with_lease(Duration::from_millis(300)).unwrap();
    assert_eq!(leased.lease(), Some(Duration::from_millis(300)));
    thread::sleep(Duration::from_millis(400));
    assert!(leased.is_lost());
    assert!(!exists(&mut raw, "blocking:plain"));
    assert!(matches!(leased.unlock(), Err(Error::LockLost { .. })));

    // Bad input is the async API's typed error.
    assert!(matches!(
        client.lock("a{b").lock(),
        Err(Error::InvalidName { .. })
    ));
    assert!(matches!(
        lock.lock_with_lease(Duration::ZERO),
        Err(Error::Config(_))
    ));
}

#[test]
fn threads_contending_never_hold_together() {
    let server = RedisServer::start();
    let clients = [client(&server), client(&server)];
    let inside = Arc::new(AtomicUsize::new(0));
    let entered = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));

    // The observer: Redis never shows two owners of the lock.
    let observer = {
        let mut raw = server.connection();
        let stop = stop.clone();
        thread::spawn(move || {
            let mut most = 0;
            while !stop.load(Ordering::SeqCst) {
                let owners: usize = raw.hlen("blocking:contended").unwrap();
                most = most.max(owners);
                thread::sleep(Duration::from_millis(1));
            }
            most
        })
    };
    let workers: Vec<_> = (0..6)
        .map(|n| {
            let lock = clients[n % 2].lock("blocking:contended");
            let (inside, entered) = (inside.clone(), entered.clone());
            thread::spawn(move || {
                for _ in 0..8 {
                    let guard = lock.lock().unwrap();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    entered.fetch_add(1, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(5));
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.unlock().unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker failed");
    }
    stop.store(true, Ordering::SeqCst);
    let most = observer.join().unwrap();
    assert_eq!(entered.load(Ordering::SeqCst), 48);
    assert_eq!(most, 1, "Redis showed {most} owners at once");
    assert!(!exists(&mut server.connection(), "blocking:contended"));
}

#[test]
fn try_lock_for_gives_up_in_time_and_leaves_nothing() {
    let server = RedisServer::start();
    let holder = client(&server);
    let other = client(&server);
    let guard = holder.lock("blocking:busy").lock().unwrap();
    let lock = other.lock("blocking:busy");

    assert!(lock.try_lock().unwrap().is_none());
    let started = Instant::now();
    let got = lock.try_lock_for(Duration::from_millis(400), None).unwrap();
    let waited = started.elapsed();
    assert!(got.is_none());
    assert!(waited >= Duration::from_millis(400), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    let info = lock.inspect().unwrap();
    assert_eq!(info.holders.len(), 1);
    assert_eq!(info.holders[0].owner, guard.owner().to_string());

    // A waiter is woken by the release, long before its time is up.
    let waiter = thread::spawn(move || {
        let started = Instant::now();
        let got = lock.try_lock_for(Duration::from_secs(20), None).unwrap();
        (got.map(|g| g.unlock()), started.elapsed())
    });
    thread::sleep(Duration::from_millis(300));
    guard.unlock().unwrap();
    let (got, waited) = waiter.join().unwrap();
    assert!(matches!(got, Some(Ok(()))));
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn read_write_locks() {
    let server = RedisServer::start();
    let client = client(&server);
    let rw = client.read_write_lock("blocking:rw");
    assert_eq!(rw.name(), "blocking:rw");
    let reader = rw.read().lock().unwrap();
    let second = rw.read().lock().unwrap();
    assert!(rw.write().try_lock().unwrap().is_none());
    let writer = {
        let write = rw.write();
        thread::spawn(move || write.lock())
    };
    thread::sleep(Duration::from_millis(200));
    assert!(!writer.is_finished(), "a writer got in past two readers");
    reader.unlock().unwrap();
    second.unlock().unwrap();
    let writing = writer.join().unwrap().unwrap();
    assert!(rw.read().try_lock().unwrap().is_none());
    // Downgrade: the writer takes a read hold, then lets the write go.
    let reading = rw.read().reenter(writing.owner()).unwrap();
    writing.unlock().unwrap();
    let other_reader = rw.read().try_lock().unwrap().expect("readers share");
    other_reader.unlock().unwrap();
    reading.unlock().unwrap();
    assert!(!rw.write().is_locked().unwrap());
}

/// The point of the blocking client: its own thread renews the lease while
/// the holder's thread is stuck in blocking code for several lease periods.
#[test]
fn a_holder_in_blocking_code_keeps_the_lock_for_several_leases() {
    let server = RedisServer::start();
    let holder = client_with_watchdog(&server, Duration::from_secs(1));
    let other = client_with_watchdog(&server, Duration::from_secs(1));
    let guard = holder.lock("blocking:long").lock().unwrap();
    let first_valid_until = guard.valid_until();

    let done = Arc::new(AtomicBool::new(false));
    let contender = {
        let lock = other.lock("blocking:long");
        let mut raw = server.connection();
        let done = done.clone();
        thread::spawn(move || {
            let (mut tries, mut lowest_ttl) = (0, i64::MAX);
            while !done.load(Ordering::SeqCst) {
                assert!(lock.try_lock().unwrap().is_none(), "taken from its holder");
                let ttl: i64 = raw.pttl("blocking:long").unwrap();
                lowest_ttl = lowest_ttl.min(ttl);
                tries += 1;
                thread::sleep(Duration::from_millis(50));
            }
            (tries, lowest_ttl)
        })
    };
    // 3.5 lease periods in blocking code, no call into the client.
    thread::sleep(Duration::from_millis(3_500));
    done.store(true, Ordering::SeqCst);
    let (tries, lowest_ttl) = contender.join().unwrap();
    assert!(tries >= 20, "only {tries} tries");
    // Renewed every third of a second: never near expiry.
    assert!(lowest_ttl > 200, "the lease ran down to {lowest_ttl} ms");
    assert!(!guard.is_lost());
    assert!(guard.valid_until() >= first_valid_until + Duration::from_millis(2_500));
    guard.unlock().unwrap();
}

#[test]
fn a_dropped_guard_is_released_when_the_drop_returns() {
    let server = RedisServer::start();
    let mut raw = server.connection();
    let client = client(&server);
    let other = client_with_watchdog(&server, Duration::from_secs(5));
    let guard = client.lock("blocking:dropped").lock().unwrap();
    assert!(exists(&mut raw, "blocking:dropped"));
    drop(guard);
    assert!(!exists(&mut raw, "blocking:dropped"));
    let next = other
        .lock("blocking:dropped")
        .try_lock()
        .unwrap()
        .expect("free after the drop");
    // A guard dropped on another thread, too.
    thread::spawn(move || drop(next)).join().unwrap();
    assert!(!exists(&mut raw, "blocking:dropped"));
}

#[test]
fn guards_outlive_their_client_and_the_thread_ends_after_the_last() {
    let server = RedisServer::start();
    let mut raw = server.connection();
    let client = client_with_watchdog(&server, Duration::from_secs(1));
    let lock = client.lock("blocking:orphan");
    let guard = lock.lock().unwrap();
    let kept = client.lock("blocking:kept").lock().unwrap();
    // A waiter made the client open its pub/sub connection too.
    assert!(
        client
            .lock("blocking:orphan")
            .try_lock_for(Duration::from_millis(200), None)
            .unwrap()
            .is_none()
    );
    assert!(connections(&mut raw) >= 3);
    drop(lock);
    drop(client);

    // Renewed past two lease periods with no client handle left.
    thread::sleep(Duration::from_millis(2_500));
    assert!(!guard.is_lost());
    let ttl: i64 = raw.pttl("blocking:orphan").unwrap();
    assert!(ttl > 0, "ttl {ttl}");
    guard.unlock().unwrap();
    assert!(!exists(&mut raw, "blocking:orphan"));
    assert!(
        connections(&mut raw) >= 2,
        "the last guard keeps the client"
    );

    // The last guard is dropped: its release is done, then the thread ends
    // and closes the client's connections.
    drop(kept);
    assert!(!exists(&mut raw, "blocking:kept"));
    let deadline = Instant::now() + Duration::from_secs(5);
    while connections(&mut raw) > 1 {
        assert!(
            Instant::now() < deadline,
            "the client's connections are still open"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_broken_lock_is_seen_lost() {
    let server = RedisServer::start();
    let holder = client_with_watchdog(&server, Duration::from_millis(600));
    let breaker = client(&server);
    let guard = holder.lock("blocking:broken").lock().unwrap();
    assert!(breaker.lock("blocking:broken").force_unlock().unwrap());
    // The next renewal round (every 200 ms) finds it gone.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !guard.is_lost() {
        assert!(Instant::now() < deadline, "the loss was never noticed");
        thread::sleep(Duration::from_millis(20));
    }
    assert!(matches!(guard.unlock(), Err(Error::LockLost { .. })));
}

#[test]
fn works_from_inside_an_async_runtime_and_fails_to_connect_in_time() {
    let server = RedisServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // It blocks the runtime's thread, and does not panic.
    runtime.block_on(async move {
        let client = LockClient::connect(url).unwrap();
        let guard = client.lock("blocking:in-async").lock().unwrap();
        guard.unlock().unwrap();
    });

    // Nobody listens on a port taken and closed again.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let refused = LockClient::builder(format!("redis://127.0.0.1:{port}/"))
        .connect_timeout(Duration::from_millis(500))
        .connect();
    assert!(matches!(refused, Err(Error::Connect { .. })), "{refused:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(matches!(
        LockClient::builder(server.url())
            .watchdog_timeout(Duration::from_millis(1))
            .connect(),
        Err(Error::Config(_))
    ));
}

/// The contrast, as the async client documents it: on a current-thread
/// runtime that blocks, no task renews the lease, and the guard's lease
/// clock says so without any task running.
#[test]
fn the_async_client_on_a_blocked_current_thread_runtime_loses_its_lease() {
    let server = RedisServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut raw = server.connection();
    runtime.block_on(async move {
        let client = redlua_runtime::LockClient::builder(url)
            .watchdog_timeout(Duration::from_millis(500))
            .connect()
            .await
            .unwrap();
        let guard = client.lock("blocking:starved").lock().await.unwrap();
        let valid_until = guard.valid_until();
        // Blocks the runtime's only thread for three lease periods.
        thread::sleep(Duration::from_millis(1_500));
        assert!(!exists(&mut raw, "blocking:starved"), "renewed anyway");
        assert!(guard.is_lost());
        assert_eq!(guard.valid_until(), valid_until);
        assert!(matches!(guard.unlock().await, Err(Error::LockLost { .. })));
    });
}

#[test]
fn fair_locks_serve_blocking_waiters_in_order() {
    let server = RedisServer::start();
    let holder = client(&server);
    let guard = holder.fair_lock("blocking:fair").lock().unwrap();
    // A fair lock never lets try_lock jump a queue, and try_lock_for that
    // gives up leaves it.
    assert!(
        holder
            .fair_lock("blocking:fair")
            .try_lock()
            .unwrap()
            .is_none()
    );
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    let mut con = server.connection();
    for i in 0..3 {
        let client = client(&server);
        let order = order.clone();
        waiters.push(thread::spawn(move || {
            let guard = client.fair_lock("blocking:fair").lock().unwrap();
            order.lock().unwrap().push(i);
            guard.unlock().unwrap();
        }));
        let deadline = Instant::now() + Duration::from_secs(10);
        while con
            .llen::<_, usize>("redisson_lock_queue:{blocking:fair}")
            .unwrap()
            != i + 1
        {
            assert!(Instant::now() < deadline, "waiter {i} did not queue");
            thread::sleep(Duration::from_millis(5));
        }
    }
    let timed_out = holder
        .fair_lock("blocking:fair")
        .try_lock_for(Duration::from_millis(100), None)
        .unwrap();
    assert!(timed_out.is_none());
    assert_eq!(
        con.llen::<_, usize>("redisson_lock_queue:{blocking:fair}")
            .unwrap(),
        3
    );
    guard.unlock().unwrap();
    for waiter in waiters {
        waiter.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
}
