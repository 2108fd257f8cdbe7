//! The `tracing` events of the locks, captured by a test subscriber while a
//! real redis-server serves them: an acquire that waited, the other ends of
//! an acquire, releases, renewal rounds, a lost lock, a reconnect.
//!
//! Each test runs on a current-thread runtime, so every task of its clients
//! runs on the test's thread, where the capturing subscriber is the default.

mod common;

use common::{Redis, ms, within};
use redlua_runtime::observability::targets;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One captured event.
#[derive(Debug, Clone)]
struct Captured {
    target: String,
    level: Level,
    message: String,
    /// The name of the span it happened in.
    span: Option<String>,
    fields: BTreeMap<String, String>,
}

impl Captured {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("no field `{name}` in {self:?}"))
    }

    fn number(&self, name: &str) -> u64 {
        self.field(name)
            .parse()
            .unwrap_or_else(|_| panic!("field `{name}` is not a number in {self:?}"))
    }
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

/// A layer that keeps every event, and every span opened (its name and
/// fields).
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>, Spans);

type Spans = Arc<Mutex<Vec<(String, BTreeMap<String, String>)>>>;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: Context<'_, S>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let name = attrs.metadata().name().to_string();
        self.1.lock().unwrap().push((name, fields.0));
    }

    fn on_event(&self, event: &Event<'_>, context: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut fields = fields.0;
        let message = fields.remove("message").unwrap_or_default();
        self.0.lock().unwrap().push(Captured {
            target: event.metadata().target().to_string(),
            level: *event.metadata().level(),
            message,
            span: context.event_span(event).map(|s| s.name().to_string()),
            fields,
        });
    }
}

impl Capture {
    /// Makes this the current thread's subscriber until the guard drops.
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()))
    }

    /// The fields of the spans named `name` opened so far.
    fn spans(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        let spans = self.1.lock().unwrap();
        spans
            .iter()
            .filter(|(opened, _)| opened == name)
            .map(|(_, fields)| fields.clone())
            .collect()
    }

    /// The events so far with this target and message.
    fn events(&self, target: &str, message: &str) -> Vec<Captured> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.target == target && e.message == message)
            .cloned()
            .collect()
    }

    /// The events of `target`/`message` whose field `lock` is `lock`.
    fn of_lock(&self, target: &str, message: &str, lock: &str) -> Vec<Captured> {
        self.events(target, message)
            .into_iter()
            .filter(|e| e.fields.get("lock").map(String::as_str) == Some(lock))
            .collect()
    }

    /// Waits until an event of `target`/`message` matches `test`.
    async fn wait_for(
        &self,
        target: &str,
        message: &str,
        limit: Duration,
        test: impl Fn(&Captured) -> bool,
    ) -> Captured {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(found) = self.events(target, message).into_iter().find(|e| test(e)) {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no `{message}` event on {target} within {limit:?}; got {:#?}",
                self.0.lock().unwrap()
            );
            tokio::time::sleep(ms(10)).await;
        }
    }
}

