//! What script calls (`EVALSHA`) and function calls (`FCALL`) share: the
//! command of one call, and sending it so that, when the server lacks the
//! code (`NOSCRIPT`, `Function not found`), the code is loaded and the call
//! retried exactly once.

use redis::{RedisError, RedisResult, Value};

/// Code the server may have to be sent again: a script or a library.
pub(crate) trait ServerCode: Sync {
    /// The command that loads the code (`SCRIPT LOAD`, `FUNCTION LOAD REPLACE`).
    fn load_cmd(&self) -> redis::Cmd;
    /// Checks the load command's answer against what was compiled in.
    fn check_loaded(&self, value: Value) -> RedisResult<()>;
    /// Whether a call's error says the server lacks the code.
    fn is_missing(&self, err: &RedisError) -> bool;
}

/// `<command> <id> <numkeys> <keys...> <args...>`: the `EVALSHA`/`FCALL`
/// (or `_RO`) command of one call.
pub(crate) fn call_cmd(command: &str, id: &str, keys: &[Vec<u8>], args: &[Vec<u8>]) -> redis::Cmd {
    // Sized once: the command is written without growing.
    let items = keys.len() + args.len();
    let data = command.len() + id.len() + 20 + keys.iter().chain(args).map(Vec::len).sum::<usize>();
    let mut cmd = redis::Cmd::with_capacity(items + 3, data);
    cmd.arg(command).arg(id).arg(keys.len());
    for item in keys.iter().chain(args) {
        cmd.arg(item.as_slice());
    }
    cmd
}

/// Writes `load` and `invoke` for one kind of connection: `$send` sends
/// `$cmd` on `$con` (awaited, or blocking), the only difference between
/// the async and the blocking faces.
macro_rules! faces {
    ($(#[$cfg:meta])* [$($async:tt)?] $load:ident, $invoke:ident, $con_like:path,
     |$con:ident, $cmd:ident| $send:expr) => {
        /// Loads `code` on the connection and checks the answer.
        $(#[$cfg])*
        pub(crate) $($async)? fn $load<C>(code: &impl ServerCode, $con: &mut C) -> RedisResult<()>
        where
            C: $con_like + ?Sized,
        {
            let $cmd = &code.load_cmd();
            code.check_loaded($send?)
        }

        /// Sends `cmd`; if the server lacks `code`, loads it and sends
        /// `cmd` once more (the first try did not run), then converts the
        /// reply to `T`.
        $(#[$cfg])*
        pub(crate) $($async)? fn $invoke<T, C>(
            code: &impl ServerCode,
            $cmd: &redis::Cmd,
            $con: &mut C,
        ) -> RedisResult<T>
        where
            T: redis::FromRedisValue,
            C: $con_like + ?Sized,
        {
            let value = match $send.and_then(Value::extract_error) {
                Err(err) if code.is_missing(&err) => {
                    let loaded = {
                        let $cmd = &code.load_cmd();
                        $send?
                    };
                    code.check_loaded(loaded)?;
                    $send?.extract_error()?
                }
                result => result?,
            };
            Ok(redis::from_redis_value(value)?)
        }
    };
}

faces!(#[cfg(feature = "aio")] [async] load, invoke, redis::aio::ConnectionLike,
    |con, cmd| con.req_packed_command(cmd).await);
faces!([] load_blocking, invoke_blocking, redis::ConnectionLike,
    |con, cmd| con.req_command(cmd));
