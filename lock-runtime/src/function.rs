//! Invocation of Redis Functions (Redis 7) with `FCALL`, loading the library
//! when the server does not have it.
//!
//! A [`LibraryDef`] describes one Lua library file (`#!lua name=<library>`,
//! registering functions with `redis.register_function`); a [`FunctionDef`]
//! names one function of it, read-only if registered `no-writes`.
//! [`FunctionDef::call`] starts a [`FunctionCall`]: a
//! [`Call`], as a script's, sent as
//! `FCALL <function> <numkeys> <key>... <arg>...` (`FCALL_RO` for a
//! `no-writes` function). The `#[redis_function]` macro emits these values.
//!
//! When the server answers `ERR Function not found` (flushed, restarted, a
//! new node, or an older version of the library), the library is loaded
//! with `FUNCTION LOAD REPLACE <source>` and the call retried once, as a
//! script after `NOSCRIPT`. On a cluster, calls are routed as scripts are
//! ([`crate::script`]); `FUNCTION LOAD` goes to every primary, whose
//! replicas get the library by replication.
//!
//! # Example
//!
//! ```no_run
//! // `#[redis_function]` checks the library at compile time and writes the
//! // `LibraryDef` and `FunctionDef` statics behind the struct.
//! #[redlua::redis_function("tests/user_scripts/counters_lib.lua", name = "bump", returns = i64)]
//! struct Bump {
//!     #[key]
//!     counter: String,
//!     #[arg]
//!     by: i64,
//! }
//!
//! # fn demo(con: &mut redlua::redis::Connection) -> redlua::redis::RedisResult<()> {
//! let n: i64 = Bump { counter: "visits".into(), by: 1 }.invoke_blocking(con)?;
//! # let _ = n; Ok(()) }
//! ```

use crate::reload::{self, ServerCode};
use crate::script::{Call, sealed};
use redis::{ErrorKind, RedisError, RedisResult, Value};

/// Static description of one Redis Functions library file.
///
/// Values of this type are normally emitted by the `#[redis_function]`
/// macro, which checked the source at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LibraryDef {
    /// The library's name, as its first line `#!lua name=<library>` says.
    pub name: &'static str,
    /// Path of the Lua file, relative to the crate that declared it, e.g.
    /// `"scripts/counters.lua"`.
    pub path: &'static str,
    /// The library's source, exactly as sent by `FUNCTION LOAD`.
    pub source: &'static str,
}

impl LibraryDef {
    /// Loads (or replaces) the library with `FUNCTION LOAD REPLACE` (on
    /// every primary of a cluster), and checks that the server answers its
    /// name. Needed only before a pipeline
    /// ([`FunctionCall::add_to_pipeline`]).
    ///
    /// # Errors
    ///
    /// Any error of the connection or the server (e.g. a library the server
    /// refuses), and an error of kind [`ErrorKind::Client`] if the server
    /// answers another library name.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped before it completes, the command may or may
    /// not have reached the server, so the library may or may not be loaded.
    /// Loading replaces the library, so calling `load` again is always safe.
    #[cfg(feature = "aio")]
    pub async fn load<C>(&self, con: &mut C) -> RedisResult<()>
    where
        C: redis::aio::ConnectionLike + ?Sized,
    {
        reload::load(self, con).await
    }

    /// Blocking twin of [`load`](Self::load).
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load).
    pub fn load_blocking<C>(&self, con: &mut C) -> RedisResult<()>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        reload::load_blocking(self, con)
    }
}

impl ServerCode for LibraryDef {
    /// The `FUNCTION LOAD REPLACE <source>` command.
    fn load_cmd(&self) -> redis::Cmd {
        let mut cmd = redis::cmd("FUNCTION");
        cmd.arg("LOAD").arg("REPLACE").arg(self.source);
        cmd
    }

    /// Checks the library name `FUNCTION LOAD` answers against [`Self::name`].
    fn check_loaded(&self, value: Value) -> RedisResult<()> {
        let answered: String = redis::from_redis_value(value.extract_error()?)?;
        if answered == self.name {
            Ok(())
        } else {
            Err(RedisError::from((
                ErrorKind::Client,
                "FUNCTION LOAD answered a different library name than the one compiled in",
                format!(
                    "library `{}` ({}): server answered `{answered}`",
                    self.name, self.path
                ),
            )))
        }
    }

    fn is_missing(&self, err: &RedisError) -> bool {
        is_function_not_found(err)
    }
}

/// Static description of one function of a [`LibraryDef`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FunctionDef {
    /// Name of the Rust type the function was attached to, for messages.
    pub name: &'static str,
    /// The function's name in the library (the name given to
    /// `redis.register_function`).
    pub function: &'static str,
    /// The library that registers it.
    pub library: &'static LibraryDef,
    /// Whether the function is registered with the `no-writes` flag: it is
    /// then called with `FCALL_RO`, which may run on replicas.
    pub read_only: bool,
}

