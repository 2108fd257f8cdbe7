//! `#[redis_script]` structs against a real, private `redis-server`: typed
//! results (async and blocking), the compile-time SHA1, `NOSCRIPT` recovery,
//! pipelines, read-only scripts (`EVALSHA_RO`) and variadic keys.

use redlua::redis::{self, AsyncCommands, Commands};
use redlua::redis_script;
use redlua_test_support::RedisServer;

/// Releases a lock if `owner` holds it, and announces it on `channel`.
#[redis_script("scripts/release.lua", returns = Option<i64>)]
pub struct Release<'a> {
    /// The lock.
    #[key]
    pub lock: &'a str,
    /// Where to announce the release.
    #[key]
    pub channel: &'a str,
    /// What to announce.
    #[arg]
    pub message: i64,
    /// Who releases.
    #[arg]
    pub owner: &'a str,
}

/// Adds to a counter that expires.
#[redis_script("scripts/counter.lua", returns = i64)]
struct Count {
    #[key]
    counter: String,
    #[arg]
    by: i64,
    #[arg]
    ttl_secs: u64,
}

/// Sums counters; read-only through its `#!lua flags=no-writes` shebang.
#[redis_script("scripts/sum.lua", returns = i64)]
struct Sum<'a> {
    #[key(variadic)]
    counters: Vec<&'a str>,
}

/// A script that writes, declared `read_only` with the lint switched off, to
/// see that it really runs with `EVALSHA_RO` (Redis then refuses the write).
#[redis_script(
    "lock-macros/tests/ui/scripts/writes.lua",
    read_only,
    allow(write_in_read_only)
)]
struct WriteFromReadOnly<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

/// Sets a key once: 1, or `false` (a nil reply) when it is already set.
#[redis_script("lock-macros/tests/ui/scripts/returns_false.lua", returns = Option<i64>)]
struct SetOnce<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

/// The same script read as `bool`: redis-rs reads nil as `false`.
#[redis_script("lock-macros/tests/ui/scripts/returns_false.lua", returns = bool)]
struct SetOnceFlag<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

/// The same script declared `i64`, with the `nil_return` error switched off,
/// to see at run time what the lint prevents.
#[redis_script("lock-macros/tests/ui/scripts/returns_false.lua", returns = i64, allow(nil_return))]
struct SetOnceAsInteger<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

/// GET returned as is, declared `String` with the `nil_return` warning
/// switched off.
#[redis_script("lock-macros/tests/ui/scripts/get.lua", returns = String, allow(nil_return))]
struct GetAsString<'a> {
    #[key]
    key: &'a str,
}

fn release<'a>(owner: &'a str) -> Release<'a> {
    Release {
        lock: "lock:{res}",
        channel: "lock:{res}:released",
        message: 7,
        owner,
    }
}

#[test]
fn generated_constants() {
    assert_eq!((Release::KEY_COUNT, Release::ARG_COUNT), (2, 2));
    assert_eq!((Count::KEY_COUNT, Count::ARG_COUNT), (1, 2));
    assert_eq!((Sum::KEY_COUNT, Sum::ARG_COUNT), (0, 0));
    assert_eq!(
        Release::SOURCE,
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/release.lua"))
    );
    assert_eq!(Release::SCRIPT.name, "Release");
    assert_eq!(Release::SCRIPT.path, "scripts/release.lua");
    assert_eq!(Release::SCRIPT.sha1, Release::SHA1);
    // Checked at compile time: the no-writes shebang of sum.lua implies read_only.
    const {
        assert!(!Release::SCRIPT.read_only);
        assert!(Sum::SCRIPT.read_only);
        assert!(WriteFromReadOnly::SCRIPT.read_only);
    }

    let call = release("me").call();
    let texts = |v: &[Vec<u8>]| -> Vec<String> {
        v.iter()
            .map(|b| String::from_utf8(b.clone()).unwrap())
            .collect()
    };
    assert_eq!(texts(call.keys()), ["lock:{res}", "lock:{res}:released"]);
    assert_eq!(texts(call.args()), ["7", "me"]);
}

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn typed_invoke_async() {
    let server = RedisServer::start();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();

    // The future can be spawned on a multi-threaded runtime.
    let lock = release("me");
    let future = lock.invoke(&mut con);
    assert_send(&future);
    // Free lock: 0.
    assert_eq!(future.await.unwrap(), Some(0));
    // Held by someone else: nil, and the lock stays.
    let () = con.set("lock:{res}", "other").await.unwrap();
    assert_eq!(release("me").invoke(&mut con).await.unwrap(), None);
    let holder: Option<String> = con.get("lock:{res}").await.unwrap();
    assert_eq!(holder.as_deref(), Some("other"));
    // Held by us: released.
    let () = con.set("lock:{res}", "me").await.unwrap();
    assert_eq!(release("me").invoke(&mut con).await.unwrap(), Some(1));
    let exists: bool = con.exists("lock:{res}").await.unwrap();
    assert!(!exists);

    let count = |by| Count {
        counter: "visits".to_owned(),
        by,
        ttl_secs: 60,
    };
    assert_eq!(count(2).invoke(&mut con).await.unwrap(), 2);
    assert_eq!(count(5).invoke(&mut con).await.unwrap(), 7);
    let ttl: i64 = con.ttl("visits").await.unwrap();
    assert!((1..=60).contains(&ttl), "ttl {ttl}");
}