#[tokio::test]
async fn acquire_events_tell_how_long_it_waited_and_how() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiter = redis.client().await;

    let held = holder.lock("obs:wait").lock().await.unwrap();
    let acquired = capture.of_lock(targets::ACQUIRE, "lock acquired", "obs:wait");
    assert_eq!(acquired.len(), 1, "{acquired:#?}");
    let first = &acquired[0];
    assert_eq!(first.level, Level::DEBUG);
    assert_eq!(first.field("kind"), "reentrant");
    assert_eq!(first.field("reentry"), "false");
    assert_eq!(first.field("owner"), held.owner().to_string());
    assert_eq!(first.number("token"), held.token());
    assert_eq!(first.number("attempts"), 1);
    assert_eq!(first.number("wakeups"), 0);
    assert_eq!(first.field("handed_over"), "false");
    assert_eq!(first.span.as_deref(), Some("acquire"));

    // A waiter, woken by the release 300 ms later.
    let lock = waiter.lock("obs:wait");
    let waiting = tokio::spawn(async move { lock.lock().await });
    tokio::time::sleep(ms(300)).await;
    held.unlock().await.unwrap();
    let guard = within(ms(5_000), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap();
    let acquired = capture.of_lock(targets::ACQUIRE, "lock acquired", "obs:wait");
    assert_eq!(acquired.len(), 2, "{acquired:#?}");
    let waited = &acquired[1];
    assert_eq!(waited.field("owner"), guard.owner().to_string());
    assert!(waited.number("waited_ms") >= 250, "{waited:?}");
    assert!(waited.number("waited_ms") < 5_000, "{waited:?}");
    assert!(waited.number("attempts") >= 2, "{waited:?}");
    assert!(waited.number("wakeups") >= 1, "{waited:?}");
    assert_eq!(
        capture
            .of_lock(targets::ACQUIRE, "woken by a release", "obs:wait")
            .len() as u64,
        waited.number("wakeups")
    );
    // The waiter's pub/sub connection was announced, with the server's
    // address as its node.
    let opened = capture.events(targets::PUBSUB, "pub/sub connection opened");
    assert!(!opened.is_empty());
    let node = redis
        .url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string();
    assert!(
        opened.iter().all(|e| e.field("node") == node),
        "{opened:#?}"
    );

    // The other outcomes: busy, timed out, cancelled, failed; a re-entry.
    let other = waiter.lock("obs:wait");
    let reentered = guard.reenter().await.unwrap();
    assert!(holder.lock("obs:wait").try_lock().await.unwrap().is_none());
    assert!(
        holder
            .lock("obs:wait")
            .try_lock_for(ms(200), None)
            .await
            .unwrap()
            .is_none()
    );
    let dropped = tokio::time::timeout(ms(100), holder.lock("obs:wait").lock()).await;
    assert!(dropped.is_err(), "a waiter got a held lock");
    assert!(other.lock_with_lease(Duration::ZERO).await.is_err());
    let outcomes: Vec<(String, String)> = capture
        .of_lock(targets::ACQUIRE, "lock not acquired", "obs:wait")
        .iter()
        .map(|e| {
            (
                e.field("outcome").to_string(),
                e.field("reentry").to_string(),
            )
        })
        .collect();
    let expect = |o: &str| (o.to_string(), "false".to_string());
    assert_eq!(
        outcomes,
        [expect("busy"), expect("timed_out"), expect("cancelled")],
        "an invalid lease is refused before any acquire starts"
    );
    let not = capture.of_lock(targets::ACQUIRE, "lock not acquired", "obs:wait");
    assert_eq!(not[0].number("attempts"), 1);
    assert!(not[1].number("waited_ms") >= 200, "{:?}", not[1]);
    let reentry = capture
        .of_lock(targets::ACQUIRE, "lock acquired", "obs:wait")
        .into_iter()
        .find(|e| e.field("reentry") == "true")
        .expect("a re-entry event");
    assert_eq!(reentry.field("owner"), guard.owner().to_string());
    let owner = guard.owner().clone();
    reentered.unlock().await.unwrap();
    guard.unlock().await.unwrap();

    // A failed re-entry: the owner holds nothing any more.
    let gone = waiter.lock("obs:wait").reenter(&owner).await;
    assert!(matches!(gone, Err(redlua_runtime::Error::NotHeld { .. })));
    let failed = capture
        .of_lock(targets::ACQUIRE, "lock not acquired", "obs:wait")
        .into_iter()
        .find(|e| e.field("outcome") == "failed")
        .expect("a failed re-entry event");
    assert_eq!(failed.field("reentry"), "true");
    assert!(failed.field("error").contains("not held"), "{failed:?}");
}

