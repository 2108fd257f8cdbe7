//! `ScriptDef` / `ScriptCall` against real redis-server processes.

use std::sync::{LazyLock, OnceLock};

use redis::{ErrorKind, Value};
use redlua_runtime::function::{FunctionDef, LibraryDef};
use redlua_runtime::script::ScriptDef;
use redlua_test_support::{RedisCluster, RedisServer};

/// The cluster of this test binary (three primaries), started once and
/// stopped when the process exits.
fn cluster() -> &'static RedisCluster {
    static CLUSTER: OnceLock<&'static RedisCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| RedisCluster::start(3).until_exit())
}

/// Builds a `ScriptDef` by hand, as `#[redis_script]` would.
fn def(name: &'static str, path: &'static str, source: &'static str, read_only: bool) -> ScriptDef {
    let sha1: &'static str = Box::leak(
        sha1_smol::Sha1::from(source)
            .digest()
            .to_string()
            .into_boxed_str(),
    );
    ScriptDef {
        name,
        path,
        source,
        sha1,
        read_only,
    }
}

macro_rules! script {
    ($static:ident, $name:literal, $file:literal, read_only = $ro:literal) => {
        static $static: LazyLock<ScriptDef> = LazyLock::new(|| {
            def(
                $name,
                concat!("tests/user_scripts/", $file),
                include_str!(concat!("user_scripts/", $file)),
                $ro,
            )
        });
    };
}

script!(SET_GET, "SetGet", "set_get.lua", read_only = false);
script!(INCR_BY, "IncrBy", "incr_by.lua", read_only = false);
script!(ECHO_KEYS, "EchoKeys", "echo_keys.lua", read_only = false);
script!(GET, "Get", "get.lua", read_only = true);
script!(
    WRITE_RO,
    "WriteInReadOnly",
    "write_in_read_only.lua",
    read_only = true
);
script!(HELLO, "Hello", "hello.lua", read_only = true);
script!(FAILS, "Fails", "fails.lua", read_only = false);

/// `SCRIPT EXISTS sha` on one plain (non-cluster) connection.
fn exists(con: &mut redis::Connection, sha: &str) -> bool {
    let answer: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(sha)
        .query(con)
        .unwrap();
    answer == [true]
}

fn flush(con: &mut redis::Connection) {
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(con).unwrap();
}

#[test]
fn sha1_matches_script_load() {
    let server = RedisServer::start();
    let mut con = server.connection();
    for script in [
        &SET_GET, &INCR_BY, &ECHO_KEYS, &GET, &WRITE_RO, &HELLO, &FAILS,
    ] {
        let answered: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(script.source)
            .query(&mut con)
            .unwrap();
        assert_eq!(answered, script.sha1, "{}", script.path);
        assert_eq!(script.sha1.len(), 40);
    }
    // `load_blocking` agrees as well.
    flush(&mut con);
    SET_GET.load_blocking(&mut con).unwrap();
    assert!(exists(&mut con, SET_GET.sha1));
}

#[test]
fn load_rejects_a_wrong_sha1() {
    static WRONG: ScriptDef = ScriptDef {
        name: "Wrong",
        path: "tests/user_scripts/none.lua",
        source: "return 'not what the sha says'",
        sha1: "0123456789012345678901234567890123456789",
        read_only: false,
    };
    let server = RedisServer::start();
    let mut con = server.connection();
    let err = WRONG.load_blocking(&mut con).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Client);
    assert!(
        err.to_string()
            .contains("0123456789012345678901234567890123456789"),
        "{err}"
    );
    // invoke: NOSCRIPT -> SCRIPT LOAD -> mismatch is reported, no loop.
    let err = WRONG.call().invoke::<Value, _>(&mut con).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Client, "{err}");
}

#[test]
fn blocking_invoke_loads_then_uses_evalsha() {
    let server = RedisServer::start();
    let mut con = server.connection();
    assert!(!exists(&mut con, SET_GET.sha1));
    let v: String = SET_GET
        .call()
        .key(&"k")
        .arg(&"v1")
        .invoke(&mut con)
        .unwrap();
    assert_eq!(v, "v1");
    assert!(
        exists(&mut con, SET_GET.sha1),
        "NOSCRIPT recovery must load the script"
    );
    let v: String = SET_GET
        .call()
        .key(&"k")
        .arg(&"v2")
        .invoke(&mut con)
        .unwrap();
    assert_eq!(v, "v2");
    let stored: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(stored, "v2");
}

