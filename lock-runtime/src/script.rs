//! Invocation of Lua scripts by SHA1, with `NOSCRIPT` recovery.
//!
//! A [`ScriptDef`] describes one Lua script: its source, its SHA1 (computed
//! at compile time by `#[redis_script]`) and whether it is read-only.
//! [`ScriptDef::call`] starts a [`ScriptCall`], a [`Call`] (the same for
//! Redis functions, [`crate::function`]) sent as
//! `EVALSHA <sha1> <numkeys> <key>... <arg>...`, or `EVALSHA_RO` (Redis 7+)
//! for a read-only script. The source is never sent with the call: when
//! the server answers `NOSCRIPT` (its cache flushed, restarted, a new
//! node), it is loaded with `SCRIPT LOAD` and the call retried once. A
//! reply that is a set of codes is declared with [`ReplyCodes`] and checked
//! against the script's `return`s at compile time.
//!
//! # Redis Cluster
//!
//! With redis-rs' cluster connections, a call is routed by its first key
//! (a read-only one may go to a replica when the connection reads from
//! replicas), one without keys to a random node; `SCRIPT LOAD` goes to
//! every node, so the retry finds the script wherever it is routed. All
//! keys of one call must hash to the same slot (a hash tag such as
//! `{user42}`), or the server answers `CROSSSLOT`.

use crate::reload::{self, ServerCode};
pub use crate::reply::{ReplyCode, ReplyCodes};
use redis::{ErrorKind, RedisError, RedisResult, ServerErrorKind, ToRedisArgs, Value};

/// Static description of one Lua script.
///
/// Values of this type are normally emitted as constants by the
/// `#[redis_script]` macro; they can also be written by hand, in which case
/// `sha1` must be the lowercase hexadecimal SHA1 of `source` (a wrong value is
/// detected by [`load`](Self::load), which then fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScriptDef {
    /// Name of the Rust type the script was attached to, for messages.
    pub name: &'static str,
    /// Path of the Lua file, relative to the crate that declared the script,
    /// e.g. `"scripts/unlock.lua"`.
    pub path: &'static str,
    /// Lua source of the script, exactly as sent by `SCRIPT LOAD`.
    pub source: &'static str,
    /// Lowercase hexadecimal SHA1 of [`source`](Self::source), as Redis
    /// computes it.
    pub sha1: &'static str,
    /// Whether the script only reads: it is then invoked with `EVALSHA_RO`,
    /// which Redis rejects if the script attempts a write.
    pub read_only: bool,
}

impl ScriptDef {
    /// Starts building an invocation of this script, with no keys and no
    /// arguments yet.
    pub fn call(&'static self) -> ScriptCall {
        Call::new(self)
    }

    /// Loads the script with `SCRIPT LOAD` (on every node of a cluster), and
    /// checks that the SHA1 the server answers is [`Self::sha1`]. Needed
    /// only before a pipeline ([`ScriptCall::add_to_pipeline`]).
    ///
    /// # Errors
    ///
    /// Any error of the connection or the server (e.g. a Lua compilation
    /// error), and an error of kind [`ErrorKind::Client`] if the server's SHA1
    /// differs from [`Self::sha1`].
    ///
    /// # Cancellation
    ///
    /// If the future is dropped before it completes, the command may or may
    /// not have reached the server, so the script may or may not be loaded.
    /// Loading is idempotent, so calling `load` again is always safe.
    #[cfg(feature = "aio")]
    pub async fn load<C>(&self, con: &mut C) -> RedisResult<()>
    where
        C: redis::aio::ConnectionLike + ?Sized,
    {
        reload::load(self, con).await
    }

    /// Blocking twin of [`load`](Self::load): `SCRIPT LOAD`, then checks the
    /// SHA1 the server answers.
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

impl ServerCode for ScriptDef {
    /// The `SCRIPT LOAD <source>` command for this script.
    fn load_cmd(&self) -> redis::Cmd {
        let mut cmd = redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(self.source);
        cmd
    }

    /// Checks the SHA1 answered by `SCRIPT LOAD` against [`Self::sha1`].
    fn check_loaded(&self, value: Value) -> RedisResult<()> {
        let answered: String = redis::from_redis_value(value.extract_error()?)?;
        if answered.eq_ignore_ascii_case(self.sha1) {
            Ok(())
        } else {
            Err(RedisError::from((
                ErrorKind::Client,
                "SCRIPT LOAD answered a different SHA1 than the one compiled in",
                format!(
                    "script `{}` ({}): expected {}, server answered {}",
                    self.name, self.path, self.sha1, answered
                ),
            )))
        }
    }

