//! Dropping a `FaultProxy` ends all its threads. Alone in its test binary,
//! so that no other test's threads are counted.

use std::time::{Duration, Instant};

use redlua_test_support::{FaultProxy, RedisServer};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task lists this process's threads")
        .count()
}

#[test]
fn drop_ends_every_thread() {
    let server = RedisServer::start();
    let before = threads();
    let proxy = FaultProxy::start(server.port());
    let client = proxy.client();
    let mut cons: Vec<redis::Connection> = (0..3)
        .map(|_| {
            client
                .get_connection_with_timeout(Duration::from_secs(2))
                .unwrap()
        })
        .collect();
    for con in &mut cons {
        let _: String = redis::cmd("PING").query(con).unwrap();
    }
    // The accept thread, and per connection a serving thread and a pump.
    assert_eq!(threads(), before + 1 + 2 * cons.len());
    proxy.stall();
    proxy.set_delay(Duration::from_millis(50));
    drop(proxy);
    // Joined threads may linger in /proc for a moment after their exit.
    let deadline = Instant::now() + Duration::from_secs(1);
    while threads() != before {
        assert!(
            Instant::now() < deadline,
            "{} threads, {before} before the proxy",
            threads()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
