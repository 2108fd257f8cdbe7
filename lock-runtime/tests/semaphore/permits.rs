//! Taking and giving permits, bad input refused before anything is written, the blocking face.

use super::available;
use crate::common::{Redis, ms};
use redis::AsyncCommands;
use redlua_runtime::{Error, MAX_PERMITS};
use tokio::time::Instant;

/// Keys other than the semaphore itself (attempt keys, request latches).
async fn helper_keys(redis: &Redis, name: &str) -> Vec<String> {
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = con.keys("*").await.unwrap();
    keys.into_iter().filter(|k| k != name).collect()
}

#[tokio::test]
async fn permits_are_taken_only_while_enough_are_available_and_given_back_by_anyone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let sem = client.semaphore("jobs");
    assert_eq!(sem.available().await.unwrap(), 0);
    assert!(!sem.try_acquire(1).await.unwrap(), "no pool yet");
    assert!(sem.try_set_permits(3).await.unwrap());
    assert!(!sem.try_set_permits(10).await.unwrap(), "set once");
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(!sem.try_acquire(2).await.unwrap());
    assert_eq!(sem.available().await.unwrap(), 1);
    // Nobody owns permits: another client gives them back.
    assert_eq!(other.semaphore("jobs").release(2).await.unwrap(), 3);
    assert_eq!(sem.add_permits(-4).await.unwrap(), -1);
    assert!(!sem.try_acquire(1).await.unwrap());
    assert_eq!(sem.add_permits(2).await.unwrap(), 1);
    sem.set_permits(5).await.unwrap();
    assert_eq!(available(&redis, "jobs").await, Some(5));
    // The counter has no expiry (it is the pool, as in Redisson); the
    // attempt keys and request latches are gone soon after.
    assert_eq!(redis.pttl("jobs").await, -1);
    let deadline = Instant::now() + ms(2000);
    while !helper_keys(&redis, "jobs").await.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(ms(20)).await;
    }
    assert_eq!(helper_keys(&redis, "jobs").await, Vec::<String>::new());
}

#[tokio::test]
async fn bad_input_fails_before_anything_is_written() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("pool");
    for result in [
        sem.try_acquire(0).await,
        sem.try_acquire(MAX_PERMITS + 1).await,
        sem.try_acquire_for(0, ms(10)).await,
    ] {
        assert!(
            matches!(result, Err(Error::InvalidPermits { .. })),
            "{result:?}"
        );
    }
    assert!(matches!(
        sem.acquire(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.release(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.add_permits(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.set_permits(MAX_PERMITS + 1).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        client.semaphore("").try_acquire(1).await,
        Err(Error::InvalidName { .. })
    ));
    assert_eq!(redis.keys().await, Vec::<String>::new());

    // Keys of another type, or a string that is not a count, are left alone.
    let _: () = redis.raw().hset("a-hash", "f", "1").await.unwrap();
    let _: () = redis.raw().set("a-word", "many").await.unwrap();
    for name in ["a-hash", "a-word"] {
        let sem = client.semaphore(name);
        assert!(matches!(
            sem.try_acquire(1).await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(sem.release(1).await, Err(Error::WrongType { .. })));
        assert!(matches!(
            sem.set_permits(1).await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            sem.available().await,
            Err(Error::WrongType { .. })
        ));
    }
    assert_eq!(redis.hgetall("a-hash").await.len(), 1);
    let word: String = redis.raw().get("a-word").await.unwrap();
    assert_eq!(word, "many");
}

/// A change sent again with its request latch answers what its first copy
/// answered, changed or not, and changes nothing more.
#[tokio::test]
async fn a_change_sent_again_answers_its_first_reply() {
    let redis = Redis::start().await;
    let script = redis::Script::new(include_str!("../../scripts/semaphore_change.lua"));
    let change = async |request: &str, mode: &str, permits: i64| -> (i64, i64) {
        script
            .key("again")
            .key("redisson_sc:{again}")
            .key(request)
            .key("{again}:timeout")
            .arg(mode)
            .arg(permits)
            .arg(30_000)
            .arg("publish")
            .invoke_async(&mut redis.raw())
            .await
            .unwrap()
    };
    for _ in 0..2 {
        assert_eq!(change("{again}:set", "try_set", 3).await, (1, 3));
        assert_eq!(change("{again}:set_again", "try_set", 5).await, (0, 3));
        assert_eq!(change("{again}:add", "add", -4).await, (1, -1));
    }
    assert_eq!(available(&redis, "again").await, Some(-1));
}

#[tokio::test]
async fn try_acquire_for_gives_up_at_its_deadline_and_takes_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("full");
    sem.set_permits(1).await.unwrap();
    let started = Instant::now();
    assert!(!sem.try_acquire_for(2, ms(300)).await.unwrap());
    let waited = started.elapsed();
    assert!(waited >= ms(300) && waited < ms(1500), "{waited:?}");
    assert_eq!(sem.available().await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_face_takes_waits_and_gives_back() {
    let redis = Redis::start().await;
    let url = redis.url();
    let waited = tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::connect(url).unwrap();
        let sem = client.semaphore("threads");
        assert!(sem.try_set_permits(1).unwrap());
        sem.acquire(1).unwrap();
        assert!(!sem.try_acquire_for(1, ms(200)).unwrap());
        let waiter = std::thread::spawn({
            let sem = sem.clone();
            move || {
                sem.acquire(1).unwrap();
                std::time::Instant::now()
            }
        });
        std::thread::sleep(ms(300));
        let released = std::time::Instant::now();
        assert_eq!(sem.release(1).unwrap(), 1);
        let got = waiter.join().unwrap();
        assert_eq!(sem.available().unwrap(), 0);
        assert!(matches!(
            sem.try_acquire(0),
            Err(Error::InvalidPermits { .. })
        ));
        got - released
    })
    .await
    .unwrap();
    assert!(waited < ms(1000), "woken after {waited:?}");
}