impl FunctionDef {
    /// Starts building a call of this function, with no keys and no
    /// arguments yet.
    pub fn call(&'static self) -> FunctionCall {
        Call::new(self)
    }

    /// Loads the function's library: [`LibraryDef::load`].
    ///
    /// # Errors
    ///
    /// As [`LibraryDef::load`].
    ///
    /// # Cancellation
    ///
    /// As [`LibraryDef::load`]: loading again is always safe.
    #[cfg(feature = "aio")]
    pub async fn load<C>(&self, con: &mut C) -> RedisResult<()>
    where
        C: redis::aio::ConnectionLike + ?Sized,
    {
        self.library.load(con).await
    }

    /// Blocking twin of [`load`](Self::load).
    ///
    /// # Errors
    ///
    /// As [`LibraryDef::load`].
    pub fn load_blocking<C>(&self, con: &mut C) -> RedisResult<()>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        self.library.load_blocking(con)
    }
}

/// One call of a [`FunctionDef`]: a [`Call`] sent with `FCALL` (or
/// `FCALL_RO`).
pub type FunctionCall = Call<FunctionDef>;

impl sealed::Code for FunctionDef {
    type Loaded = LibraryDef;

    fn command(&self) -> &'static str {
        if self.read_only { "FCALL_RO" } else { "FCALL" }
    }

    fn id(&self) -> &'static str {
        self.function
    }

    fn loaded(&self) -> &LibraryDef {
        self.library
    }
}

/// Whether `err` is the server's answer to `FCALL` of a function it does not
/// have (`ERR Function not found`), or a pipeline's (or transaction's) error
/// one of whose commands got that answer: it was sent before the library
/// was loaded.
pub fn is_function_not_found(err: &RedisError) -> bool {
    let not_found =
        |code: Option<&str>, detail: Option<&str>| code == Some("ERR") && detail == Some(NOT_FOUND);
    not_found(err.code(), err.detail())
        || err.clone().into_server_errors().is_some_and(|errors| {
            errors
                .iter()
                .any(|(_, error)| not_found(Some(error.code()), error.details()))
        })
}

/// Redis's message (after `ERR `) for `FCALL` of an unknown function.
const NOT_FOUND: &str = "Function not found";

#[cfg(test)]
mod tests {
    use super::*;

    static LIB: LibraryDef = LibraryDef {
        name: "counters",
        path: "tests/user_scripts/counters_lib.lua",
        source: include_str!("../tests/user_scripts/counters_lib.lua"),
    };

    static F: FunctionDef = FunctionDef {
        name: "Bump",
        function: "bump",
        library: &LIB,
        read_only: false,
    };

    static RO: FunctionDef = FunctionDef {
        read_only: true,
        ..F
    };

    fn args_of(cmd: &redis::Cmd) -> Vec<Vec<u8>> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(s) => s.to_vec(),
                _ => b"<other>".to_vec(),
            })
            .collect()
    }

    fn strings(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn keys_and_args_follow_the_function_name() {
        let mut call = F.call();
        call.key(&"a").key(&vec!["b", "c"]).arg(&5).arg(&"x");
        assert_eq!(
            args_of(&call.cmd()),
            strings(&["FCALL", "bump", "3", "a", "b", "c", "5", "x"])
        );
        assert_eq!(
            args_of(&RO.call().cmd()),
            strings(&["FCALL_RO", "bump", "0"])
        );
        assert_eq!(
            args_of(&LIB.load_cmd()),
            strings(&["FUNCTION", "LOAD", "REPLACE", LIB.source])
        );
    }

    #[test]
    fn the_loaded_library_name_is_checked() {
        assert!(
            LIB.check_loaded(Value::BulkString(b"counters".to_vec()))
                .is_ok()
        );
        let err = LIB
            .check_loaded(Value::BulkString(b"other".to_vec()))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Client);
        assert!(
            err.to_string()
                .contains("tests/user_scripts/counters_lib.lua"),
            "{err}"
        );
    }

    /// Compile-time check: with `C: Send`, the futures are `Send`.
    #[cfg(feature = "aio")]
    #[allow(dead_code)]
    fn futures_are_send_for_send_connections<T, C>(call: &FunctionCall, con: &mut C)
    where
        T: redis::FromRedisValue,
        C: redis::aio::ConnectionLike + Send + ?Sized,
    {
        fn is_send<F: Send>(_: F) {}
        is_send(call.invoke_async::<T, C>(con));
        is_send(call.def().load(con));
    }
}
