//! [`FaultProxy`]: a loopback TCP proxy that injects network faults.
//!
//! Every accepted connection gets a connection to the target and two pump
//! threads, one per direction. A pump reads chunks from its source into a
//! queue stamped with the time they may be written (read time plus the
//! current delay) and writes due chunks to its destination unless the proxy
//! is stalled. Reads and writes time out after a short tick so that fault
//! changes take effect promptly; an idle pump sleeps in those timeouts, so
//! nothing spins.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Longest a pump waits before looking at the fault settings again.
const TICK: Duration = Duration::from_millis(10);
/// Shortest read timeout of a pump (a zero timeout would mean "none").
const MIN_WAIT: Duration = Duration::from_millis(1);
/// How long connecting to the target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Size of one read.
const CHUNK: usize = 16 * 1024;
/// Bytes one direction holds (stalled or delayed) before it stops reading
/// and leaves the rest in the kernel's buffers.
const MAX_HELD: usize = 8 << 20;

/// A TCP proxy on a free loopback port that forwards every connection to a
/// target port on 127.0.0.1, byte for byte in both directions, and injects
/// faults on demand: latency ([`set_delay`](Self::set_delay)), a black-holed
/// link ([`stall`](Self::stall)), cut connections ([`cut`](Self::cut)) and
/// refused connections ([`refuse`](Self::refuse)).
///
/// Point the code under test at [`url`](Self::url) instead of the server's
/// own URL. Faults apply at once to the current connections and to new
/// ones, and can be changed at any moment from any thread. The proxy uses
/// plain threads, so it works with blocking and async clients alike.
///
/// Dropping the proxy stops listening, closes every connection and waits
/// for its threads to end.
///
/// ```no_run
/// use redlua_test_support::{FaultProxy, RedisServer};
///
/// let server = RedisServer::start();
/// let proxy = FaultProxy::start(server.port());
/// let mut con = proxy.client().get_connection().unwrap();
/// proxy.cut(); // `con` now fails; new connections work
/// ```
pub struct FaultProxy {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// What the proxy's threads share.
struct Shared {
    target: SocketAddr,
    state: Mutex<State>,
    accepted: AtomicUsize,
    next_id: AtomicU64,
}

/// The fault settings and the open connections.
struct State {
    delay: Duration,
    stalled: bool,
    refuse: bool,
    stopping: bool,
    conns: Vec<Arc<Conn>>,
}

/// One proxied connection: the accepted socket and the one to the target.
struct Conn {
    id: u64,
    client: TcpStream,
    upstream: TcpStream,
    /// Set when the connection is cut: its pumps stop without forwarding
    /// anything more.
    killed: AtomicBool,
    /// Set by [`FaultProxy::stall_current`]: this connection alone stays
    /// silent for good.
    black_holed: AtomicBool,
}

/// Bytes read and not yet written; empty `data` marks the end of the stream.
struct Chunk {
    due: Instant,
    data: Vec<u8>,
    sent: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Conn {
    /// Closes both sockets both ways; the pumps notice and end.
    fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.upstream.shutdown(Shutdown::Both);
    }
}

impl FaultProxy {
    /// Starts a proxy on a free port of 127.0.0.1 forwarding to
    /// `127.0.0.1:<target_port>`, with no fault. The target need not be up:
    /// while nothing listens there, accepted connections are closed at once.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound or a thread cannot be spawned.
    pub fn start(target_port: u16) -> FaultProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .unwrap_or_else(|e| panic!("FaultProxy: cannot bind a loopback port: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("FaultProxy: cannot read the bound port: {e}"))
            .port();
        let shared = Arc::new(Shared {
            target: SocketAddr::from(([127, 0, 0, 1], target_port)),
            state: Mutex::new(State {
                delay: Duration::ZERO,
                stalled: false,
                refuse: false,
                stopping: false,
                conns: Vec::new(),
            }),
            accepted: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("fault-proxy-{port}"))
                .spawn(move || accept_loop(&listener, &shared))
                .unwrap_or_else(|e| panic!("FaultProxy: cannot spawn the accept thread: {e}"))
        };
        FaultProxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// The port the proxy listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The Redis URL of the proxy: `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A redis-rs client connecting through the proxy.
    ///
    /// # Panics
    ///
    /// Never in practice (the URL is always valid).
    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("a valid redis URL")
    }

    /// Delays every chunk forwarded, in both directions, by `delay` after it
    /// was read (added latency; the order of bytes is kept, so a chunk also
    /// waits for the ones before it). Applies to chunks read from now on;
    /// `Duration::ZERO` removes the latency.
    pub fn set_delay(&self, delay: Duration) {
        self.shared.lock().delay = delay;
    }

    /// Black-holes the link: stops forwarding in both directions on every
    /// connection, current and new, until [`resume`](Self::resume) or
    /// [`resume_dropping`](Self::resume_dropping). Connections stay open
    /// and new ones are still accepted (the TCP handshake completes), but
    /// the bytes they send, and their closing, are held: clients see no
    /// reply and no error, only their own timeouts. Note that a client
    /// whose connection setup sends commands (redis-rs sends `CLIENT
    /// SETINFO`) cannot finish connecting while stalled.
    pub fn stall(&self) {
        self.shared.lock().stalled = true;
    }

    /// Silences every current connection for good (a connection that died
    /// without a word: a dropped NAT entry, a crashed middlebox), while new
    /// connections work normally. The silenced ones stay open until the
    /// client closes them or [`cut`](Self::cut).
    pub fn stall_current(&self) {
        for conn in &self.shared.lock().conns {
            conn.black_holed.store(true, Ordering::SeqCst);
        }
    }

    /// Ends a [`stall`](Self::stall) like a healed link: the held bytes are
    /// delivered in order and forwarding goes on. Harmless when not stalled.
    pub fn resume(&self) {
        self.shared.lock().stalled = false;
    }

    /// Ends a [`stall`](Self::stall) like a partition after which the old
    /// connections are dead: every current connection is closed (as by
    /// [`cut`](Self::cut)) with its held bytes discarded, so nothing sent
    /// during the stall reaches the other side; new connections work.
    pub fn resume_dropping(&self) {
        let mut state = self.shared.lock();
        // Kill before un-stalling, under the lock: a pump that sees the
        // stall lifted also sees its connection killed.
        for conn in state.conns.drain(..) {
            conn.kill();
        }
        state.stalled = false;
    }

    /// Closes every current connection at once (shut down both ways, on the
    /// client side and the target side), discarding bytes not yet
    /// forwarded. A client gets an error on its next read or write; new
    /// connections work normally.
    pub fn cut(&self) {
        for conn in self.shared.lock().conns.drain(..) {
            conn.kill();
        }
    }

    /// While `refuse` is true, new connections are accepted and closed at
    /// once, without reaching the target (a dead service behind a live
    /// address). Current connections are not affected.
    pub fn refuse(&self, refuse: bool) {
        self.shared.lock().refuse = refuse;
    }

    /// The number of connections currently proxied: connected to the target
    /// and neither closed by both sides nor cut. A connection closed by a
    /// client leaves this count a moment later, once the close has gone
    /// through the proxy.
    pub fn connections(&self) -> usize {
        self.shared.lock().conns.len()
    }

    /// The number of connections accepted so far, including those closed at
    /// once because of [`refuse`](Self::refuse) or because the target was
    /// unreachable.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("FaultProxy")
            .field("port", &self.port)
            .field("target", &self.shared.target)
            .field("delay", &state.delay)
            .field("stalled", &state.stalled)
            .field("refuse", &state.refuse)
            .field("connections", &state.conns.len())
            .field("accepted", &self.accepted())
            .finish()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.stopping = true;
            for conn in state.conns.drain(..) {
                conn.kill();
            }
        }
        // Wake the accept loop up; it sees `stopping` and ends.
        let _ = TcpStream::connect_timeout(
            &SocketAddr::from(([127, 0, 0, 1], self.port)),
            Duration::from_secs(1),
        );
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Accepts connections until the proxy stops, then waits for the
/// connection threads to end.
fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    loop {
        let accepted = listener.accept();
        let refuse = {
            let state = shared.lock();
            if state.stopping {
                break;
            }
            state.refuse
        };
        let client = match accepted {
            Ok((client, _)) => client,
            Err(_) => {
                // E.g. out of file descriptors: do not spin.
                thread::sleep(TICK);
                continue;
            }
        };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if refuse {
            drop(client);
            continue;
        }
        // Forget the threads that are done (they need no join).
        workers.retain(|worker| !worker.is_finished());
        let shared = Arc::clone(shared);
        // If the thread cannot be spawned, the closure and the client with
        // it are dropped: the connection is closed.
        if let Ok(worker) = thread::Builder::new()
            .name("fault-proxy-conn".into())
            .spawn(move || serve(client, &shared))
        {
            workers.push(worker);
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
}

/// Proxies one accepted connection until both directions are done or it
/// is cut.
fn serve(client: TcpStream, shared: &Arc<Shared>) {
    let Ok(upstream) = TcpStream::connect_timeout(&shared.target, CONNECT_TIMEOUT) else {
        // Target unreachable: closing the client is all we can do.
        return;
    };
    for socket in [&client, &upstream] {
        // Forward small writes at once, and keep blocked writes short so
        // that the pumps keep looking at the fault settings.
        let _ = socket.set_nodelay(true);
        let _ = socket.set_write_timeout(Some(TICK));
    }
    let conn = Arc::new(Conn {
        id: shared.next_id.fetch_add(1, Ordering::SeqCst),
        client,
        upstream,
        killed: AtomicBool::new(false),
        black_holed: AtomicBool::new(false),
    });
    {
        let mut state = shared.lock();
        if state.stopping {
            return;
        }
        state.conns.push(Arc::clone(&conn));
    }
    let back = {
        let conn = Arc::clone(&conn);
        let shared = Arc::clone(shared);
        thread::Builder::new()
            .name("fault-proxy-pump".into())
            .spawn(move || pump(&conn.upstream, &conn.client, &conn, &shared))
    };
    match back {
        Ok(back) => {
            pump(&conn.client, &conn.upstream, &conn, shared);
            let _ = back.join();
        }
        Err(_) => conn.kill(),
    }
    shared.lock().conns.retain(|c| c.id != conn.id);
}

/// Whether an I/O error only means "nothing yet" (a timeout).
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// Forwards `src` to `dst` with the proxy's faults, until `src` ends (then
/// shuts `dst` down for writing), the connection breaks or is killed, or
/// the proxy stops.
fn pump(mut src: &TcpStream, mut dst: &TcpStream, conn: &Conn, shared: &Shared) {
    let mut queue: VecDeque<Chunk> = VecDeque::new();
    let mut held = 0usize;
    let mut ended = false;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let stalled = {
            let state = shared.lock();
            if state.stopping || conn.killed.load(Ordering::SeqCst) {
                return;
            }
            state.stalled || conn.black_holed.load(Ordering::SeqCst)
        };
        // How long to wait for input before looking again.
        let mut wait = TICK;
        if !stalled {
            while let Some(chunk) = queue.front_mut() {
                let now = Instant::now();
                if chunk.due > now {
                    wait = wait.min(chunk.due - now);
                    break;
                }
                if chunk.data.is_empty() {
                    let _ = dst.shutdown(Shutdown::Write);
                    return;
                }
                match dst.write(&chunk.data[chunk.sent..]) {
                    Ok(0) => {
                        conn.kill();
                        return;
                    }
                    Ok(n) => {
                        chunk.sent += n;
                        held -= n;
                        if chunk.sent == chunk.data.len() {
                            queue.pop_front();
                        }
                    }
                    Err(e) if transient(&e) => {
                        // The destination is not reading; the write already
                        // waited a tick.
                        wait = MIN_WAIT;
                        break;
                    }
                    Err(_) => {
                        conn.kill();
                        return;
                    }
                }
            }
        }
        if ended || held >= MAX_HELD {
            thread::sleep(wait);
            continue;
        }
        if src.set_read_timeout(Some(wait.max(MIN_WAIT))).is_err() {
            conn.kill();
            return;
        }
        match src.read(&mut buf) {
            Ok(n) => {
                ended = n == 0;
                held += n;
                // The delay now, not when the read began: a delay set while
                // this pump waited for input applies to what comes.
                let delay = shared.lock().delay;
                queue.push_back(Chunk {
                    due: Instant::now() + delay,
                    data: buf[..n].to_vec(),
                    sent: 0,
                });
            }
            Err(e) if transient(&e) => {}
            Err(_) => {
                conn.kill();
                return;
            }
        }
    }
}
