//! `FunctionDef` / `FunctionCall` against real redis-server processes.

use redis::ErrorKind;
use redlua_runtime::function::{FunctionDef, LibraryDef, is_function_not_found};
use redlua_test_support::RedisServer;

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

static SET_GET: FunctionDef = FunctionDef {
    name: "SetGet",
    function: "set_get",
    library: &COUNTERS,
    read_only: false,
};

/// `bump` declared read-only by mistake: `FCALL_RO` of a writing function.
static BUMP_RO: FunctionDef = FunctionDef {
    read_only: true,
    ..BUMP
};

/// The library names `FUNCTION LIST` reports.
fn libraries(con: &mut redis::Connection) -> Vec<String> {
    let list: Vec<redis::Value> = redis::cmd("FUNCTION").arg("LIST").query(con).unwrap();
    list.into_iter()
        .map(|library| {
            let fields: Vec<(String, redis::Value)> = redis::from_redis_value(library).unwrap();
            let name = fields
                .into_iter()
                .find(|(k, _)| k == "library_name")
                .unwrap()
                .1;
            redis::from_redis_value(name).unwrap()
        })
        .collect()
}

fn flush(con: &mut redis::Connection) {
    let _: () = redis::cmd("FUNCTION").arg("FLUSH").query(con).unwrap();
}

#[test]
fn blocking_invoke_loads_the_library_and_runs_once_after_a_flush() {
    let server = RedisServer::start();
    let mut con = server.connection();
    assert!(libraries(&mut con).is_empty());
    let n: i64 = BUMP.call().key(&"n").arg(&5).invoke(&mut con).unwrap();
    assert_eq!(n, 5);
    assert_eq!(
        libraries(&mut con),
        ["counters"],
        "the call must load the library"
    );
    flush(&mut con);
    assert!(libraries(&mut con).is_empty());
    let n: i64 = BUMP.call().key(&"n").arg(&5).invoke(&mut con).unwrap();
    assert_eq!(n, 10, "the function must run exactly once after the reload");
    assert_eq!(libraries(&mut con), ["counters"]);
}

#[tokio::test]
async fn async_invoke_recovers_after_a_flush() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let v: String = SET_GET
        .call()
        .key(&"k")
        .arg(&"v1")
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, "v1");
    flush(&mut check);
    let n: i64 = BUMP
        .call()
        .key(&"n")
        .arg(&3)
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 3);
    let n: i64 = BUMP
        .call()
        .key(&"n")
        .arg(&3)
        .invoke_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 6, "one run per call");
    assert_eq!(libraries(&mut check), ["counters"]);
    // The future is Send: it can be spawned.
    let mut spawned = con.clone();
    let handle = tokio::spawn(async move {
        PEEK.call()
            .key(&"k")
            .invoke_async::<String, _>(&mut spawned)
            .await
    });
    assert_eq!(handle.await.unwrap().unwrap(), "v1");
}

#[tokio::test]
async fn pipelines_need_the_library_loaded_first() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut pipe = redis::pipe();
    pipe.atomic();
    BUMP.call().key(&"p").arg(&1).add_to_pipeline(&mut pipe);
    BUMP.call().key(&"p").arg(&10).add_to_pipeline(&mut pipe);
    PEEK.call()
        .key(&"p")
        .add_to_pipeline(&mut pipe)
        .cmd("GET")
        .arg("p");
    // Not loaded: the pipeline answers the server's error.
    let err = pipe
        .query_async::<(i64, i64, String, i64)>(&mut con)
        .await
        .unwrap_err();
    assert!(is_function_not_found(&err), "{err:?}");
    BUMP.load(&mut con).await.unwrap();
    let (a, b, peeked, p): (i64, i64, String, i64) = pipe.query_async(&mut con).await.unwrap();
    assert_eq!((a, b, peeked.as_str(), p), (1, 11, "11", 11));
    // Blocking, after a flush and a blocking load.
    flush(&mut check);
    COUNTERS.load_blocking(&mut check).unwrap();
    let (a, peeked): (i64, String) = pipe
        .query(&mut check)
        .map(|(a, _, s, _): (i64, i64, String, i64)| (a, s))
        .unwrap();
    assert_eq!((a, peeked.as_str()), (12, "22"));
}

#[test]
fn read_only_functions_use_fcall_ro() {
    let server = RedisServer::start();
    let mut con = server.connection();
    let _: () = redis::cmd("SET").arg("r").arg("x").query(&mut con).unwrap();
    let v: String = PEEK.call().key(&"r").invoke(&mut con).unwrap();
    assert_eq!(v, "x");
    // FCALL_RO of a function registered without `no-writes`: refused by
    // Redis, nothing runs.
    let err = BUMP_RO
        .call()
        .key(&"n")
        .arg(&1)
        .invoke::<i64, _>(&mut con)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Can not execute a script with write flag using *_ro command"),
        "{err}"
    );
    let n: Option<i64> = redis::cmd("GET").arg("n").query(&mut con).unwrap();
    assert_eq!(n, None);
}

#[test]
fn load_checks_the_library_name_and_errors_come_back() {
    static WRONG: LibraryDef = LibraryDef {
        name: "not_counters",
        ..COUNTERS
    };
    let server = RedisServer::start();
    let mut con = server.connection();
    let err = WRONG.load_blocking(&mut con).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Client);
    assert!(err.to_string().contains("not_counters"), "{err}");
    // A library the server refuses: its error, not a retry loop.
    static BROKEN: LibraryDef = LibraryDef {
        name: "broken",
        path: "inline",
        source: "#!lua name=broken\nlocal x = 1\n",
    };
    static MISSING: FunctionDef = FunctionDef {
        name: "Missing",
        function: "missing",
        library: &BROKEN,
        read_only: false,
    };
    let err = MISSING.call().invoke::<i64, _>(&mut con).unwrap_err();
    assert!(err.to_string().contains("No functions registered"), "{err}");
    // A function the loaded library does not have: loaded, retried once,
    // and the server's answer comes back.
    static ABSENT: FunctionDef = FunctionDef {
        name: "Absent",
        function: "absent",
        library: &COUNTERS,
        read_only: false,
    };
    let err = ABSENT.call().invoke::<i64, _>(&mut con).unwrap_err();
    assert!(is_function_not_found(&err), "{err:?}");
    assert_eq!(libraries(&mut con), ["counters"]);
}
