//! What a client says when it cannot connect: in the operator's words, with
//! redis-rs's own error kept as the source. Real sockets: a TCP listener
//! that answers as a web server does.

use redlua_runtime::{Error, LockClient};
use std::error::Error as _;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// A listener on a free loopback port that answers every connection with an
/// HTTP error, as a web server (or a health-check port) does; its URL.
fn http_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    format!("redis://127.0.0.1:{port}/")
}

#[tokio::test]
async fn an_endpoint_that_is_not_redis_is_named_as_such_with_the_parse_error_as_source() {
    let url = http_server();
    let connected =
        tokio::time::timeout(Duration::from_secs(20), LockClient::connect(url.as_str()))
            .await
            .expect("the connect attempt ends");
    let Err(error) = connected else {
        panic!("connected to an HTTP server")
    };
    let message = error.to_string();
    let addr = url.trim_end_matches('/');
    assert!(
        matches!(&error, Error::NotRedis { addr: a, .. } if a == addr),
        "{error:?}"
    );
    assert!(
        message.starts_with(&format!("{addr} did not answer as Redis")),
        "{message}"
    );
    assert!(!message.contains("Parse error"), "{message}");
    let source = error.source().expect("the raw error is kept");
    let raw = source
        .downcast_ref::<redis::RedisError>()
        .expect("a redis error");
    assert_eq!(raw.kind(), redis::ErrorKind::Parse, "{raw}");
}

#[tokio::test]
async fn a_url_without_a_scheme_says_what_a_redis_url_looks_like() {
    for url in ["127.0.0.1:6380", "localhost", "http://127.0.0.1:6380/"] {
        let error = match LockClient::connect(url).await {
            Err(error) => error,
            Ok(_) => panic!("{url}: connected"),
        };
        assert!(
            matches!(&error, Error::InvalidUrl { .. }),
            "{url}: {error:?}"
        );
        let message = error.to_string();
        assert!(
            message.starts_with(
                "not a Redis URL: expected redis://HOST:PORT/ or rediss://HOST:PORT/ (TLS)"
            ),
            "{url}: {message}"
        );
        let raw = error.source().expect("the raw error is kept");
        assert!(raw.to_string().contains("InvalidClientConfig"), "{raw}");
    }
}