#[test]
fn blocking_noscript_recovery_runs_the_script_once() {
    let server = RedisServer::start();
    let mut con = server.connection();
    let n: i64 = INCR_BY.call().key(&"n").arg(&5).invoke(&mut con).unwrap();
    assert_eq!(n, 5);
    flush(&mut con);
    assert!(!exists(&mut con, INCR_BY.sha1));
    let n: i64 = INCR_BY.call().key(&"n").arg(&5).invoke(&mut con).unwrap();
    assert_eq!(n, 10, "the script must run exactly once after NOSCRIPT");
    assert!(exists(&mut con, INCR_BY.sha1));
}

#[tokio::test]
async fn async_noscript_recovery_after_flush() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let n: i64 = INCR_BY
        .call()
        .key(&"n")
        .arg(&2)
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 2);
    assert!(exists(&mut check, INCR_BY.sha1));
    flush(&mut check);
    assert!(!exists(&mut check, INCR_BY.sha1));
    let n: i64 = INCR_BY
        .call()
        .key(&"n")
        .arg(&3)
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 5, "the script must run exactly once after NOSCRIPT");
    assert!(
        exists(&mut check, INCR_BY.sha1),
        "the script must have been reloaded"
    );
}

#[tokio::test]
async fn async_futures_are_send_and_spawnable() {
    let server = RedisServer::start();
    let con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut handles = Vec::new();
    for i in 0..4 {
        let mut con = con.clone();
        handles.push(tokio::spawn(async move {
            let mut call = SET_GET.call();
            call.key(&format!("k{i}")).arg(&i);
            call.invoke_async::<i64, _>(&mut con).await
        }));
    }
    for (i, handle) in handles.into_iter().enumerate() {
        assert_eq!(handle.await.unwrap().unwrap(), i as i64);
    }
}

#[tokio::test]
async fn pipeline_after_load() {
    let server = RedisServer::start();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    INCR_BY.load(&mut con).await.unwrap();
    SET_GET.load(&mut con).await.unwrap();
    let mut pipe = redis::pipe();
    pipe.atomic();
    INCR_BY.call().key(&"p").arg(&1).add_to_pipeline(&mut pipe);
    INCR_BY.call().key(&"p").arg(&10).add_to_pipeline(&mut pipe);
    SET_GET
        .call()
        .key(&"s")
        .arg(&"x")
        .add_to_pipeline(&mut pipe)
        .cmd("GET")
        .arg("p");
    let (a, b, s, p): (i64, i64, String, i64) = pipe.query_async(&mut con).await.unwrap();
    assert_eq!((a, b, s.as_str(), p), (1, 11, "x", 11));

    // Without a load, a pipeline cannot recover: NOSCRIPT surfaces as an error.
    let mut check = server.connection();
    flush(&mut check);
    let mut pipe = redis::pipe();
    INCR_BY.call().key(&"p").arg(&1).add_to_pipeline(&mut pipe);
    let err = pipe.query_async::<(i64,)>(&mut con).await.unwrap_err();
    assert_eq!(err.code(), Some("NOSCRIPT"), "{err}");
}

#[test]
fn blocking_pipeline_after_load_blocking() {
    let server = RedisServer::start();
    let mut con = server.connection();
    ECHO_KEYS.load_blocking(&mut con).unwrap();
    let mut pipe = redis::pipe();
    ECHO_KEYS
        .call()
        .key(&"a")
        .arg(&1)
        .add_to_pipeline(&mut pipe);
    HELLO.load_blocking(&mut con).unwrap();
    HELLO.call().add_to_pipeline(&mut pipe);
    let (echo, hello): (Vec<String>, String) = pipe.query(&mut con).unwrap();
    assert_eq!(echo, ["1", "1", "a", "1"]);
    assert_eq!(hello, "hello");
}

