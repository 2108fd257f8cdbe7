use super::*;

fn hold(i: usize) -> HoldKey {
    HoldKey::new(Arc::from(format!("lock:{i}")), Arc::from("owner:1"))
}

#[tokio::test]
async fn locks_waiting_for_a_cluster_slot_map_that_could_not_be_read_wait_for_the_pause() {
    let client = redis::Client::open("redis://127.0.0.1:1/").unwrap();
    let timeouts = Timeouts {
        connect: Duration::from_secs(1),
        response: Duration::from_secs(1),
    };
    let registry = Arc::new(Mutex::new(Holds::new(true)));
    let (_wake, wakes) = mpsc::unbounded_channel();
    let inbox = Arc::default();
    let mut watcher = Watcher::new(
        &registry,
        Nodes::Server(Box::new(client)),
        timeouts,
        &inbox,
        wakes,
    );
    let lock: Arc<str> = Arc::from("lock:1");
    let was_due = Instant::now();
    watcher.locks.insert(
        lock.clone(),
        Watched {
            holds: vec![hold(1)],
            due: Some(was_due),
            checking: false,
            armed_on: None,
        },
    );
    watcher.blocked.push(lock.clone());
    watcher.reading_slots = true;
    let refused = redis::RedisError::from((redis::ErrorKind::Io, "refused"));
    watcher.finished(Done::Slots(Err(refused)));
    // Not due again at once (the task would read the slots again in a
    // loop for as long as the cluster is out of reach), but after the
    // pause, which grows.
    let due = watcher.locks[&lock].due.unwrap();
    assert!(due >= was_due + RETRY_MIN, "{:?}", due - was_due);
    assert_eq!(watcher.next_due(), Some(due));
    assert!(watcher.blocked.is_empty());
    assert!(!watcher.reading_slots);
    assert_eq!(watcher.pause, RETRY_MIN * 2);
}

#[tokio::test]
async fn a_burst_of_acquires_wakes_the_task_once() {
    // No server answers here: nothing is read before the holds go.
    let client = redis::Client::open("redis://127.0.0.1:1/").unwrap();
    let watch = LossWatch::new(
        Nodes::Server(Box::new(client)),
        Timeouts {
            connect: Duration::from_secs(1),
            response: Duration::from_secs(1),
        },
    );
    let registry = Arc::new(Mutex::new(Holds::new(false)));
    for i in 0..1_000 {
        watch.watch(&registry, hold(i));
    }
    let woken = |watch: &LossWatch| watch.inbox.lock().unwrap().woken;
    let waiting = |watch: &LossWatch| watch.inbox.lock().unwrap().holds.len();
    assert_eq!(woken(&watch), 1);
    assert_eq!(waiting(&watch), 1_000);
    // The task gathers them all at once, and the next hold wakes it again.
    tokio::time::sleep(GATHER * 3).await;
    assert_eq!(waiting(&watch), 0);
    watch.watch(&registry, hold(1_000));
    watch.watch(&registry, hold(1_001));
    assert_eq!(woken(&watch), 2);
    assert_eq!(waiting(&watch), 2);
}