#[tokio::test]
async fn releases_are_reported_with_their_outcome() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("obs:release");

    let guard = lock.lock().await.unwrap();
    let again = guard.reenter().await.unwrap();
    let owner = guard.owner().to_string();
    again.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    let released = capture.of_lock(targets::RELEASE, "lock released", "obs:release");
    let outcomes: Vec<(&str, &str)> = released
        .iter()
        .map(|e| (e.field("outcome"), e.field("background")))
        .collect();
    assert_eq!(outcomes, [("still_held", "false"), ("freed", "false")]);
    assert!(released.iter().all(|e| e.field("owner") == owner));
    assert!(released.iter().all(|e| e.field("kind") == "reentrant"));
    assert!(released.iter().all(|e| e.level == Level::DEBUG));
    assert!(
        released
            .iter()
            .all(|e| e.span.as_deref() == Some("release"))
    );

    // A dropped guard is released by the background worker.
    drop(lock.lock().await.unwrap());
    let background = capture
        .wait_for(targets::RELEASE, "lock released", ms(2_000), |e| {
            e.field("background") == "true"
        })
        .await;
    assert_eq!(background.field("outcome"), "freed");
    assert_eq!(background.span.as_deref(), Some("release"));

    // The write side of a read/write lock.
    let rw = client.read_write_lock("obs:rw");
    rw.write().lock().await.unwrap().unlock().await.unwrap();
    let write = capture.of_lock(targets::RELEASE, "lock released", "obs:rw");
    assert_eq!(write.len(), 1);
    assert_eq!(write[0].field("kind"), "write");

    // A fair lock: its acquire and release say so.
    client
        .fair_lock("obs:fair")
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    let acquired = capture.of_lock(targets::ACQUIRE, "lock acquired", "obs:fair");
    assert_eq!(acquired.len(), 1);
    assert_eq!(acquired[0].field("kind"), "fair");
    assert_eq!(acquired[0].field("handed_over"), "false");
    let released = capture.of_lock(targets::RELEASE, "lock released", "obs:fair");
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].field("kind"), "fair");
    assert_eq!(released[0].field("outcome"), "freed");

    // A fair lock's waiter that a release hands the lock to says so.
    let held = client.fair_lock("obs:fair").lock().await.unwrap();
    let waiter = redis.client().await;
    let lock = waiter.fair_lock("obs:fair");
    let waiting = tokio::spawn(async move { lock.lock().await });
    within(ms(5_000), "the waiter queued", async {
        while !redis.exists("redisson_lock_queue:{obs:fair}").await {
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await;
    held.unlock().await.unwrap();
    let guard = within(ms(5_000), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap();
    let acquired = capture.of_lock(targets::ACQUIRE, "lock acquired", "obs:fair");
    let handed = acquired
        .iter()
        .find(|e| e.field("owner") == guard.owner().to_string())
        .expect("the waiter's event");
    assert_eq!(handed.field("handed_over"), "true", "{handed:?}");
    guard.unlock().await.unwrap();
}

#[tokio::test]
async fn renewal_rounds_and_a_lost_lock_are_reported() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    // A user without key tracking: the watchdog is the one to find a loss.
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("untracked")
        .arg("on")
        .arg(">secret")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-client|tracking")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    let url = format!(
        "redis://untracked:secret@127.0.0.1:{}/",
        redis.server.port()
    );
    // Rounds every 200 ms.
    let client = redlua_runtime::LockClient::builder(url)
        .watchdog_timeout(ms(600))
        .connect()
        .await
        .unwrap();
    let breaker = redis.client().await;
    let kept = client.lock("obs:kept").lock().await.unwrap();
    let broken = client.lock("obs:broken").lock().await.unwrap();
    let refused = capture
        .wait_for(
            targets::WATCHDOG,
            "the server refuses key tracking; a hold taken away is found by its lease clock and the watchdog",
            ms(2_000),
            |_| true,
        )
        .await;
    assert_eq!(refused.level, Level::WARN);
    assert!(
        refused.field("error").contains("client|tracking"),
        "{refused:?}"
    );
    let round = capture
        .wait_for(targets::WATCHDOG, "renewal round", ms(2_000), |_| true)
        .await;
    assert_eq!(round.level, Level::DEBUG);
    assert_eq!(round.number("locks"), 2);
    assert_eq!(round.number("renewed"), 2);
    assert_eq!(round.number("lost"), 0);
    assert_eq!(round.number("failed_batches"), 0);
    assert_eq!(round.span.as_deref(), Some("renewal_round"));

    assert!(breaker.lock("obs:broken").force_unlock().await.unwrap());
    let lost = capture
        .wait_for(
            targets::WATCHDOG,
            "lock lost: the watchdog found it gone (expired, deleted or taken over)",
            ms(2_000),
            |_| true,
        )
        .await;
    assert_eq!(lost.level, Level::WARN);
    assert_eq!(lost.field("lock"), "obs:broken");
    // The owner's field is `owner`, as in every other event.
    assert_eq!(lost.field("owner"), broken.owner().to_string());
    assert!(!lost.fields.contains_key("field"), "{lost:?}");
    let with_loss = capture
        .wait_for(targets::WATCHDOG, "renewal round", ms(2_000), |e| {
            e.number("lost") == 1
        })
        .await;
    assert_eq!(with_loss.number("renewed"), 1);
    assert!(broken.is_lost());
    assert!(!kept.is_lost());
    kept.unlock().await.unwrap();

    // Releasing the lost hold finds nothing: no "lock released" for it.
    let _ = broken.unlock().await;
    let nothing = capture
        .wait_for(
            targets::RELEASE,
            "nothing released: the owner held nothing of the lock",
            ms(2_000),
            |e| e.fields.get("lock").map(String::as_str) == Some("obs:broken"),
        )
        .await;
    assert_eq!(nothing.field("outcome"), "not_held");
    assert_eq!(nothing.field("owner"), lost.field("owner"));
    assert!(
        capture
            .of_lock(targets::RELEASE, "lock released", "obs:broken")
            .is_empty()
    );
    assert_eq!(
        capture
            .of_lock(targets::RELEASE, "lock released", "obs:kept")
            .len(),
        1
    );
}

#[tokio::test]
async fn a_hold_taken_away_is_reported_at_once() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let (client, breaker) = (redis.client().await, redis.client().await);
    let broken = client.lock("obs:taken").lock().await.unwrap();
    tokio::time::sleep(ms(200)).await;
    assert!(breaker.lock("obs:taken").force_unlock().await.unwrap());
    let lost = capture
        .wait_for(
            targets::WATCHDOG,
            "lock lost: it was taken away (force unlocked, deleted or overwritten)",
            ms(1_000),
            |_| true,
        )
        .await;
    assert_eq!(lost.level, Level::WARN);
    assert_eq!(lost.field("lock"), "obs:taken");
    assert_eq!(lost.field("owner"), broken.owner().to_string());
    assert!(broken.is_lost());
}