    fn is_missing(&self, err: &RedisError) -> bool {
        is_noscript(err)
    }
}

/// One invocation of a [`ScriptDef`]: a [`Call`] sent with `EVALSHA` (or
/// `EVALSHA_RO`).
pub type ScriptCall = Call<ScriptDef>;

/// Keys and arguments of one call of a script ([`ScriptCall`]) or of a Redis
/// function ([`FunctionCall`](crate::function::FunctionCall)).
///
/// Built by [`ScriptDef::call`] or
/// [`FunctionDef::call`](crate::function::FunctionDef::call), filled with
/// [`key`](Self::key) and [`arg`](Self::arg), then sent with
/// [`invoke_async`](Self::invoke_async), [`invoke`](Self::invoke) or
/// [`add_to_pipeline`](Self::add_to_pipeline). A call can be sent any number
/// of times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<D: Callee> {
    def: &'static D,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

/// What a [`Call`] calls: a script ([`ScriptDef`]) or a function
/// ([`FunctionDef`](crate::function::FunctionDef)). Sealed: the runtime
/// implements it for those two only.
pub trait Callee: sealed::Code {}

impl<D: sealed::Code> Callee for D {}

/// What a call needs of what it calls; not nameable outside the crate.
pub(crate) mod sealed {
    use crate::reload::ServerCode;

    /// The command of a call, its first argument, and the code the server
    /// must have to run it.
    // Sealed: nothing outside the crate can name this trait, so the bound on
    // the crate's own `ServerCode` never reaches a user.
    #[allow(private_bounds)]
    pub trait Code: Sync + 'static {
        /// The code loaded when the server lacks it (the script, the
        /// library).
        type Loaded: ServerCode;
        /// `EVALSHA` / `EVALSHA_RO`, `FCALL` / `FCALL_RO`.
        fn command(&self) -> &'static str;
        /// The SHA1 of the script, the name of the function.
        fn id(&self) -> &'static str;
        /// What to load when the server lacks it.
        fn loaded(&self) -> &Self::Loaded;
    }
}

impl sealed::Code for ScriptDef {
    type Loaded = ScriptDef;

    fn command(&self) -> &'static str {
        if self.read_only {
            "EVALSHA_RO"
        } else {
            "EVALSHA"
        }
    }

    fn id(&self) -> &'static str {
        self.sha1
    }

    fn loaded(&self) -> &ScriptDef {
        self
    }
}

impl<D: Callee> Call<D> {
    /// A call of `def` without keys or arguments yet.
    pub(crate) fn new(def: &'static D) -> Self {
        // Room for a typical call's keys and arguments without growing.
        Call {
            def,
            keys: Vec::with_capacity(8),
            args: Vec::with_capacity(16),
        }
    }

    /// Appends keys: every Redis argument that `key` writes becomes one entry
    /// of `KEYS` (a script's) or one key of the call (a function's first
    /// parameter), in order: a `Vec` or slice of keys appends several.
    ///
    /// redis-rs implements `ToRedisArgs` for `&str` and `&[T]`, not for `str`
    /// or `[T]`: a literal is passed as `.key(&"name")`.
    pub fn key<T: ToRedisArgs>(&mut self, key: &T) -> &mut Self {
        key.write_redis_args(&mut self.keys);
        self
    }

    /// Appends arguments: every Redis argument that `arg` writes becomes one
    /// entry of `ARGV` (a script's) or one argument of the call (a
    /// function's second parameter), in order: a `Vec` or slice appends
    /// several.
    pub fn arg<T: ToRedisArgs>(&mut self, arg: &T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }

    /// The script or function this call invokes.
    pub fn def(&self) -> &'static D {
        self.def
    }

    /// The keys appended so far (`KEYS[1]`, `KEYS[2]`, ...).
    pub fn keys(&self) -> &[Vec<u8>] {
        &self.keys
    }

    /// The arguments appended so far (`ARGV[1]`, `ARGV[2]`, ...).
    pub fn args(&self) -> &[Vec<u8>] {
        &self.args
    }

    /// The command of this call: `EVALSHA <sha1> <numkeys> <keys> <args>`
    /// (or `EVALSHA_RO`), `FCALL <function> ...` (or `FCALL_RO`).
    pub(crate) fn cmd(&self) -> redis::Cmd {
        reload::call_cmd(self.def.command(), self.def.id(), &self.keys, &self.args)
    }

    /// Sends the call and converts its reply to `T`. If the server lacks
    /// the code (`NOSCRIPT`, `ERR Function not found`), the code is loaded
    /// and the call retried once.
    ///
    /// The future is `Send` whenever `C` is (as `MultiplexedConnection` and
    /// `cluster_async::ClusterConnection` are): generic code that spawns it
    /// must require `C: Send`.
    ///
    /// # Errors
    ///
    /// Errors of the connection, errors raised by the script or function
    /// (the server's error, e.g. a failed `redis.call` or, for a read-only
    /// one, a write command), a reply that does not convert to `T`, or the
    /// errors of loading the code when the server lacks it.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped before it completes, the command may or may
    /// not have reached the server: the code may or may not have run (at
    /// most once, since a retry only follows an answer saying that the
    /// server lacks the code, which means it did not run).
    #[cfg(feature = "aio")]
    pub async fn invoke_async<T, C>(&self, con: &mut C) -> RedisResult<T>
    where
        T: redis::FromRedisValue,
        C: redis::aio::ConnectionLike + ?Sized,
    {
        reload::invoke(self.def.loaded(), &self.cmd(), con).await
    }

    /// Blocking twin of [`invoke_async`](Self::invoke_async): the call, and
    /// when the server lacks the code, a load followed by exactly one retry.
    ///
    /// # Errors
    ///
    /// As [`invoke_async`](Self::invoke_async).
    pub fn invoke<T, C>(&self, con: &mut C) -> RedisResult<T>
    where
        T: redis::FromRedisValue,
        C: redis::ConnectionLike + ?Sized,
    {
        reload::invoke_blocking(self.def.loaded(), &self.cmd(), con)
    }

    /// Adds this call's command to `pipe`, and returns `pipe` for chaining.
    ///
    /// A pipeline cannot load the code and retry: a server that lacks it
    /// fails the whole pipeline (or aborts the transaction) after the other
    /// commands ran. Load the code first: [`ScriptDef::load`],
    /// [`LibraryDef::load`](crate::function::LibraryDef::load)
    /// ([`is_function_not_found`](crate::function::is_function_not_found)
    /// recognizes a pipeline's error without the library).
    pub fn add_to_pipeline<'p>(&self, pipe: &'p mut redis::Pipeline) -> &'p mut redis::Pipeline {
        pipe.add_command(self.cmd())
    }
}

/// Whether `err` is the server's `NOSCRIPT` answer.
pub(crate) fn is_noscript(err: &RedisError) -> bool {
    err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) || err.code() == Some("NOSCRIPT")
}

#[cfg(test)]
mod tests {
    use super::*;

    static DEF: ScriptDef = ScriptDef {
        name: "Demo",
        path: "scripts/demo.lua",
        source: "return 1",
        sha1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
        read_only: false,
    };

    static RO: ScriptDef = ScriptDef {
        read_only: true,
        ..DEF
    };

    fn args_of(cmd: &redis::Cmd) -> Vec<Vec<u8>> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(s) => s.to_vec(),
                _ => b"<other>".to_vec(),
            })
            .collect()
    }

    #[test]
    fn keys_and_args_are_expanded_in_order() {
        let mut call = DEF.call();
        call.key(&"a")
            .key(&vec!["b", "c"])
            .arg(&5)
            .arg(&&["x", "y"][..]);
        assert_eq!(call.keys(), &[b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(call.args(), &[b"5".to_vec(), b"x".to_vec(), b"y".to_vec()]);
        let expected: Vec<Vec<u8>> = ["EVALSHA", DEF.sha1, "3", "a", "b", "c", "5", "x", "y"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(args_of(&call.cmd()), expected);
    }

    #[test]
    fn read_only_uses_evalsha_ro_and_zero_keys() {
        let call = RO.call();
        let expected: Vec<Vec<u8>> = ["EVALSHA_RO", RO.sha1, "0"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(args_of(&call.cmd()), expected);
    }

    /// Compile-time check: with `C: Send` (and no bound on `T`), the futures
    /// are `Send`, also in generic code.
    #[cfg(feature = "aio")]
    #[allow(dead_code)]
    fn futures_are_send_for_send_connections<T, C>(call: &ScriptCall, con: &mut C)
    where
        T: redis::FromRedisValue,
        C: redis::aio::ConnectionLike + Send + ?Sized,
    {
        fn is_send<F: Send>(_: F) {}
        is_send(call.invoke_async::<T, C>(con));
        is_send(call.def().load(con));
    }

    #[test]
    fn sha_check_accepts_any_case_and_rejects_mismatch() {
        let upper = Value::BulkString(DEF.sha1.to_uppercase().into_bytes());
        assert!(DEF.check_loaded(upper).is_ok());
        let other = Value::BulkString(b"0000000000000000000000000000000000000000".to_vec());
        let err = DEF.check_loaded(other).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Client);
        assert!(err.to_string().contains("scripts/demo.lua"), "{err}");
    }
}
