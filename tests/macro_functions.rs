//! `#[redis_function]` structs against a real, private `redis-server`: typed
//! results (async and blocking), `FCALL_RO` for `no-writes` functions,
//! loading the library after `FUNCTION FLUSH`, and pipelines.

use redlua::redis::{self, AsyncCommands, Commands};
use redlua::redis_function;
use redlua_test_support::RedisServer;

/// Adds to a counter that expires.
#[redis_function("scripts/counters_lib.lua", name = "bump", returns = i64)]
struct Bump<'a> {
    #[key]
    counter: &'a str,
    #[arg]
    by: i64,
    #[arg]
    ttl_secs: u64,
}

/// The sum of counters (a `no-writes` function: `FCALL_RO`).
#[redis_function("scripts/counters_lib.lua", name = "total", returns = i64)]
struct Total<'a> {
    #[key(variadic)]
    counters: Vec<&'a str>,
}

fn bump(counter: &str, by: i64) -> Bump<'_> {
    Bump {
        counter,
        by,
        ttl_secs: 60,
    }
}

/// The library names `FUNCTION LIST` reports.
fn libraries(con: &mut redis::Connection) -> Vec<String> {
    let list: Vec<Vec<(String, redis::Value)>> =
        redis::cmd("FUNCTION").arg("LIST").query(con).unwrap();
    list.into_iter()
        .map(|fields| {
            let (_, name) = fields
                .into_iter()
                .find(|(k, _)| k == "library_name")
                .unwrap();
            redis::from_redis_value(name).unwrap()
        })
        .collect()
}

fn function_flush(con: &mut redis::Connection) {
    let _: () = redis::cmd("FUNCTION").arg("FLUSH").query(con).unwrap();
}

/// How many times the server ran `command` (from `INFO commandstats`).
fn calls(con: &mut redis::Connection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(con).unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
}

#[test]
fn generated_constants() {
    assert_eq!((Bump::KEY_COUNT, Bump::ARG_COUNT), (1, 2));
    assert_eq!((Total::KEY_COUNT, Total::ARG_COUNT), (0, 0));
    assert_eq!(Bump::LIBRARY_NAME, "counters");
    assert_eq!(Bump::FUNCTION_NAME, "bump");
    assert_eq!(Total::FUNCTION.function, "total");
    assert_eq!(Bump::FUNCTION.name, "Bump");
    assert_eq!(Bump::LIBRARY.path, "scripts/counters_lib.lua");
    assert_eq!(
        Bump::SOURCE,
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/counters_lib.lua"
        ))
    );
    assert_eq!(Bump::FUNCTION.library, &Total::LIBRARY);
    // Read-only follows the function's `no-writes` flag, at compile time.
    const {
        assert!(!Bump::FUNCTION.read_only);
        assert!(Total::FUNCTION.read_only);
    }
}

#[test]
fn blocking_invoke_loads_the_library_again_after_function_flush() {
    let server = RedisServer::start();
    let mut con = server.connection();
    assert!(libraries(&mut con).is_empty());
    assert_eq!(bump("a", 2).invoke_blocking(&mut con).unwrap(), 2);
    assert_eq!(libraries(&mut con), ["counters"]);
    function_flush(&mut con);
    assert_eq!(
        bump("a", 3).invoke_blocking(&mut con).unwrap(),
        5,
        "ran once"
    );
    assert_eq!(libraries(&mut con), ["counters"]);
    let ttl: i64 = con.ttl("a").unwrap();
    assert!((1..=60).contains(&ttl), "{ttl}");
    // FCALL_RO for the `no-writes` function.
    let _: () = con.set("b", 10).unwrap();
    assert_eq!(calls(&mut con, "fcall_ro"), 0);
    function_flush(&mut con);
    let total = Total {
        counters: vec!["a", "b", "missing"],
    }
    .invoke_blocking(&mut con)
    .unwrap();
    assert_eq!(total, 15);
    // Each call after a flush: one answered "not found", one after loading.
    assert_eq!(calls(&mut con, "fcall_ro"), 2);
    assert_eq!(calls(&mut con, "fcall"), 4);
}

#[tokio::test]
async fn async_invoke_loads_the_library_again_after_function_flush() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    assert_eq!(bump("a", 1).invoke(&mut con).await.unwrap(), 1);
    function_flush(&mut check);
    assert_eq!(bump("a", 1).invoke(&mut con).await.unwrap(), 2, "ran once");
    function_flush(&mut check);
    let total = Total {
        counters: vec!["a"],
    }
    .invoke(&mut con)
    .await
    .unwrap();
    assert_eq!(total, 2);
    assert_eq!(libraries(&mut check), ["counters"]);
    let stored: i64 = con.get("a").await.unwrap();
    assert_eq!(stored, 2);
    assert_eq!(calls(&mut check, "fcall_ro"), 2);
}

#[tokio::test]
async fn pipelines_after_load() {
    let server = RedisServer::start();
    let mut check = server.connection();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut pipe = redis::pipe();
    pipe.atomic();
    bump("p", 1).add_to_pipeline(&mut pipe);
    bump("q", 10).add_to_pipeline(&mut pipe);
    Total {
        counters: vec!["p", "q"],
    }
    .add_to_pipeline(&mut pipe)
    .get("p");
    // Without the library, the pipeline answers the server's error...
    let err = pipe
        .query_async::<(i64, i64, i64, i64)>(&mut con)
        .await
        .unwrap_err();
    assert!(redlua::function::is_function_not_found(&err), "{err:?}");
    // ... and after `load`, it runs.
    Bump::load(&mut con).await.unwrap();
    let results: (i64, i64, i64, i64) = pipe.query_async(&mut con).await.unwrap();
    assert_eq!(results, (1, 10, 11, 1));
    // Blocking: flushed, loaded again with `load_blocking`.
    function_flush(&mut check);
    Total::load_blocking(&mut check).unwrap();
    let results: (i64, i64, i64, i64) = pipe.query(&mut check).unwrap();
    assert_eq!(results, (2, 20, 22, 2));
}

#[test]
fn calls_names_the_command_at_the_line_redis_reports() {
    assert_eq!(Bump::CALLS, [(6, "INCRBY"), (7, "EXPIRE")]);
    assert_eq!(Total::CALLS, [(19, "GET")]);
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
    let error = bump("c", 1).invoke_blocking(&mut con).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("can't run this command"), "{text}");
    let (_, after) = text
        .rsplit_once("@user_function:")
        .unwrap_or_else(|| panic!("no line in {text}"));
    let line: u32 = after
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap();
    assert_eq!(
        Bump::CALLS.iter().find(|(at, _)| *at == line),
        Some(&(7, "EXPIRE")),
        "{text}"
    );
}