#[tokio::test]
async fn a_killed_connection_is_reported_and_opened_again() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let client = redis.client().await;
    client
        .lock("obs:before")
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    assert!(
        capture
            .events(targets::CONNECTION, "command connection opened again")
            .is_empty()
    );

    // Kill every connection but the test's own.
    let mut raw = redis.raw();
    let own: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query_async(&mut raw)
        .await
        .unwrap();
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(&mut raw)
        .await
        .unwrap();
    for line in list.lines() {
        let id = line
            .split_whitespace()
            .next()
            .unwrap()
            .trim_start_matches("id=");
        if id != own.to_string() {
            let _: i64 = redis::cmd("CLIENT")
                .arg("KILL")
                .arg("ID")
                .arg(id)
                .query_async(&mut raw)
                .await
                .unwrap();
        }
    }
    // The next acquire meets the dead connection, and tries again on a new one.
    let guard = within(
        ms(5_000),
        "lock after the kill",
        client.lock("obs:after").lock(),
    )
    .await
    .unwrap();
    guard.unlock().await.unwrap();
    let failed = capture.events(
        targets::CONNECTION,
        "command connection failed; the next command opens a new one",
    );
    assert!(!failed.is_empty());
    assert_eq!(failed[0].level, Level::INFO);
    // It happened while the acquire tried: in its span.
    assert_eq!(failed[0].span.as_deref(), Some("acquire"));
    let opened = capture.events(targets::CONNECTION, "command connection opened again");
    assert_eq!(opened.len(), 1, "{opened:#?}");
    assert_eq!(opened[0].level, Level::INFO);
    assert_eq!(opened[0].number("connection"), 1);
}

/// A semaphore's permits are acquired as a lock is, and reported alike:
/// in an `acquire_permits` span, each call's outcome once, with its
/// `kind` (`semaphore`, `leased_semaphore`), its permits, tries and
/// wake-ups.
#[tokio::test]
async fn permit_acquires_are_reported_as_lock_acquires_are() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let client = redis.client().await;
    let of = |message: &str, semaphore: &str| -> Vec<Captured> {
        capture
            .events(targets::ACQUIRE, message)
            .into_iter()
            .filter(|e| e.fields.get("semaphore").map(String::as_str) == Some(semaphore))
            .collect()
    };

    let leased = client.leased_semaphore("obs:leased");
    assert!(leased.try_set_permits(2).await.unwrap());
    let permit = leased.acquire(2).await.unwrap();
    let acquired = of("permits acquired", "obs:leased");
    assert_eq!(acquired.len(), 1, "{acquired:#?}");
    assert_eq!(acquired[0].level, Level::DEBUG);
    assert_eq!(acquired[0].field("kind"), "leased_semaphore");
    assert_eq!(acquired[0].number("permits"), 2);
    assert_eq!(acquired[0].number("attempts"), 1);
    assert_eq!(acquired[0].number("wakeups"), 0);
    assert_eq!(acquired[0].span.as_deref(), Some("acquire_permits"));

    // Busy, timed out, cancelled; then a waiter woken by the release.
    assert!(leased.try_acquire(1).await.unwrap().is_none());
    assert!(
        leased
            .try_acquire_for(1, ms(200), None)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        tokio::time::timeout(ms(100), leased.acquire(1))
            .await
            .is_err()
    );
    let outcomes: Vec<String> = of("permits not acquired", "obs:leased")
        .iter()
        .map(|e| e.field("outcome").to_string())
        .collect();
    assert_eq!(outcomes, ["busy", "timed_out", "cancelled"]);
    let waiting = {
        let leased = leased.clone();
        tokio::spawn(async move { leased.acquire(1).await })
    };
    tokio::time::sleep(ms(300)).await;
    permit.release().await.unwrap();
    let second = within(ms(5_000), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap();
    let acquired = of("permits acquired", "obs:leased");
    assert_eq!(acquired.len(), 2, "{acquired:#?}");
    assert!(acquired[1].number("waited_ms") >= 250, "{:?}", acquired[1]);
    assert!(acquired[1].number("attempts") >= 2, "{:?}", acquired[1]);
    assert!(acquired[1].number("wakeups") >= 1, "{:?}", acquired[1]);
    second.release().await.unwrap();

    // A plain semaphore's, and a failure (more permits than the pool).
    let plain = client.semaphore("obs:plain");
    assert!(plain.try_set_permits(1).await.unwrap());
    assert!(plain.try_acquire(1).await.unwrap());
    let acquired = of("permits acquired", "obs:plain");
    assert_eq!(acquired.len(), 1, "{acquired:#?}");
    assert_eq!(acquired[0].field("kind"), "semaphore");
    assert!(leased.try_acquire(3).await.is_err());
    let failed = of("permits not acquired", "obs:leased");
    assert_eq!(failed.last().unwrap().field("outcome"), "failed");
}

