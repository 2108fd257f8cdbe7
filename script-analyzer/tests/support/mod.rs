//! A throwaway `redis-server` (test-support's) and a minimal RESP2 client,
//! for the tests that check the analyzer against a real server: the replies
//! are flattened to the strings the tests compare.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A `redis-server` on a free loopback port, killed on drop: the launcher
/// of `redlua-test-support`, as every crate's tests use it.
pub use redlua_test_support::RedisServer as Server;

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