#[test]
fn typed_invoke_blocking() {
    let server = RedisServer::start();
    let mut con = server.connection();

    assert_eq!(release("me").invoke_blocking(&mut con).unwrap(), Some(0));
    let () = con.set("lock:{res}", "me").unwrap();
    assert_eq!(release("other").invoke_blocking(&mut con).unwrap(), None);
    assert_eq!(release("me").invoke_blocking(&mut con).unwrap(), Some(1));
    assert_eq!(release("me").invoke_blocking(&mut con).unwrap(), Some(0));

    // A result type that does not fit the reply is an error, not a panic.
    let err = Sum {
        counters: vec!["missing"],
    }
    .call()
    .invoke::<Vec<String>, _>(&mut con)
    .unwrap_err();
    assert_eq!(err.kind(), redis::ErrorKind::Parse, "{err}");
}

#[test]
fn sha1_is_what_script_load_answers() {
    let server = RedisServer::start();
    let mut con = server.connection();
    for (source, sha1) in [
        (Release::SOURCE, Release::SHA1),
        (Count::SOURCE, Count::SHA1),
        (Sum::SOURCE, Sum::SHA1),
    ] {
        let answered: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(source)
            .query(&mut con)
            .unwrap();
        assert_eq!(answered, sha1);
        assert_eq!(sha1.len(), 40);
        assert!(sha1.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    }
}

fn script_exists(con: &mut redis::Connection, sha1: &str) -> bool {
    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(sha1)
        .query(con)
        .unwrap();
    exists == [true]
}

#[tokio::test]
async fn noscript_is_recovered_after_script_flush() {
    let server = RedisServer::start();
    let mut blocking = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let count = Count {
        counter: "n".to_owned(),
        by: 1,
        ttl_secs: 60,
    };

    assert!(!script_exists(&mut blocking, Count::SHA1));
    assert_eq!(count.invoke(&mut con).await.unwrap(), 1);
    assert!(script_exists(&mut blocking, Count::SHA1));

    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut blocking)
        .unwrap();
    assert!(!script_exists(&mut blocking, Count::SHA1));
    assert_eq!(count.invoke(&mut con).await.unwrap(), 2);
    assert!(script_exists(&mut blocking, Count::SHA1));

    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut blocking)
        .unwrap();
    assert_eq!(count.invoke_blocking(&mut blocking).unwrap(), 3);
    assert!(script_exists(&mut blocking, Count::SHA1));

    // Explicit loading.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut blocking)
        .unwrap();
    Count::load(&mut con).await.unwrap();
    assert!(script_exists(&mut blocking, Count::SHA1));
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut blocking)
        .unwrap();
    Count::load_blocking(&mut blocking).unwrap();
    assert!(script_exists(&mut blocking, Count::SHA1));
}

#[test]
fn pipeline() {
    let server = RedisServer::start();
    let mut con = server.connection();
    Count::load_blocking(&mut con).unwrap();
    Sum::load_blocking(&mut con).unwrap();

    let mut pipe = redis::pipe();
    Count {
        counter: "a".to_owned(),
        by: 3,
        ttl_secs: 60,
    }
    .add_to_pipeline(&mut pipe);
    Count {
        counter: "b".to_owned(),
        by: 4,
        ttl_secs: 60,
    }
    .add_to_pipeline(&mut pipe)
    .get("a");
    Sum {
        counters: vec!["a", "b"],
    }
    .add_to_pipeline(&mut pipe);
    let (a, b, read, sum): (i64, i64, String, i64) = pipe.query(&mut con).unwrap();
    assert_eq!((a, b, read.as_str(), sum), (3, 4, "3", 7));

    // In a transaction too.
    let mut tx = redis::pipe();
    tx.atomic();
    Sum {
        counters: vec!["a", "b", "a"],
    }
    .add_to_pipeline(&mut tx);
    let (sum,): (i64,) = tx.query(&mut con).unwrap();
    assert_eq!(sum, 10);
}

