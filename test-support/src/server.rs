//! One throwaway `redis-server` process: started on a free loopback port,
//! paused, restarted, killed on drop.

use crate::at_exit::clean_up_at_exit_too;
use crate::binary::redis_server_bin;
use crate::tls::Issued;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first `PING`.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How many times a start is retried when the chosen port was taken meanwhile.
const PORT_ATTEMPTS: usize = 10;
/// Offset of the cluster bus port (Redis uses `port + 10000` by default).
pub(crate) const CLUSTER_BUS_OFFSET: u16 = 10000;

/// Picks a loopback port that is free right now (and, for a cluster node,
/// whose bus port `port + 10000` is free too). Another process may still take
/// it before the server binds it; callers retry in that case.
pub(crate) fn pick_free_port(cluster_bus: bool) -> u16 {
    for _ in 0..100 {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("cannot read a bound port: {e}"))
            .port();
        if !cluster_bus {
            return port;
        }
        let Some(bus) = port.checked_add(CLUSTER_BUS_OFFSET) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", bus)).is_ok() {
            return port;
        }
    }
    panic!("cannot find a free loopback port (with a free cluster bus port)");
}

/// A private `redis-server` process on a free loopback port, killed on drop.
///
/// It runs with `--save "" --appendonly no --bind 127.0.0.1 --daemonize no`,
/// its working directory (`--dir`) is a fresh temporary directory removed on
/// drop, and it logs to a file in that directory (see [`log`](Self::log)).
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
    /// The extra arguments it was started with, for [`restart`](Self::restart).
    extra: Vec<OsString>,
    /// How it listens, and what it is.
    mode: Mode,
}

/// What a [`RedisServer`] process is.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// A server on a plain TCP port.
    Plain,
    /// A server that listens with TLS only, presenting this certificate.
    Tls(Issued),
    /// A cluster node with a plain port (for the helpers) and a TLS port
    /// (this one), its cluster bus and replication over TLS too.
    AlsoTls(Issued, u16),
    /// A sentinel (`--sentinel`), first started with this configuration
    /// file (which it rewrites, and which a restart keeps).
    Sentinel(String),
}

impl RedisServer {
    /// The server named by `REDIS_URL`, or else a throwaway one started
    /// here (announced on stdout): `(url, server)`. Keep `server` alive for
    /// as long as the URL is used; dropping it stops the server. For
    /// examples and demos.
    pub fn from_env_or_start() -> (String, Option<RedisServer>) {
        match std::env::var("REDIS_URL") {
            Ok(url) => (url, None),
            Err(_) => {
                let server = RedisServer::start();
                println!(
                    "REDIS_URL is not set: started a throwaway redis-server at {}",
                    server.url()
                );
                (server.url(), Some(server))
            }
        }
    }

    /// Starts a server with the default configuration and waits until it
    /// answers `PING`.
    ///
    /// # Panics
    ///
    /// When `redis-server` is not found, cannot be spawned, exits early, or
    /// does not answer `PING` in time (the message includes its log).
    pub fn start() -> RedisServer {
        Self::start_with(std::iter::empty::<&str>())
    }

