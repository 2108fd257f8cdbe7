//! The cancelled-waiter trial: a holder releases, the waiter its release
//! woke is cancelled right after its wake-up, and the clock runs until the
//! other waiter holds the lock.
//!
//! Both waiters are tasks of one client (the one woken first is the one
//! that waited longest); the holder is another client. A subscriber of the
//! bench's own sees the release's message at about the moment the waiters'
//! client does, and the first waiter is cancelled (its task aborted) after
//! a pause that varies from trial to trial (0 to 1 ms), so that the
//! cancellation lands before, during and after its try. Were the wake-up
//! not passed on, the other waiter would sleep out the TTL it last saw (up
//! to the 30 s lease).
//!
//! A fair lock's release hands the lock to the first waiter directly (its
//! wake-up is the lock itself: it returns as soon as the message is in), so
//! there the cancellation is timed from when the release is sent, 0 to
//! [`FAIR_SPREAD_US`] later: before the release ran (the waiter leaves the
//! queue, and the release hands the lock to the other one), and around the
//! handoff message (the waiter must give up a lock it never took, and tell
//! the other one: the bench sees that as a `0` on the other waiter's
//! channel, and counts those trials apart).

use crate::flavor::Flavor;
use crate::metrics::{Figure, Measured, percentile};
use futures_util::StreamExt;
use redlua::{LockClient, LockGuard};
use std::time::{Duration, Instant};

/// The most time a trial may take (a stranded lock waits out the lease).
const GIVE_UP: Duration = Duration::from_secs(35);

/// The cancellations come 0 to this many microseconds after the release's
/// message.
const SPREAD_US: u64 = 250;

/// A fair lock's cancellations come 0 to this many microseconds after the
/// release is sent.
const FAIR_SPREAD_US: u64 = 400;

/// Runs trials until `trials` of them cancelled the woken waiter before its
/// try won (at most 8× as many trials in all).
pub async fn run(url: &str, trials: usize, flavor: Flavor) -> Result<Measured, String> {
    let waiters = LockClient::connect(url).await.map_err(|e| e.to_string())?;
    let holder = LockClient::connect(url).await.map_err(|e| e.to_string())?;
    let mut pubsub = redis::Client::open(url)
        .map_err(|e| e.to_string())?
        .get_async_pubsub()
        .await
        .map_err(|e| e.to_string())?;
    pubsub
        .psubscribe("redisson_lock__channel:{bench:cancel:*")
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = pubsub.on_message();
    let mut gaps_ms = Vec::with_capacity(trials);
    let mut woken_first_won = 0;
    let mut handed_then_cancelled = 0;
    // A fair lock's release hands the lock over (see above).
    let handed_over = matches!(flavor, Flavor::Fair);
    let mut trial = 0;
    while gaps_ms.len() < trials && trial < trials * 8 {
        trial += 1;
        let name = format!("bench:cancel:{trial}");
        let guard = flavor
            .lock(&holder, &name)
            .lock()
            .await
            .map_err(|e| e.to_string())?;
        let first = spawn_waiter(&waiters, &name, flavor);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = spawn_waiter(&waiters, &name, flavor);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let released = Instant::now();
        let channel = format!("redisson_lock__channel:{{{name}}}");
        let mut unlock = None;
        if handed_over {
            unlock = Some(tokio::spawn(guard.unlock()));
        } else {
            guard.unlock().await.map_err(|e| e.to_string())?;
            tokio::time::timeout(Duration::from_secs(5), async {
                // Skip what earlier trials' releases published.
                while let Some(message) = messages.next().await {
                    if message.get_channel_name().starts_with(&channel) {
                        break;
                    }
                }
            })
            .await
            .map_err(|_| "no release message within 5 s".to_string())?;
        }
        // Spread the cancellations over the wake-up and the try (which
        // takes about one round trip: later, the try has mostly won).
        let spread = if handed_over {
            FAIR_SPREAD_US
        } else {
            SPREAD_US
        };
        let pause = Duration::from_micros((trial as u64 * 37) % spread);
        let until = Instant::now() + pause;
        while Instant::now() < until {
            tokio::task::yield_now().await;
        }
        first.abort();
        let first = first.await;
        if let Some(unlock) = unlock {
            unlock
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        }
        if let Ok(Ok((got, _))) = first {
            // The try had already won: no cancelled wake-up to pass on.
            woken_first_won += 1;
            got.unlock().await.map_err(|e| e.to_string())?;
            let (got, _) = tokio::time::timeout(GIVE_UP, second)
                .await
                .map_err(|_| "the second waiter never got the lock".to_string())?
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            got.unlock().await.map_err(|e| e.to_string())?;
            continue;
        }
        let (got, at) = tokio::time::timeout(GIVE_UP, second)
            .await
            .map_err(|_| format!("trial {trial}: the lock stayed free for {GIVE_UP:?}"))?
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        gaps_ms.push((at - released).as_secs_f64() * 1000.0);
        got.unlock().await.map_err(|e| e.to_string())?;
        if handed_over {
            // This trial's messages: a `0` means the first waiter was handed
            // the lock, was cancelled before it took it, and passed it on.
            let mut passed_on = false;
            while let Ok(Some(message)) =
                tokio::time::timeout(Duration::from_millis(20), messages.next()).await
            {
                if message.get_channel_name().starts_with(&channel)
                    && message.get_payload_bytes() == b"0"
                {
                    passed_on = true;
                }
            }
            if passed_on {
                handed_then_cancelled += 1;
            }
        }
    }
    gaps_ms.sort_by(f64::total_cmp);
    let over = gaps_ms.iter().filter(|&&gap| gap > 50.0).count();
    let mut measured = Measured {
        per_second: 0.0,
        commands_per_acquisition: None,
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: trials,
        contention: None,
        figures: vec![
            Figure::new(
                "trials with the woken waiter cancelled",
                gaps_ms.len() as f64,
                "",
            ),
            Figure::new("trials its try had won", f64::from(woken_first_won), ""),
            Figure::new(
                "release to next holder, p50",
                percentile(&gaps_ms, 0.5),
                "ms",
            ),
            Figure::new(
                "release to next holder, max",
                gaps_ms.last().copied().unwrap_or(0.0),
                "ms",
            ),
            Figure::new("trials over 50 ms", over as f64, ""),
        ],
    };
    if handed_over {
        measured.figures.insert(
            2,
            Figure::new(
                "of the cancelled: handed the lock, gave it up",
                f64::from(handed_then_cancelled),
                "",
            ),
        );
    }
    Ok(measured)
}

/// A waiter: its guard and when it got it.
fn spawn_waiter(
    client: &LockClient,
    name: &str,
    flavor: Flavor,
) -> tokio::task::JoinHandle<redlua::Result<(LockGuard, Instant)>> {
    let lock = flavor.lock(client, name);
    tokio::spawn(async move { lock.lock().await.map(|guard| (guard, Instant::now())) })
}
