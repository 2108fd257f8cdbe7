//! A throwaway `redis-server` and a minimal RESP2 client, for the tests
//! that check the analyzer against a real server.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` on a free loopback port, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

impl Server {
    pub fn start() -> Server {
        let port = loop {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
            let port = listener.local_addr().unwrap().port();
            if port != 6379 {
                break port;
            }
        };
        let dir =
            std::env::temp_dir().join(format!("redlua-analyzer-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start redis-server ({e}); these tests need Redis 7: \
                     install it with `apt-get install redis-server` (or put redis-server on PATH)"
                )
            });
        let server = Server { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A RESP2 reply, flattened to what the test needs.
#[derive(Debug, PartialEq)]
pub enum Reply {
    Ok(String),
    Error(String),
}

pub struct Conn {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn new(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    pub fn call(&mut self, args: &[&str]) -> Reply {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).expect("send");
        self.read()
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read reply");
        line.trim_end_matches("\r\n").to_string()
    }

    fn read(&mut self) -> Reply {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" | ":" => Reply::Ok(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            "$" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return Reply::Ok("(nil)".into());
                }
                let mut buf = vec![0; n as usize + 2];
                std::io::Read::read_exact(&mut self.reader, &mut buf).unwrap();
                buf.truncate(n as usize);
                Reply::Ok(String::from_utf8_lossy(&buf).into_owned())
            }
            "*" => {
                let n: i64 = rest.parse().unwrap();
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    match self.read() {
                        Reply::Ok(s) => items.push(s),
                        Reply::Error(e) => items.push(format!("(error {e})")),
                    }
                }
                Reply::Ok(format!("[{}]", items.join(", ")))
            }
            other => panic!("unexpected reply type {other:?}"),
        }
    }
}