    /// Keeps the server for the rest of the process (a test binary's shared
    /// server, never dropped): it is killed and its directory removed when
    /// the process exits (an `atexit` handler), as a drop would.
    ///
    /// ```no_run
    /// use std::sync::OnceLock;
    /// use redlua_test_support::RedisServer;
    /// static SERVER: OnceLock<&'static RedisServer> = OnceLock::new();
    /// let server = *SERVER.get_or_init(|| RedisServer::start().until_exit());
    /// # let _ = server;
    /// ```
    ///
    /// # Panics
    ///
    /// When the exit handler cannot be registered.
    pub fn until_exit(self) -> &'static RedisServer {
        let server: &'static RedisServer = Box::leak(Box::new(self));
        server.kill_at_exit();
        server
    }

    /// Kills this server when the process exits, and removes its directory
    /// (for a server that is never dropped).
    pub(crate) fn kill_at_exit(&self) {
        clean_up_at_exit_too(self.pid(), self.dir());
    }

    /// Starts a server with extra command-line configuration appended after
    /// the defaults (e.g. `["--maxmemory", "10mb"]`; later options override
    /// earlier ones), and waits until it answers `PING`.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_with<I, S>(args: I) -> RedisServer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let extra: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        Self::spawn(&extra, false, Mode::Plain)
    }

    /// Starts a replica of `primary` (`--replicaof 127.0.0.1 <port>`, then
    /// `args`), and waits until it is in sync: its link to the primary is
    /// up and the primary counts it `online`.
    ///
    /// ```no_run
    /// use redlua_test_support::RedisServer;
    /// let primary = RedisServer::start();
    /// let replica = RedisServer::start_replica_of(&primary, std::iter::empty::<&str>());
    /// # let _ = replica;
    /// ```
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start), and when the replica is not in sync
    /// within 10 s.
    pub fn start_replica_of<I, S>(primary: &RedisServer, args: I) -> RedisServer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut extra: Vec<OsString> = ["--replicaof", "127.0.0.1"]
            .iter()
            .map(OsString::from)
            .collect();
        extra.push(primary.port().to_string().into());
        extra.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        let replica = Self::spawn(&extra, false, Mode::Plain);
        let deadline = Instant::now() + Duration::from_secs(10);
        let online = format!("port={},state=online", replica.port());
        loop {
            let info = |server: &RedisServer| -> String {
                redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut server.connection())
                    .unwrap_or_else(|e| format!("INFO failed: {e}"))
            };
            let (mine, theirs) = (info(&replica), info(primary));
            if mine.contains("master_link_status:up")
                && mine.contains("master_sync_in_progress:0")
                && theirs.contains(&online)
                && acknowledges(primary, 1)
            {
                return replica;
            }
            assert!(
                Instant::now() < deadline,
                "replica {} not in sync within 10 s\n{mine}\n--- primary ---\n{theirs}",
                replica.url()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether `replicas` replicas of `primary` acknowledge a write within
/// 500 ms (`WAIT`): a replica that just went online may not yet (a
/// replica-synced lock client would then fail its first acquires closed).
pub(crate) fn acknowledges(primary: &RedisServer, replicas: usize) -> bool {
    let mut con = primary.connection();
    let written: redis::RedisResult<()> = redis::cmd("SET")
        .arg("redlua-test-support:acknowledged")
        .arg(1)
        .arg("PX")
        .arg(1000)
        .query(&mut con);
    let acked: redis::RedisResult<usize> =
        redis::cmd("WAIT").arg(replicas).arg(500).query(&mut con);
    written.is_ok() && acked.is_ok_and(|n| n >= replicas)
}

impl RedisServer {
    /// Starts a server that listens with TLS only (`--port 0 --tls-port
    /// <port>`), presenting `cert` (made by a [`TestCa`](crate::TestCa)) and trusting its
    /// CA for client certificates, with `--tls-auth-clients no` unless
    /// `args` says otherwise (`["--tls-auth-clients", "yes"]` asks every
    /// client for a certificate). It is ready when its log says so: this
    /// crate speaks no TLS, so [`client`](Self::client) and
    /// [`connection`](Self::connection) panic for it; its
    /// [`url`](Self::url) is `rediss://127.0.0.1:<port>/`.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_tls<I, S>(cert: &Issued, args: I) -> RedisServer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let extra: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        Self::spawn(&extra, false, Mode::Tls(cert.clone()))
    }

    /// Starts a sentinel (`redis-server <conf> --sentinel`) whose
    /// configuration file, in its directory, starts as `conf`.
    pub(crate) fn start_sentinel(conf: String, extra: &[OsString]) -> RedisServer {
        Self::spawn(extra, false, Mode::Sentinel(conf))
    }

    /// Starts a server on a plain port and a TLS port (presenting `cert`,
    /// replication over TLS), with `extra` arguments.
    pub(crate) fn start_also_tls(cert: &Issued, extra: &[OsString]) -> RedisServer {
        Self::spawn(extra, false, Mode::AlsoTls(cert.clone(), 0))
    }

    /// The TLS port of a server started with TLS besides its plain port.
    pub(crate) fn tls_port(&self) -> Option<u16> {
        match self.mode {
            Mode::AlsoTls(_, port) => Some(port),
            _ => None,
        }
    }

    pub(crate) fn spawn(extra: &[OsString], cluster_bus: bool, mode: Mode) -> RedisServer {
        let bin = redis_server_bin();
        let mut last_log = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = pick_free_port(cluster_bus);
            let mode = match &mode {
                Mode::AlsoTls(cert, _) => Mode::AlsoTls(cert.clone(), pick_free_port(false)),
                other => other.clone(),
            };
            let dir = tempfile::Builder::new()
                .prefix("redlua-redis-")
                .tempdir()
                .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
            let child = launch(&bin, port, dir.path(), &mode, extra);
            let mut server = RedisServer {
                child,
                port,
                dir,
                extra: extra.to_vec(),
                mode: mode.clone(),
            };
            match server.wait_ready(0) {
                Ok(()) => return server,
                Err(Exit::PortTaken) => {
                    last_log = server.log();
                    // Dropping `server` kills it (if still alive); try another port.
                }
                Err(Exit::Failed(why)) => {
                    let log = server.log();
                    drop(server);
                    panic!(
                        "redis-server ({}) on port {port} {why}\n--- server log ---\n{log}",
                        bin.display()
                    );
                }
            }
        }
        panic!(
            "redis-server could not bind a free port in {PORT_ATTEMPTS} attempts\n\
             --- last server log ---\n{last_log}"
        );
    }

    /// Suspends the server process (`SIGSTOP`) until [`resume`](Self::resume):
    /// a hung server. The kernel still completes TCP handshakes on its port
    /// (up to the listen backlog) and buffers what clients send, but nothing
    /// is answered: clients see neither a reply nor an error, only their own
    /// timeouts. Dropping a paused server still kills it.
    ///
    /// # Panics
    ///
    /// When the signal cannot be sent (e.g. the process is gone).
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP, "SIGSTOP");
    }

    /// Lets a [`pause`](Self::pause)d server run again (`SIGCONT`); it then
    /// answers what was sent meanwhile. Harmless on a running server.
    ///
    /// # Panics
    ///
    /// When the signal cannot be sent (e.g. the process is gone).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT, "SIGCONT");
    }

    fn signal(&self, signal: libc::c_int, name: &str) {
        let pid = libc::pid_t::try_from(self.child.id())
            .unwrap_or_else(|_| panic!("pid {} does not fit a pid_t", self.child.id()));
        // SAFETY: kill(2) has no memory-safety preconditions; `pid` is our
        // own child, which is not reaped before `self.child` is waited on.
        if unsafe { libc::kill(pid, signal) } != 0 {
            let e = std::io::Error::last_os_error();
            panic!("cannot send {name} to redis-server (pid {pid}): {e}");
        }
    }

    /// Kills the server (`SIGKILL`, a crash: no shutdown save) and starts a
    /// new `redis-server` on the same port, in the same directory, with the
    /// same extra arguments, then waits until it answers `PING`. Existing
    /// connections are broken; clients must reconnect.
    ///
    /// Whether data survives depends on those arguments: by default the
    /// server has no persistence and comes back empty, like a restart without
    /// persistence; started with `["--appendonly", "yes"]`, it reloads its
    /// append-only file and keeps every write it had acknowledged.
    ///
    /// # Panics
    ///
    /// When another process took the port meanwhile, or the new server
    /// exits early or does not answer `PING` in time (the message includes
    /// the log).
    pub fn restart(&mut self) {
        // Kill works on a paused (stopped) process too.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let log_from = std::fs::metadata(self.dir.path().join("redis.log"))
            .map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX));
        let bin = redis_server_bin();
        self.child = launch(&bin, self.port, self.dir.path(), &self.mode, &self.extra);
        match self.wait_ready(log_from) {
            Ok(()) => {}
            Err(Exit::PortTaken) => panic!(
                "cannot restart redis-server: port {} was taken by another process \
                 while it was down\n--- server log ---\n{}",
                self.port,
                self.log()
            ),
            Err(Exit::Failed(why)) => panic!(
                "restarted redis-server ({}) on port {} {why}\n--- server log ---\n{}",
                bin.display(),
                self.port,
                self.log()
            ),
        }
    }

    /// Waits until the server answers `PING`, or it exits, or time runs out.
    /// Whether the server that answers on `con` is this one: another
    /// process (of a test running beside this one) may have bound the port
    /// between [`pick_free_port`] and this server's start, and then this
    /// server exits with "Address already in use" while the other answers.
    fn answers_itself(&self, con: &mut redis::Connection) -> bool {
        let Ok(info) = redis::cmd("INFO").arg("server").query::<String>(con) else {
            return false;
        };
        info.lines()
            .find_map(|line| line.strip_prefix("process_id:"))
            .and_then(|pid| pid.trim().parse::<u32>().ok())
            == Some(self.child.id())
    }

    fn wait_ready(&mut self, log_from: usize) -> Result<(), Exit> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let plain = format!("redis://127.0.0.1:{}/", self.port);
        let client = redis::Client::open(plain)
            .map_err(|e| Exit::Failed(format!("has an invalid URL: {e}")))?;
        loop {
            if matches!(self.mode, Mode::Tls(_)) {
                // No TLS here: the log says when it listens.
                let log = std::fs::read(self.dir.path().join("redis.log")).unwrap_or_default();
                if String::from_utf8_lossy(log.get(log_from..).unwrap_or_default())
                    .contains("Ready to accept connections")
                    && std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                {
                    return Ok(());
                }
            } else if let Ok(mut con) =
                client.get_connection_with_timeout(Duration::from_millis(500))
                && let Ok(pong) = redis::cmd("PING").query::<String>(&mut con)
                && pong == "PONG"
                && self.answers_itself(&mut con)
            {
                return Ok(());
            }
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    let log = self.log();
                    return Err(if log.contains("Address already in use") {
                        Exit::PortTaken
                    } else {
                        Exit::Failed(format!("exited early ({status})"))
                    });
                }
                Ok(None) => {}
                Err(e) => return Err(Exit::Failed(format!("cannot be waited on: {e}"))),
            }
            if Instant::now() >= deadline {
                return Err(Exit::Failed(format!(
                    "did not answer PING within {READY_TIMEOUT:?}"
                )));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The TCP port the server listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connection URL of the server: `redis://127.0.0.1:<port>/`, or
    /// `rediss://127.0.0.1:<port>/` when it was started with
    /// [`start_tls`](Self::start_tls).
    pub fn url(&self) -> String {
        let scheme = match self.mode {
            Mode::Tls(_) => "rediss",
            Mode::Plain | Mode::Sentinel(_) | Mode::AlsoTls(..) => "redis",
        };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// The TLS URL of a node of [`RedisCluster::start_tls`](crate::RedisCluster::start_tls)
    /// (`rediss://127.0.0.1:<tls port>/`); `None` for other servers.
    pub fn tls_url(&self) -> Option<String> {
        match &self.mode {
            Mode::AlsoTls(_, tls_port) => Some(format!("rediss://127.0.0.1:{tls_port}/")),
            Mode::Tls(_) => Some(self.url()),
            Mode::Plain | Mode::Sentinel(_) => None,
        }
    }

    /// A redis-rs client for this server.
    ///
    /// # Panics
    ///
    /// For a server started with [`start_tls`](Self::start_tls) (this crate
    /// speaks no TLS: make a client with the CA's certificate instead).
    pub fn client(&self) -> redis::Client {
        assert!(
            !matches!(self.mode, Mode::Tls(_)),
            "{} listens with TLS only: make a client that trusts its CA",
            self.url()
        );
        redis::Client::open(self.url()).expect("a valid redis URL")
    }

    /// A new blocking connection to this server.
    ///
    /// # Panics
    ///
    /// When the server cannot be reached.
    pub fn connection(&self) -> redis::Connection {
        self.client()
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.url()))
    }

    /// The server's working directory (a temporary directory removed on drop).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The operating-system process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's log so far (its log file, then anything it printed on
    /// stdout/stderr), for diagnostics.
    pub fn log(&self) -> String {
        let read =
            |name: &str| std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        let mut log = read("redis.log");
        let stdio = read("stdio.log");
        if !stdio.trim().is_empty() {
            log.push_str("--- stdout/stderr ---\n");
            log.push_str(&stdio);
        }
        log
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // The process may already have exited; both errors are then harmless.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `bin` on `port` with `dir` as its working directory, the default
/// configuration (TLS only, on `port`, with `tls`), then `extra`. Does not
/// wait for it to be ready.
fn launch(bin: &Path, port: u16, dir: &Path, mode: &Mode, extra: &[OsString]) -> Child {
    let log_file = dir.join("redis.log");
    let stdio_file = dir.join("stdio.log");
    let stdio = File::create(&stdio_file)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", stdio_file.display()));
    let stdio_err = stdio
        .try_clone()
        .unwrap_or_else(|e| panic!("cannot duplicate a file handle: {e}"));
    let mut command = Command::new(bin);
    match mode {
        Mode::Plain => command.arg("--port").arg(port.to_string()),
        Mode::Sentinel(conf) => {
            let file = dir.join("sentinel.conf");
            if !file.exists() {
                std::fs::write(&file, conf)
                    .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
            }
            // The configuration file comes first.
            command
                .arg(&file)
                .arg("--sentinel")
                .arg("--port")
                .arg(port.to_string())
        }
        Mode::AlsoTls(tls, tls_port) => command
            .arg("--port")
            .arg(port.to_string())
            .arg("--tls-port")
            .arg(tls_port.to_string())
            .arg("--tls-cert-file")
            .arg(&tls.cert)
            .arg("--tls-key-file")
            .arg(&tls.key)
            .arg("--tls-ca-cert-file")
            .arg(&tls.ca_cert)
            .arg("--tls-auth-clients")
            .arg("no")
            .arg("--tls-cluster")
            .arg("yes")
            // With TLS the bus would follow the TLS port; keep it at the
            // plain port's (checked free, and what CLUSTER MEET assumes).
            .arg("--cluster-port")
            .arg((u32::from(port) + u32::from(CLUSTER_BUS_OFFSET)).to_string())
            .arg("--tls-replication")
            .arg("yes"),
        Mode::Tls(tls) => command
            .arg("--port")
            .arg("0")
            .arg("--tls-port")
            .arg(port.to_string())
            .arg("--tls-cert-file")
            .arg(&tls.cert)
            .arg("--tls-key-file")
            .arg(&tls.key)
            .arg("--tls-ca-cert-file")
            .arg(&tls.ca_cert)
            .arg("--tls-auth-clients")
            .arg("no"),
    };
    command
        .arg("--bind")
        .arg("127.0.0.1")
        .arg("--save")
        .arg("")
        .arg("--appendonly")
        .arg("no")
        .arg("--daemonize")
        .arg("no")
        .arg("--dir")
        .arg(dir)
        .arg("--logfile")
        .arg(&log_file)
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdio)
        .stderr(stdio_err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", bin.display()))
}

/// Why a started server is not usable.
enum Exit {
    /// The port was taken between picking it and the server binding it.
    PortTaken,
    /// Any other failure, described.
    Failed(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_ready_only_when_it_answers_itself() {
        let server = RedisServer::start();
        let mut con = server.connection();
        assert!(server.answers_itself(&mut con));
        // Another process whose port this server's answers come from (as
        // when a test beside this one took the port first).
        let other = RedisServer {
            child: Command::new("sleep").arg("10").spawn().expect("sleep"),
            port: server.port(),
            dir: tempfile::tempdir().unwrap(),
            extra: Vec::new(),
            mode: Mode::Plain,
        };
        assert!(!other.answers_itself(&mut con));
    }

    #[test]
    fn restart_panics_when_the_port_was_taken() {
        let mut server = RedisServer::start();
        let port = server.port();
        let _ = server.child.kill();
        let _ = server.child.wait();
        let _squatter = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.restart()))
            .expect_err("the port is taken");
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains(&format!("port {port} was taken")), "{msg}");
    }
}