#[tokio::test]
async fn read_only_script_uses_evalsha_ro() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let _: () = redis::cmd("SET")
        .arg("r")
        .arg("value")
        .query(&mut check)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut check)
        .unwrap();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let v: String = GET.call().key(&"r").invoke_async(&mut con).await.unwrap();
    assert_eq!(v, "value");
    let v: Option<String> = GET.call().key(&"missing").invoke(&mut check).unwrap();
    assert_eq!(v, None);
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut check)
        .unwrap();
    assert!(stats.contains("cmdstat_evalsha_ro:calls=3,"), "{stats}"); // NOSCRIPT + retry + blocking
    assert!(!stats.contains("cmdstat_evalsha:"), "{stats}");

    // A write inside a read-only script fails with the server's error, both ways.
    let err = WRITE_RO
        .call()
        .key(&"r")
        .invoke_async::<Value, _>(&mut con)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Write commands are not allowed from read-only scripts"),
        "{err}"
    );
    let err = WRITE_RO
        .call()
        .key(&"r")
        .invoke::<Value, _>(&mut check)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Write commands are not allowed from read-only scripts"),
        "{err}"
    );
    let v: String = redis::cmd("GET").arg("r").query(&mut check).unwrap();
    assert_eq!(v, "value", "the write must not have happened");
}

#[test]
fn vec_key_field_expands_to_several_keys() {
    let server = RedisServer::start();
    let mut con = server.connection();
    let keys = vec!["k1".to_string(), "k2".to_string(), "k3".to_string()];
    let args: Vec<i64> = vec![7, 8];
    let out: Vec<String> = ECHO_KEYS
        .call()
        .key(&"k0")
        .key(&keys)
        .arg(&args)
        .arg(&"last")
        .invoke(&mut con)
        .unwrap();
    assert_eq!(out, ["4", "3", "k0", "k1", "k2", "k3", "7", "8", "last"]);
    // Zero keys and zero args.
    let out: Vec<i64> = ECHO_KEYS.call().invoke(&mut con).unwrap();
    assert_eq!(out, [0, 0]);
    // Binary keys pass through untouched.
    let out: (i64, i64, Vec<u8>) = ECHO_KEYS
        .call()
        .key(&b"\x00\xff".as_slice())
        .invoke(&mut con)
        .unwrap();
    assert_eq!(out, (1, 0, b"\x00\xff".to_vec()));
}

