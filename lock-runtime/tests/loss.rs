//! A hold taken away while held is noticed by its guard at once: force
//! unlocked (by this library, as `lockctl unlock --force` does, or by a
//! Java client's `forceUnlock`), or its key deleted or overwritten by
//! anyone, without a message. And nothing else is a loss: the holder's own
//! re-entries and releases, other readers, renewals.
//!
//! Against one redis-server started once for this binary; each test uses
//! lock names of its own. The holders' watchdog timeout is 30 s (the first
//! renewal comes after 10 s): a guard that says lost within the 1 s these
//! tests allow learnt it from the loss watch, not from a renewal.

mod common;

use common::within;
use redis::aio::MultiplexedConnection;
use redlua_runtime::{LockClient, LockGuard, PermitGuard};
use redlua_test_support::RedisServer;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

/// Java's `RLock.forceUnlock`, as Redisson sends it (see the fixture).
const JAVA_FORCE_UNLOCK: &str = include_str!("redisson/force_unlock.lua");

/// The bound the tests allow for noticing a loss (the promise is about
/// 100 ms; the margin is for a loaded machine).
const NOTICED: Duration = Duration::from_secs(1);

/// Longer than the loss watch's delay before a new hold is first read:
/// the hold is tracked by then.
const SETTLED: Duration = Duration::from_millis(200);

static SERVER: OnceLock<&'static RedisServer> = OnceLock::new();

/// The shared server, started by the first test that needs it.
async fn server() -> &'static RedisServer {
    tokio::task::spawn_blocking(|| *SERVER.get_or_init(|| RedisServer::start().until_exit()))
        .await
        .expect("starting redis-server")
}

/// A lock client with default settings (30 s watchdog).
async fn client() -> LockClient {
    LockClient::connect(server().await.url())
        .await
        .expect("connect")
}

/// A plain connection: another party, outside the library.
async fn raw() -> MultiplexedConnection {
    server()
        .await
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a raw connection")
}

/// The kinds of hold.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Lock,
    Fair,
    Read,
    Write,
}

const KINDS: [Kind; 4] = [Kind::Lock, Kind::Fair, Kind::Read, Kind::Write];

impl Kind {
    async fn acquire(self, client: &LockClient, name: &str) -> LockGuard {
        let guard = match self {
            Kind::Lock => client.lock(name).lock().await,
            Kind::Fair => client.fair_lock(name).lock().await,
            Kind::Read => client.read_write_lock(name).read().lock().await,
            Kind::Write => client.read_write_lock(name).write().lock().await,
        };
        guard.unwrap_or_else(|e| panic!("{self:?} {name}: {e}"))
    }

    async fn force_unlock(self, client: &LockClient, name: &str) -> bool {
        let broken = match self {
            Kind::Lock => client.lock(name).force_unlock().await,
            Kind::Fair => client.fair_lock(name).force_unlock().await,
            Kind::Read => client.read_write_lock(name).read().force_unlock().await,
            Kind::Write => client.read_write_lock(name).write().force_unlock().await,
        };
        broken.unwrap()
    }
}

/// How long `guard` took to say lost; fails after [`NOTICED`].
async fn lost_after(guard: &LockGuard, what: &str) -> Duration {
    let started = Instant::now();
    within(NOTICED, what, guard.lost()).await;
    assert!(guard.is_lost(), "{what}");
    started.elapsed()
}