#[tokio::test]
async fn permit_releases_and_latch_waits_are_reported_in_their_spans() {
    let capture = Capture::default();
    let _default = capture.install();
    let redis = Redis::start().await;
    let client = redis.client().await;
    let released = |semaphore: &str| -> Vec<Captured> {
        capture
            .events(targets::RELEASE, "permits released")
            .into_iter()
            .filter(|e| e.fields.get("semaphore").map(String::as_str) == Some(semaphore))
            .collect()
    };

    // A leased permits' release, by its guard and in the background, in a
    // span of its own, as a lock's is.
    let leased = client.leased_semaphore("obs:leased");
    assert!(leased.try_set_permits(2).await.unwrap());
    leased.acquire(2).await.unwrap().release().await.unwrap();
    drop(leased.acquire(1).await.unwrap());
    capture
        .wait_for(targets::RELEASE, "permits released", ms(2_000), |e| {
            e.field("background") == "true"
        })
        .await;
    let events = released("obs:leased");
    let seen: Vec<(&str, u64, &str)> = events
        .iter()
        .map(|e| {
            (
                e.field("outcome"),
                e.number("permits"),
                e.field("background"),
            )
        })
        .collect();
    assert_eq!(seen, [("freed", 2, "false"), ("freed", 1, "true")]);
    assert!(events.iter().all(|e| e.level == Level::DEBUG));
    assert!(events.iter().all(|e| e.field("kind") == "leased_semaphore"));
    assert!(
        events
            .iter()
            .all(|e| e.span.as_deref() == Some("release_permits")),
        "{events:#?}"
    );
    // A permit that expired before its release: nothing given back by it.
    let short = leased.acquire_with_lease(1, ms(100)).await.unwrap();
    tokio::time::sleep(ms(300)).await;
    assert!(matches!(
        short.release().await,
        Err(redlua_runtime::Error::LockLost { .. })
    ));
    let last = released("obs:leased").pop().unwrap();
    assert_eq!(last.field("outcome"), "not_held");

    // A plain semaphore's release opens the same span, of its kind.
    let plain = client.semaphore("obs:plain");
    assert!(plain.try_set_permits(3).await.unwrap());
    assert!(plain.try_acquire(2).await.unwrap());
    plain.release(2).await.unwrap();
    let spans = capture.spans("release_permits");
    let of = |semaphore: &str| -> Vec<(String, String)> {
        spans
            .iter()
            .filter(|f| f.get("semaphore").map(String::as_str) == Some(semaphore))
            .map(|f| (f["kind"].clone(), f["permits"].clone()))
            .collect()
    };
    assert_eq!(
        of("obs:plain"),
        [("semaphore".to_string(), "2".to_string())]
    );
    assert_eq!(of("obs:leased").len(), 3, "{spans:#?}");

    // A latch's wait, each call in a span naming the latch.
    let latch = client.count_down_latch("obs:latch");
    assert!(latch.try_set_count(1).await.unwrap());
    assert!(!latch.wait_for(ms(100)).await.unwrap());
    let waiting = {
        let latch = latch.clone();
        tokio::spawn(async move { latch.wait().await })
    };
    tokio::time::sleep(ms(100)).await;
    latch.count_down().await.unwrap();
    within(ms(5_000), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap();
    let waits = capture.spans("latch_wait");
    assert_eq!(waits.len(), 2, "{waits:#?}");
    assert!(waits.iter().all(|f| f["latch"] == "obs:latch"));
}