#[test]
fn script_errors_and_compile_errors_are_returned() {
    static BROKEN: LazyLock<ScriptDef> =
        LazyLock::new(|| def("Broken", "tests/user_scripts/broken.lua", "return (", false));
    let server = RedisServer::start();
    let mut con = server.connection();
    let err = FAILS.call().invoke::<Value, _>(&mut con).unwrap_err();
    assert_eq!(err.code(), Some("REDLUA_TEST"), "{err}");
    assert_eq!(err.detail(), Some("failure on purpose"), "{err}");
    let err = BROKEN.call().invoke::<Value, _>(&mut con).unwrap_err();
    assert!(err.to_string().contains("Error compiling script"), "{err}");
    // A reply of the wrong type is a conversion error, not a panic.
    let err = HELLO.call().invoke::<i64, _>(&mut con).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Parse | ErrorKind::UnexpectedReturnType
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn cluster_scripts_on_every_node_survive_script_flush() {
    let cluster = cluster();
    let client = cluster.client();
    let mut con = client.get_async_connection().await.unwrap();
    // Slots: "b" = 3300 (node 0), "c" = 7365 (node 1), "a" = 15495 (node 2).
    let keys = ["b", "c", "a"];
    for round in 0..2 {
        if round == 1 {
            for node in cluster.nodes() {
                let mut direct = node.connection();
                flush(&mut direct);
                assert!(!exists(&mut direct, SET_GET.sha1));
                assert!(!exists(&mut direct, INCR_BY.sha1));
            }
        }
        for (i, key) in keys.iter().enumerate() {
            let value = format!("{key}-{round}");
            let v: String = SET_GET
                .call()
                .key(key)
                .arg(&value)
                .invoke_async(&mut con)
                .await
                .unwrap();
            assert_eq!(v, value);
            // The key really lives on node i.
            let mut direct = cluster.nodes()[i].connection();
            let stored: String = redis::cmd("GET").arg(*key).query(&mut direct).unwrap();
            assert_eq!(stored, value);
            let n: i64 = INCR_BY
                .call()
                .key(&format!("{{{key}}}n"))
                .arg(&1)
                .invoke_async(&mut con)
                .await
                .unwrap();
            assert_eq!(n, round + 1, "INCRBY must run exactly once per call");
            // Read-only script through EVALSHA_RO, routed by its key.
            let got: String = GET.call().key(key).invoke_async(&mut con).await.unwrap();
            assert_eq!(got, value);
        }
        // A keyless script runs on some node.
        let hello: String = HELLO.call().invoke_async(&mut con).await.unwrap();
        assert_eq!(hello, "hello");
        for node in cluster.nodes() {
            let mut direct = node.connection();
            assert!(
                exists(&mut direct, SET_GET.sha1),
                "SCRIPT LOAD must reach every node"
            );
        }
    }

    // The cluster connection's future is Send.
    let mut spawned_con = con.clone();
    let handle = tokio::spawn(async move {
        SET_GET
            .call()
            .key(&"a")
            .arg(&"spawned")
            .invoke_async::<String, _>(&mut spawned_con)
            .await
    });
    assert_eq!(handle.await.unwrap().unwrap(), "spawned");

    // The blocking cluster connection works too, including after a flush.
    let mut sync_con = client.get_connection().unwrap();
    for node in cluster.nodes() {
        flush(&mut node.connection());
    }
    let v: String = SET_GET
        .call()
        .key(&"c")
        .arg(&"sync")
        .invoke(&mut sync_con)
        .unwrap();
    assert_eq!(v, "sync");
    assert!(exists(&mut cluster.nodes()[1].connection(), SET_GET.sha1));

    // Keys of one call must share a slot: the server's CROSSSLOT error comes back.
    let err = ECHO_KEYS
        .call()
        .key(&vec!["a", "b"])
        .invoke_async::<Value, _>(&mut con)
        .await
        .unwrap_err();
    assert!(
        err.code() == Some("CROSSSLOT") || err.to_string().contains("CROSSSLOT"),
        "{err:?}"
    );
}

static COUNTERS: LibraryDef = LibraryDef {
    name: "counters",
    path: "tests/user_scripts/counters_lib.lua",
    source: include_str!("user_scripts/counters_lib.lua"),
};

static BUMP: FunctionDef = FunctionDef {
    name: "Bump",
    function: "bump",
    library: &COUNTERS,
    read_only: false,
};

static PEEK: FunctionDef = FunctionDef {
    name: "Peek",
    function: "peek",
    library: &COUNTERS,
    read_only: true,
};

/// Whether the node has the `counters` library.
fn has_counters(con: &mut redis::Connection) -> bool {
    let list: Vec<Value> = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("counters")
        .query(con)
        .unwrap();
    !list.is_empty()
}

fn function_flush(con: &mut redis::Connection) {
    let _: () = redis::cmd("FUNCTION").arg("FLUSH").query(con).unwrap();
}

#[tokio::test]
async fn cluster_functions_are_loaded_on_every_primary_after_function_flush() {
    let cluster = cluster();
    let client = cluster.client();
    let mut con = client.get_async_connection().await.unwrap();
    // Slots: "{b}" is on node 0, "{c}" on node 1, "{a}" on node 2.
    let tags = ["b", "c", "a"];
    for round in 0..2 {
        if round == 1 {
            for node in cluster.nodes() {
                let mut direct = node.connection();
                function_flush(&mut direct);
                assert!(!has_counters(&mut direct));
            }
        }
        for (i, tag) in tags.iter().enumerate() {
            let key = format!("{{{tag}}}fn");
            let n: i64 = BUMP
                .call()
                .key(&key)
                .arg(&1)
                .invoke_async(&mut con)
                .await
                .unwrap();
            assert_eq!(n, round + 1, "the function must run exactly once per call");
            // The key really lives on node i.
            let mut direct = cluster.nodes()[i].connection();
            let stored: i64 = redis::cmd("GET").arg(&key).query(&mut direct).unwrap();
            assert_eq!(stored, round + 1);
            // FCALL_RO, routed by its key.
            let peeked: String = PEEK.call().key(&key).invoke_async(&mut con).await.unwrap();
            assert_eq!(peeked, (round + 1).to_string());
        }
        for node in cluster.nodes() {
            assert!(
                has_counters(&mut node.connection()),
                "FUNCTION LOAD must reach every primary"
            );
        }
    }
    // The blocking cluster connection recovers too.
    let mut sync_con = client.get_connection().unwrap();
    for node in cluster.nodes() {
        function_flush(&mut node.connection());
    }
    let n: i64 = BUMP
        .call()
        .key(&"{c}fn")
        .arg(&10)
        .invoke(&mut sync_con)
        .unwrap();
    assert_eq!(n, 12);
    assert!(has_counters(&mut cluster.nodes()[1].connection()));
}
