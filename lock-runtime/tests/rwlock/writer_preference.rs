//! Writer preference: a writer in a stream of readers, starvation without it, the lost signal.

use super::{only_token, settled_keys, writer_mark};
use crate::common::{Redis, ms, within};
use redlua_runtime::flavor::Read;
use redlua_runtime::{Lock, LockClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::time::Instant;

/// What happened around a writer that arrived in a stream of readers.
struct Stream {
    writer_started: Instant,
    writer_entered: Instant,
    writer_left: Instant,
    stream_stopped: Instant,
    readers: Vec<(Instant, Instant)>,
}

/// Readers arrive every 40 ms and each reads 300 ms (always several inside
/// at once); a writer arrives after 300 ms and writes 50 ms; no new reader
/// arrives after 1.5 s.
async fn writer_in_a_reader_stream(redis: &Redis, name: &str, prefer: bool) -> Stream {
    let clients = [redis.client().await, redis.client().await];
    let writer_client = redis.client().await;
    let handle = |c: &LockClient| {
        let rw = c.read_write_lock(name);
        if prefer { rw.writer_preferring() } else { rw }
    };
    let reads: Vec<Lock<Read>> = clients.iter().map(|c| handle(c).read()).collect();
    let write = handle(&writer_client).write();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let began = Instant::now();
    let stream = tokio::spawn(async move {
        let mut readers = Vec::new();
        let mut i = 0;
        while !stopped.load(Ordering::SeqCst) {
            let read = reads[i % reads.len()].clone();
            i += 1;
            readers.push(tokio::spawn(async move {
                let guard = read.lock().await.expect("read lock()");
                let entered = Instant::now();
                tokio::time::sleep(ms(300)).await;
                let left = Instant::now();
                guard.unlock().await.expect("read unlock()");
                (entered, left)
            }));
            tokio::time::sleep(ms(40)).await;
        }
        readers
    });
    tokio::time::sleep_until(began + ms(300)).await;
    let writer_started = Instant::now();
    let writer = tokio::spawn(async move {
        let guard = write.lock().await.expect("write lock()");
        let entered = Instant::now();
        tokio::time::sleep(ms(50)).await;
        let left = Instant::now();
        guard.unlock().await.expect("write unlock()");
        (entered, left)
    });
    tokio::time::sleep_until(began + ms(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let stream_stopped = Instant::now();
    let readers = within(ms(10_000), "the reader stream", async {
        let mut intervals = Vec::new();
        for reader in stream.await.expect("stream task") {
            intervals.push(reader.await.expect("reader task"));
        }
        intervals
    })
    .await;
    let (writer_entered, writer_left) = within(ms(10_000), "the writer", writer)
        .await
        .expect("writer task");
    assert_eq!(
        settled_keys(redis).await,
        only_token(name),
        "{name}: left held"
    );
    Stream {
        writer_started,
        writer_entered,
        writer_left,
        stream_stopped,
        readers,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_preference_bounds_a_writers_wait() {
    let redis = Redis::start().await;
    let s = writer_in_a_reader_stream(&redis, "preferring", true).await;
    let waited = s.writer_entered.duration_since(s.writer_started);
    assert!(
        waited < ms(1000),
        "the writer waited {waited:?} in a stream of readers, despite the preference"
    );
    assert!(
        s.writer_entered < s.stream_stopped,
        "the stream stopped first"
    );
    assert!(s.readers.len() >= 20, "only {} readers", s.readers.len());
    for &(entered, left) in &s.readers {
        assert!(
            left <= s.writer_entered || entered >= s.writer_left,
            "a reader was inside with the writer"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_starve_a_writer_without_preference() {
    let redis = Redis::start().await;
    let s = writer_in_a_reader_stream(&redis, "starving", false).await;
    let waited = s.writer_entered.duration_since(s.writer_started);
    assert!(
        s.writer_entered > s.stream_stopped && waited > ms(1000),
        "the writer got in after {waited:?}, {:?} before the reader stream stopped \
         (expected starvation)",
        s.stream_stopped.saturating_duration_since(s.writer_entered)
    );
    let after_stop = s.writer_entered.duration_since(s.stream_stopped);
    assert!(
        after_stop < ms(2000),
        "the writer entered {after_stop:?} after the stream stopped"
    );
    for &(entered, left) in &s.readers {
        assert!(
            left <= s.writer_entered || entered >= s.writer_left,
            "a reader was inside with the writer"
        );
    }
}

/// A writer-preferring writer that stops waiting — `try_lock` refused (it
/// leaves no mark), `try_lock_for` timed out, `lock()` future dropped —
/// takes its `{name}:redlua_writer_waiting` mark away at once (not when it
/// expires, 3 s later): new readers need not wait behind a writer that is
/// gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_gives_up_leaves_no_mark_behind() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "gave-up";
    let rw = client.read_write_lock(name).writer_preferring();
    for how in ["try_lock()", "try_lock_for()", "a dropped lock() future"] {
        let r = rw.read().lock().await.unwrap();
        let write = rw.write();
        match how {
            "try_lock()" => {
                assert!(write.try_lock().await.unwrap().is_none());
                assert!(
                    !redis.exists(&writer_mark(name)).await,
                    "try_lock() left a mark"
                );
            }
            "try_lock_for()" => {
                assert!(write.try_lock_for(ms(200), None).await.unwrap().is_none())
            }
            _ => {
                let waiting = tokio::time::timeout(ms(200), write.lock()).await;
                assert!(waiting.is_err(), "a writer beside a reader");
            }
        }
        r.unlock().await.unwrap();
        assert!(
            redis.gone_within(&writer_mark(name), ms(1000)).await,
            "after {how}: the writer's mark is still there ({} ms to live)",
            redis.pttl(&writer_mark(name)).await
        );
        // Nobody writes or waits to write: a new reader gets in at once.
        let guard = rw
            .read()
            .try_lock()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("after {how}: a reader of a free lock was refused"));
        guard.unlock().await.unwrap();
        assert_eq!(settled_keys(&redis).await, only_token(name), "after {how}");
    }
}
