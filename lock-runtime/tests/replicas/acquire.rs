//! Acquires wait for the replicas; one they did not acknowledge is undone and fails closed.

use super::{Paused, con, deployment, exists, hgetall, ms, synced_client, unsynced_client, within};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, SyncReplicas};
use std::collections::HashMap;
use std::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_acquires_and_releases_wait_for_every_connected_replica() {
    let (primary, replicas) = deployment(2).await;
    // Redisson's defaults: the connected replicas, 1 s.
    let client = LockClient::connect(primary.url()).await.unwrap();
    let guard = client.lock("orders").lock().await.unwrap();
    // The acquire, and the token counter it raised, are on both replicas
    // by the time the guard exists: no sleeping here.
    for replica in &replicas {
        assert_eq!(
            hgetall(replica, "orders").await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())])
        );
        let token: u64 = con(replica)
            .await
            .get("redisson_lock_token:{orders}")
            .await
            .unwrap();
        assert_eq!(token, guard.token());
    }
    guard.unlock().await.unwrap();
    for replica in &replicas {
        assert!(!exists(replica, "orders").await);
    }
    // A flushed script cache (a restart, a new node): the pipeline meets
    // NOSCRIPT, loads the script and is sent again, once.
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut con(&primary).await)
        .await
        .unwrap();
    let guard = client.lock("orders").lock().await.unwrap();
    for replica in &replicas {
        assert_eq!(
            hgetall(replica, "orders").await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())])
        );
    }
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_a_replica_did_not_acknowledge_is_undone_and_fails_closed() {
    let (primary, replicas) = deployment(1).await;
    let default = LockClient::connect(primary.url()).await.unwrap();
    let quick = synced_client(&primary, ms(300)).await;
    let unsynced = unsynced_client(&primary).await;
    let held = quick.lock("held").lock().await.unwrap();

    let paused = Paused::new(&replicas[0]);
    // The default sync timeout is 1 s; then the acquire is undone.
    let started = Instant::now();
    let err = within(ms(5000), "try_lock", default.lock("jobs").try_lock())
        .await
        .unwrap_err();
    let failed_after = started.elapsed();
    assert!(
        matches!(&err, Error::NotReplicated { name, acked: 0, wanted: 1 } if name == "jobs"),
        "{err:?}"
    );
    assert!(
        ms(1000) <= failed_after && failed_after < ms(2500),
        "failed after {failed_after:?}"
    );
    // Undone before the error was returned: nothing is held.
    assert!(!exists(&primary, "jobs").await);
    // A waiting acquire fails the same way (it does not wait on).
    let err = within(ms(5000), "lock", quick.lock("jobs").lock())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert!(!exists(&primary, "jobs").await);
    // A re-entry too: the owner keeps its one hold, and no other.
    let err = held.reenter().await.unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert_eq!(
        hgetall(&primary, "held").await,
        HashMap::from([(held.owner().to_string(), "1".to_string())])
    );
    // Without synced mode the same acquire is granted at once: the lock is
    // free, and nothing of the failed ones stayed.
    let started = Instant::now();
    let unreplicated = unsynced.lock("jobs").try_lock().await.unwrap().unwrap();
    assert!(started.elapsed() < ms(500));
    let unreplicated_token = unreplicated.token();
    unreplicated.unlock().await.unwrap();

    drop(paused);
    let guard = quick.lock("jobs").try_lock().await.unwrap().unwrap();
    assert!(guard.token() > unreplicated_token, "tokens increase");
    assert_eq!(
        hgetall(&replicas[0], "jobs").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    held.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fair_waiter_whose_acquire_is_not_acknowledged_undoes_it_and_leaves_the_queue() {
    let (primary, replicas) = deployment(1).await;
    let quick = synced_client(&primary, ms(300)).await;
    let unsynced = unsynced_client(&primary).await;
    let held = unsynced.fair_lock("fair-jobs").lock().await.unwrap();
    let lock = quick.fair_lock("fair-jobs");
    let waiter = tokio::spawn(async move { lock.lock().await });
    let mut con = primary
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    within(ms(5000), "the waiter queued", async {
        while con
            .llen::<_, usize>("redisson_lock_queue:{fair-jobs}")
            .await
            .unwrap()
            != 1
        {
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
    let paused = Paused::new(&replicas[0]);
    held.unlock().await.unwrap();
    // Woken, it takes the lock; the replica does not acknowledge: undone,
    // and out of the queue, before the error is returned.
    let err = within(ms(5000), "the fair waiter", waiter)
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert!(!exists(&primary, "fair-jobs").await);
    assert!(!exists(&primary, "redisson_lock_queue:{fair-jobs}").await);
    assert!(!exists(&primary, "redisson_lock_timeout:{fair-jobs}").await);
    drop(paused);
    let guard = quick
        .fair_lock("fair-jobs")
        .try_lock()
        .await
        .unwrap()
        .unwrap();
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_operation_queued_behind_another_wait_still_gets_its_answer() {
    let (primary, replicas) = deployment(1).await;
    // Two WAITs of 300 ms in a row take longer than the response timeout,
    // not longer than a synced pipeline's deadline (500 + 300 ms).
    let client = LockClient::builder(primary.url())
        .response_timeout(ms(500))
        .sync_timeout(ms(300))
        .connect()
        .await
        .expect("connect");
    let held = client.lock("queued:held").lock().await.unwrap();
    let new = client.lock("queued:new");

    let paused = Paused::new(&replicas[0]);
    let started = Instant::now();
    // One connection: Redis runs the second pipeline only after the
    // first one's WAIT gave up, so one of them waits for both.
    let (acquired, released) = within(ms(5000), "an acquire and a release", async {
        tokio::join!(new.try_lock(), held.unlock())
    })
    .await;
    let took = started.elapsed();
    assert!(
        matches!(&acquired, Err(Error::NotReplicated { name, acked: 0, wanted: 1 }) if name == "queued:new"),
        "{:?}",
        acquired.map(|g| g.is_some())
    );
    assert!(
        matches!(&released, Err(Error::ReleaseNotReplicated { name, acked: 0, wanted: 1 }) if name == "queued:held"),
        "{released:?}"
    );
    assert!(
        ms(600) <= took && took < ms(1500),
        "the two WAITs ran one after the other: {took:?}"
    );
    // Both ran on the primary: the acquire was undone, the release done.
    assert!(!exists(&primary, "queued:new").await);
    assert!(!exists(&primary, "queued:held").await);
    drop(paused);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_acknowledgement_of_two_is_not_enough() {
    let (primary, replicas) = deployment(2).await;
    // Room for each replica that is not paused to acknowledge, however
    // busy the machine: a count below the one expected is then the
    // paused replica's, not a slow one's.
    let room = ms(2000);
    let connected = synced_client(&primary, room).await;
    let at_least_one = LockClient::builder(primary.url())
        .sync_replicas(SyncReplicas::AtLeast(1))
        .sync_timeout(room)
        .connect()
        .await
        .unwrap();
    let at_least_three = LockClient::builder(primary.url())
        .sync_replicas(SyncReplicas::AtLeast(3))
        .sync_timeout(room)
        .connect()
        .await
        .unwrap();
    // More than there are: never enough.
    let err = at_least_three.lock("x").try_lock().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotReplicated {
                acked: 2,
                wanted: 3,
                ..
            }
        ),
        "{err:?}"
    );

    let paused = Paused::new(&replicas[1]);
    // Redisson fails only when no replica acknowledged; this fails when
    // any connected one did not.
    let err = connected.lock("x").try_lock().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotReplicated {
                acked: 1,
                wanted: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!exists(&primary, "x").await);
    // Asked for one, one is enough.
    let guard = at_least_one.lock("x").try_lock().await.unwrap().unwrap();
    assert_eq!(
        hgetall(&replicas[0], "x").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    drop(paused);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_semaphore_acquire_a_replica_did_not_acknowledge_is_given_back() {
    let (primary, replicas) = deployment(1).await;
    let client = synced_client(&primary, ms(300)).await;
    let sem = client.semaphore("replicated");
    sem.set_permits(2).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    // On the replica by the time the call returned.
    let on_replica: String = con(&replicas[0]).await.get("replicated").await.unwrap();
    assert_eq!(on_replica, "1");

    let paused = Paused::new(&replicas[0]);
    let result = within(ms(5000), "try_acquire", sem.try_acquire(1)).await;
    assert!(
        matches!(&result, Err(Error::NotReplicated { name, acked: 0, wanted: 1 }) if name == "replicated"),
        "{result:?}"
    );
    // Given back before the error was returned.
    let left: String = con(&primary).await.get("replicated").await.unwrap();
    assert_eq!(left, "1");
    // A leased permit: the same, its id gone from the set too.
    let leased = client.leased_semaphore("leased-replicated");
    let set = within(ms(5000), "set_permits", leased.set_permits(1)).await;
    assert!(
        matches!(set, Err(Error::ReleaseNotReplicated { .. })),
        "{set:?}"
    );
    let result = within(ms(5000), "leased try_acquire", leased.try_acquire(1)).await;
    assert!(
        matches!(&result, Err(Error::NotReplicated { .. })),
        "{result:?}"
    );
    let taken: i64 = con(&primary)
        .await
        .zcard("{leased-replicated}:timeout")
        .await
        .unwrap();
    assert_eq!(taken, 0);
    drop(paused);

    assert!(sem.try_acquire(1).await.unwrap());
    assert_eq!(sem.available().await.unwrap(), 0);
    let permit = leased.try_acquire(1).await.unwrap().expect("the permit");
    let on_replica: i64 = con(&replicas[0])
        .await
        .zcard("{leased-replicated}:timeout")
        .await
        .unwrap();
    assert_eq!(
        on_replica, 1,
        "on the replica by the time the call returned"
    );
    permit.release().await.unwrap();
}