/// Whether `guard`'s `lost()` is still pending.
async fn still_held(guard: &LockGuard) -> bool {
    let pending = tokio::time::timeout(Duration::ZERO, guard.lost())
        .await
        .is_err();
    pending && !guard.is_lost()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_force_unlock_by_another_client_is_noticed_at_once_by_every_kind_of_guard() {
    let (holder, breaker) = (client().await, client().await);
    for kind in KINDS {
        let name = format!("loss-force-{kind:?}");
        let guard = kind.acquire(&holder, &name).await;
        tokio::time::sleep(SETTLED).await;
        assert!(still_held(&guard).await, "{kind:?}");
        assert!(kind.force_unlock(&breaker, &name).await, "{kind:?}");
        let took = lost_after(&guard, &format!("{kind:?} after force_unlock")).await;
        eprintln!("{kind:?}: lost {took:?} after force_unlock");
        // Someone else may hold it now; the lost guard's unlock says so.
        let next = kind.acquire(&breaker, &name).await;
        assert!(guard.unlock().await.is_err(), "{kind:?}");
        assert!(still_held(&next).await, "{kind:?}");
        next.unlock().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_taken_away_before_it_is_first_watched_is_noticed_too() {
    let (holder, breaker) = (client().await, client().await);
    for kind in KINDS {
        let name = format!("loss-early-{kind:?}");
        let guard = kind.acquire(&holder, &name).await;
        // At once: before the loss watch first reads the hold.
        assert!(kind.force_unlock(&breaker, &name).await, "{kind:?}");
        let took = lost_after(&guard, &format!("{kind:?} broken at once")).await;
        eprintln!("{kind:?}: lost {took:?} after a force_unlock right after the acquire");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_force_unlock_is_noticed_at_once() {
    let holder = client().await;
    let mut java = raw().await;
    let name = "loss-java";
    let guard = holder.lock(name).lock().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    let deleted: i64 = redis::Script::new(JAVA_FORCE_UNLOCK)
        .key(name)
        .key(format!("redisson_lock__channel:{{{name}}}"))
        .arg(0)
        .invoke_async(&mut java)
        .await
        .unwrap();
    assert_eq!(deleted, 1);
    let took = lost_after(&guard, "after Java's forceUnlock").await;
    eprintln!("lost {took:?} after Java's forceUnlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_deleted_or_overwritten_without_a_message_is_noticed_at_once() {
    let holder = client().await;
    let mut other = raw().await;
    for kind in KINDS {
        // Deleted.
        let name = format!("loss-del-{kind:?}");
        let guard = kind.acquire(&holder, &name).await;
        tokio::time::sleep(SETTLED).await;
        let deleted: i64 = redis::cmd("DEL")
            .arg(&name)
            .query_async(&mut other)
            .await
            .unwrap();
        assert_eq!(deleted, 1);
        let took = lost_after(&guard, &format!("{kind:?} after DEL")).await;
        eprintln!("{kind:?}: lost {took:?} after a DEL");
        // Overwritten with something else.
        let name = format!("loss-set-{kind:?}");
        let guard = kind.acquire(&holder, &name).await;
        tokio::time::sleep(SETTLED).await;
        redis::cmd("SET")
            .arg(&name)
            .arg("something else")
            .arg("PX")
            .arg(60_000)
            .query_async::<()>(&mut other)
            .await
            .unwrap();
        let took = lost_after(&guard, &format!("{kind:?} after SET")).await;
        eprintln!("{kind:?}: lost {took:?} after a SET");
        drop(guard);
    }
}

/// Replaced: the key deleted and the lock taken by someone else at once,
/// so that the key exists again, without this holder's field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_replaced_by_another_holder_is_noticed_at_once() {
    let (holder, thief) = (client().await, client().await);
    let mut other = raw().await;
    let name = "loss-replaced";
    let guard = holder.lock(name).lock().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    redis::cmd("DEL")
        .arg(name)
        .query_async::<()>(&mut other)
        .await
        .unwrap();
    let stolen = thief.lock(name).try_lock().await.unwrap().expect("free");
    lost_after(&guard, "replaced").await;
    assert!(still_held(&stolen).await);
    stolen.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reentries_own_releases_other_readers_and_renewals_are_not_losses() {
    // Renewals every 100 ms: each changes the key, and is read again.
    let holder = LockClient::builder(server().await.url())
        .watchdog_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let (other, breaker) = (client().await, client().await);
    let lock = holder.lock("loss-none");
    let guard = lock.lock().await.unwrap();
    let rw = holder.read_write_lock("loss-none-rw");
    let reader = rw.read().lock().await.unwrap();
    let writer_side = holder.read_write_lock("loss-none-w");
    let writer = writer_side.write().lock().await.unwrap();
    let fair = holder.fair_lock("loss-none-fair").lock().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    for _ in 0..5 {
        // The holder's own re-entries and their releases.
        let again = guard.reenter().await.unwrap();
        let twice = again.reenter().await.unwrap();
        twice.unlock().await.unwrap();
        drop(again);
        let reentered_write = writer.reenter().await.unwrap();
        reentered_write.unlock().await.unwrap();
        let reentered_fair = fair.reenter().await.unwrap();
        reentered_fair.unlock().await.unwrap();
        // Another reader comes and goes; another of this client too.
        let visitor = other
            .read_write_lock("loss-none-rw")
            .read()
            .lock()
            .await
            .unwrap();
        let neighbour = rw.read().lock().await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        visitor.unlock().await.unwrap();
        neighbour.unlock().await.unwrap();
        // Another lock broken.
        let unrelated = other.lock("loss-none-unrelated").lock().await.unwrap();
        assert!(
            breaker
                .lock("loss-none-unrelated")
                .force_unlock()
                .await
                .unwrap()
        );
        drop(unrelated);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Several renewals have come and gone too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (what, guard) in [
        ("lock", &guard),
        ("read", &reader),
        ("write", &writer),
        ("fair", &fair),
    ] {
        assert!(still_held(guard).await, "{what} said lost");
    }
    guard.unlock().await.unwrap();
    reader.unlock().await.unwrap();
    writer.unlock().await.unwrap();
    fair.unlock().await.unwrap();
}

/// Two guards of one owner: releasing one leaves the other held, and a
/// break then reaches the one left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reentered_guard_left_after_a_release_is_still_watched() {
    let (holder, breaker) = (client().await, client().await);
    let name = "loss-reentered";
    let first = holder.lock(name).lock().await.unwrap();
    let second = first.reenter().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    first.unlock().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    assert!(still_held(&second).await);
    assert!(breaker.lock(name).force_unlock().await.unwrap());
    lost_after(&second, "the guard left").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_guard_is_lost_at_once_when_its_key_is_deleted() {
    let url = server().await.url();
    let mut other = raw().await;
    let (guard, client) = tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::connect(url).unwrap();
        (client.lock("loss-blocking").lock().unwrap(), client)
    })
    .await
    .unwrap();
    tokio::time::sleep(SETTLED).await;
    assert!(!guard.is_lost());
    redis::cmd("DEL")
        .arg("loss-blocking")
        .query_async::<()>(&mut other)
        .await
        .unwrap();
    let deleted = Instant::now();
    while !guard.is_lost() {
        assert!(
            deleted.elapsed() < NOTICED,
            "the blocking guard did not say lost"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!("blocking: lost {:?} after a DEL", deleted.elapsed());
    tokio::task::spawn_blocking(move || {
        drop(guard);
        drop(client);
    })
    .await
    .unwrap();
}

/// The ids of the connections that track keys (`CLIENT LIST` flag `t`).
async fn tracking_clients(con: &mut MultiplexedConnection) -> Vec<String> {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(con)
        .await
        .unwrap();
    list.lines()
        .filter(|line| {
            line.split(' ')
                .any(|part| part.strip_prefix("flags=").is_some_and(|f| f.contains('t')))
        })
        .filter_map(|line| {
            line.split(' ')
                .find_map(|part| part.strip_prefix("id="))
                .map(str::to_owned)
        })
        .collect()
}

/// The watch's connection killed: it is replaced, the holds are read
/// again on the new one (not a loss), and a removal after that is noticed
/// at once. On a server of its own: the kill would hit the other tests'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_watch_connection_is_replaced_and_still_notices() {
    let redis = common::Redis::start().await;
    let client = redis.client().await;
    let mut admin = redis.raw();
    let guard = client.lock("loss-killed").lock().await.unwrap();
    tokio::time::sleep(SETTLED).await;
    let before = tracking_clients(&mut admin).await;
    assert_eq!(before.len(), 1, "{before:?}");
    let () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&before[0])
        .query_async::<i64>(&mut admin)
        .await
        .map(drop)
        .unwrap();
    tokio::time::sleep(SETTLED).await;
    let after = tracking_clients(&mut admin).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_ne!(after, before, "a new connection");
    assert!(still_held(&guard).await, "the reconnect is no loss");
    assert!(redis.del("loss-killed").await);
    let took = lost_after(&guard, "after a DEL on the new connection").await;
    eprintln!("lost {took:?} after a DEL, the watch's first connection killed");
}

/// Many holds, renewed every 200 ms (each renewal changes every key, and
/// each is read again): none is taken for lost, and the one deleted among
/// them is noticed at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn among_many_renewed_holds_only_the_one_taken_away_is_lost() {
    const HOLDS: usize = 200;
    let holder = LockClient::builder(server().await.url())
        .watchdog_timeout(Duration::from_millis(600))
        .connect()
        .await
        .unwrap();
    let mut guards = Vec::new();
    for i in 0..HOLDS {
        guards.push(holder.lock(&format!("loss-many-{i}")).lock().await.unwrap());
    }
    // Five renewal rounds.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for guard in &guards {
        assert!(still_held(guard).await, "{} said lost", guard.name());
    }
    let victim = HOLDS / 2;
    let deleted: i64 = redis::cmd("DEL")
        .arg(format!("loss-many-{victim}"))
        .query_async(&mut raw().await)
        .await
        .unwrap();
    assert_eq!(deleted, 1);
    let took = lost_after(&guards[victim], "the one deleted").await;
    eprintln!("lost {took:?} after a DEL, among {HOLDS} renewed holds");
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (i, guard) in guards.iter().enumerate() {
        assert_eq!(guard.is_lost(), i == victim, "{}", guard.name());
    }
    for (i, guard) in guards.into_iter().enumerate() {
        assert_eq!(guard.unlock().await.is_ok(), i != victim);
    }
}

/// The third way a hold ends, its lease running out (here a fixed one, not
/// renewed): the guard says lost at `valid_until()`, from its lease clock,
/// with no word from Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_runs_out_is_lost_at_valid_until() {
    let holder = client().await;
    let lease = Duration::from_millis(400);
    let started = Instant::now();
    let guard = holder
        .lock("loss-lease")
        .lock_with_lease(lease)
        .await
        .unwrap();
    let valid_until = Instant::from_std(guard.valid_until());
    within(
        Duration::from_secs(2),
        "lost() at the lease's end",
        guard.lost(),
    )
    .await;
    let lost_at = Instant::now();
    eprintln!("lost {:?} after the acquire", lost_at - started);
    assert!(lost_at >= valid_until, "lost before valid_until()");
    assert!(
        lost_at - started < lease + Duration::from_millis(200),
        "lost after {:?}",
        lost_at - started
    );
}

/// Whether `permit`'s `lost()` is still pending.
async fn permit_held(permit: &PermitGuard) -> bool {
    let pending = tokio::time::timeout(Duration::ZERO, permit.lost())
        .await
        .is_err();
    pending && !permit.is_lost()
}

/// How long `permit` took to say lost; fails after [`NOTICED`].
async fn permit_lost_after(permit: &PermitGuard, what: &str) -> Duration {
    let started = Instant::now();
    within(NOTICED, what, permit.lost()).await;
    assert!(permit.is_lost(), "{what}");
    started.elapsed()
}

/// A permit id's bytes, from its hex form.
fn id_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// A leased permit is a hold too: given back by someone else (as
/// `lockctl unlock --force --permit` does), or its id taken out of the
/// permits taken by a plain `ZREM`, its guard says lost at once — one
/// renewal round is 10 s here — and only that guard: the holder's other
/// permits, its own release and renewals are not losses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leased_permit_taken_away_is_noticed_at_once() {
    let (holder, breaker) = (client().await, client().await);
    let mut other = raw().await;
    let name = "loss-permits";
    let pool = holder.leased_semaphore(name);
    assert!(pool.try_set_permits(5).await.unwrap());
    let forced = pool.acquire(1).await.unwrap();
    let kept = pool.acquire(1).await.unwrap();
    let removed = pool.acquire(2).await.unwrap();
    let fixed = pool
        .acquire_with_lease(1, Duration::from_secs(30))
        .await
        .unwrap();
    tokio::time::sleep(SETTLED).await;
    for permit in [&forced, &kept, &removed, &fixed] {
        assert!(permit_held(permit).await, "{permit:?} said lost");
    }

    let breaking = breaker.leased_semaphore(name);
    assert!(breaking.force_release(&forced.ids()[0]).await.unwrap());
    let took = permit_lost_after(&forced, "a permit force-released").await;
    eprintln!("lost {took:?} after a force release");

    let zrem: i64 = redis::cmd("ZREM")
        .arg(format!("{{{name}}}:timeout"))
        .arg(id_bytes(&removed.ids()[1]))
        .query_async(&mut other)
        .await
        .unwrap();
    assert_eq!(zrem, 1);
    let took = permit_lost_after(&removed, "one of two permits ZREMed").await;
    eprintln!("lost {took:?} after a ZREM of one of its permits");

    // A fixed lease is watched too, before its first read as well.
    assert!(breaking.force_release(&fixed.ids()[0]).await.unwrap());
    permit_lost_after(&fixed, "a fixed-lease permit force-released").await;
    let early = pool.acquire(1).await.unwrap();
    assert!(breaking.force_release(&early.ids()[0]).await.unwrap());
    permit_lost_after(&early, "a permit force-released at once").await;

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(permit_held(&kept).await, "the permit left alone said lost");
    assert!(forced.release().await.is_err());
    assert!(removed.release().await.is_err());
    assert!(fixed.release().await.is_err());
    assert!(early.release().await.is_err());
    kept.release().await.unwrap();
    // Everything came back once, but the permit the plain `ZREM` took
    // out (it counts nothing back): 4 available, nothing taken.
    assert_eq!(pool.available().await.unwrap(), 4);
    assert!(pool.holders().await.unwrap().is_empty());
}