#[tokio::test]
async fn read_only_scripts_use_evalsha_ro() {
    let server = RedisServer::start();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = con.set("x", 5).await.unwrap();
    let () = con.set("y", 6).await.unwrap();
    let sum = Sum {
        counters: vec!["x", "y", "missing"],
    };
    assert_eq!(sum.invoke(&mut con).await.unwrap(), 11);

    // Redis refuses writes from a script called with EVALSHA_RO.
    let err = WriteFromReadOnly {
        key: "k",
        value: "v",
    }
    .invoke(&mut con)
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("Write commands are not allowed from read-only scripts"),
        "{err}"
    );
    let written: Option<String> = con.get("k").await.unwrap();
    assert_eq!(written, None);
}

#[tokio::test]
async fn variadic_keys() {
    let server = RedisServer::start();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = (1..=5).map(|i| format!("c{i}")).collect();
    for (i, key) in keys.iter().enumerate() {
        let () = con.set(key, i as i64 + 1).await.unwrap();
    }
    let sum = Sum {
        counters: keys.iter().map(String::as_str).collect(),
    };
    assert_eq!(sum.call().keys().len(), 5);
    assert_eq!(sum.invoke(&mut con).await.unwrap(), 15);
    let none = Sum { counters: vec![] };
    assert_eq!(none.invoke(&mut con).await.unwrap(), 0);
}

/// What `nil_return` is about: a returned `false` and a nil GET reply arrive
/// as nil, which `Option<T>` and `bool` hold and `i64` and `String` refuse.
#[test]
fn a_false_or_nil_reply_arrives_as_nil() {
    let server = RedisServer::start();
    let mut con = server.connection();
    let once = |value| SetOnce { key: "once", value };
    assert_eq!(once("a").invoke_blocking(&mut con).unwrap(), Some(1));
    assert_eq!(once("b").invoke_blocking(&mut con).unwrap(), None);
    let flag = SetOnceFlag {
        key: "once",
        value: "c",
    };
    assert!(!flag.invoke_blocking(&mut con).unwrap());
    let as_integer = SetOnceAsInteger {
        key: "once",
        value: "d",
    };
    let error = as_integer.invoke_blocking(&mut con).unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::Parse, "{error}");
    let fresh = SetOnceAsInteger {
        key: "fresh",
        value: "e",
    };
    assert_eq!(fresh.invoke_blocking(&mut con).unwrap(), 1);
    let missing = GetAsString { key: "missing" };
    let error = missing.invoke_blocking(&mut con).unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::Parse, "{error}");
    let _: () = con.set("present", "v").unwrap();
    let present = GetAsString { key: "present" };
    assert_eq!(present.invoke_blocking(&mut con).unwrap(), "v");
}

/// The line Redis reports (`@<chunk>:<line>`) in an error raised by a call.
fn reported_line(error: &redis::RedisError, chunk: &str) -> u32 {
    let text = error.to_string();
    let (_, after) = text
        .rsplit_once(&format!("@{chunk}:"))
        .unwrap_or_else(|| panic!("no line in {text}"));
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

#[test]
fn calls_names_the_command_at_the_line_redis_reports() {
    assert_eq!(Count::CALLS, [(2, "INCRBY"), (3, "EXPIRE")]);
    let server = RedisServer::start();
    let mut admin = server.connection();
    let _: () = redis::cmd("ACL")
        .arg(
            &[
                "SETUSER", "counter", "on", ">secret", "~*", "+@all", "-expire",
            ][..],
        )
        .query(&mut admin)
        .unwrap();
    let url = format!("redis://counter:secret@127.0.0.1:{}/", server.port());
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    let count = Count {
        counter: "c".into(),
        by: 1,
        ttl_secs: 60,
    };
    let error = count.invoke_blocking(&mut con).unwrap_err();
    assert!(
        error.to_string().contains("can't run this command"),
        "{error}"
    );
    let line = reported_line(&error, "user_script");
    assert_eq!(
        Count::CALLS.iter().find(|(at, _)| *at == line),
        Some(&(3, "EXPIRE")),
        "{error}"
    );
}
