//! The `#[redis_script]` and `#[redis_function]` attributes of
//! [redlua](https://docs.rs/redlua): Redis Lua scripts and Redis Functions as
//! typed, compile-time checked Rust items.
//!
//! Use them through the `redlua` crate (`use redlua::redis_script;`), which
//! re-exports them together with the runtime the generated code calls. The
//! attributes are documented on [`redis_script`] and [`redis_function`].
#![warn(missing_docs)]

// Each attribute goes through three phases, one per file, as in dtolnay's
// thiserror: `input` parses (the options in `attr`, the keys and arguments
// in `fields`), `check` validates (reads the file, `source`, and runs the
// analyzer, whose findings `diagnostics` turns into errors and warnings), and
// `expand` generates. A script and a function share all three; they differ
// in the options they take, how the file is analyzed, and what is generated.
mod attr;
mod check;
mod diagnostics;
mod errors;
mod expand;
mod fields;
mod input;
mod manifest;
mod source;
#[cfg(test)]
mod tests;

use attr::Kind;
use input::Input;
use proc_macro::TokenStream;

/// Turns a struct into a typed, compile-time checked Redis Lua script.
///
/// ```
/// use redlua::redis_script;
///
/// /// Releases a lock if `owner` holds it, and notifies waiters.
/// #[redis_script("scripts/unlock.lua", returns = Option<i64>)]
/// pub struct Unlock<'a> {
///     #[key] pub lock: &'a str,    // KEYS[1]
///     #[key] pub channel: &'a str, // KEYS[2]
///     #[arg] pub message: i64,     // ARGV[1]
///     #[arg] pub owner: &'a str,   // ARGV[2]
/// }
///
/// # async fn demo(con: &mut redlua::redis::aio::MultiplexedConnection) -> redlua::redis::RedisResult<()> {
/// let released: Option<i64> = Unlock { lock: "l", channel: "c", message: 0, owner: "me" }
///     .invoke(con)
///     .await?;
/// # Ok(()) }
/// ```
///
/// (The examples on this page are doctests of this crate, compiled against
/// the `redlua` facade, a dev-dependency, with the scripts they name in this
/// crate's `scripts/`.)
///
/// At compile time the macro reads the Lua file, computes its SHA1, and runs
/// the analyzer of `redlua-analyzer` on it with what the struct declares. Any
/// problem is a compile error that names the `.lua` file, line and column and
/// quotes the offending line, e.g.:
///
/// ```text
/// error: unknown Redis command `hincrbyy` [unknown_command]
///         --> scripts/hits.lua:1:19
///          |
///        1 | return redis.call('hincrbyy', KEYS[1], 'hits', 1)
///          |                   ^^^^^^^^^^ did you mean `hincrby`?
///          = note: Redis fails the call with "Unknown Redis command called from script"
///  --> src/main.rs:3:16
///   |
/// 3 | #[redis_script("scripts/hits.lua", returns = i64)]
///   |                ^^^^^^^^^^^^^^^^^^
/// ```
///
/// # Syntax
///
/// `#[redis_script("path.lua" [, returns = Type [, codes]] [, read_only] [, allow(lint, ...)] [, target = "redis-7.4"] [, crate = path])]`
/// on a struct (named fields, tuple fields, or none).
///
/// - **`"path.lua"`** (required): the script, relative to the directory of
///   the invoking crate's `Cargo.toml` (`CARGO_MANIFEST_DIR`), whichever
///   directory Cargo is run from. The file is included with `include_str!`,
///   so editing it rebuilds the crate. An absolute path is refused (the crate
///   would build only where the file is), with the relative path to write
///   when the file is inside the crate.
/// - **`returns = Type`**: the Rust type of the script's result, any
///   `redis::FromRedisValue` type; the default is `redis::Value`. When the
///   type tells what kind of reply is expected, the script's `return`
///   statements are checked against it (lint `return_type`): integers
///   (`i64`, `u32`, `usize`, `bool`, ...), strings (`String`, `Vec<u8>`),
///   lists (`Vec<T>`, tuples, sets); `Option<T>` is checked as `T`; other types
///   (aliases, `redis::Value`, your own types) are not checked. A script
///   that may reply nil (`return false`, `return nil`, GET of a missing key
///   returned as is) needs a type that holds nil: `Option<T>` (`None`),
///   `redis::Value`, `bool` (`false`) or a collection (empty); with `i64`
///   or `String`, a sure nil is an error and a possible one a warning
///   (lint `nil_return`).
/// - **`codes`** (with `returns = Type`): the reply is a set of codes
///   (`return {1, token}`, `return -1`), which `Type` lists with
///   `redlua::script::ReplyCodes`. Every `return` of the script is checked
///   against them: a code, or a shape (an integer, a pair or a triple, as
///   `redlua::script::ReplyCode` names them), that `Type` does not declare
///   is a compile error naming the script's line, and so is a `return`
///   whose code the analyzer cannot tell (a computed value); error replies
///   (`redis.error_reply`) are not codes and pass.
/// - **`read_only`**: the script only reads. It is invoked with `EVALSHA_RO`
///   (Redis 7 and later), so that it may run on replicas, and calling a
///   write command from it is a compile error (lint `write_in_read_only`).
///   A `#!lua flags=no-writes` first line of the script implies it.
/// - **`allow(lint, ...)`**: switches off the named lints for this script
///   (names as listed below). An unknown name is a compile error that lists
///   the valid ones.
/// - **`target = "redis-7.4"`**: the server the script must run on (see
///   [Targets](#targets) below); it overrides the crate-wide default. An
///   unknown name is a compile error at the literal that lists the targets.
/// - **`crate = path`**: where the `redlua` crate is, if not at `::redlua`
///   (when it is renamed or re-exported). Generated code refers to
///   `path::__private::{ScriptDef, ScriptCall, redis}`.
///
/// # Targets
///
/// A script is checked against one server release: `redis-7.0` (the
/// default: the oldest release the runtime supports, as it needs
/// `EVALSHA_RO`), `redis-7.2`, `redis-7.4`, `redis-8.0`, `redis-8.2`,
/// `redis-8.4`, `valkey-7.2` or `valkey-8.0`. A command, subcommand or option
/// the target lacks is an error (lint `target_version`: `HEXPIRE` needs
/// `redis-7.4`, `SET ... IFEQ` `redis-8.4`; Valkey has no `HEXPIRE`), and so
/// is a shebang flag it does not
/// know (lint `shebang_flag`: `#!lua flags=allow-key-locking`). Arity and
/// `noscript` follow the target too (`BLPOP` may be called from scripts
/// since Redis 7.2).
///
/// Set the target for one script with `target = "..."`, or for every script
/// of a crate in its `Cargo.toml`; the attribute wins:
///
/// ```toml
/// [package.metadata.redlua]
/// target = "redis-7.4"
/// ```
///
/// A bad value there is a compile error at each script's path that names
/// `Cargo.toml` and the line. When a script takes its target from
/// `Cargo.toml`, the crate is rebuilt when that file changes.
///
/// # Fields
///
/// Every field is marked with exactly one of:
///
/// - **`#[key]`**: passed in `KEYS`. Keys are numbered in field order:
///   the first `#[key]` field is `KEYS[1]`, and so on.
/// - **`#[arg]`**: passed in `ARGV`, numbered the same way among `#[arg]`
///   fields. Keys and arguments may be interleaved in the struct.
/// - **`#[key(variadic)]`** / **`#[arg(variadic)]`**: a list (`Vec<T>`,
///   slice, set...) whose items follow the fixed keys (resp. arguments). It
///   must be the last `#[key]` (resp. `#[arg]`) field. The script may then
///   read `KEYS` / `ARGV` past the fixed entries, and dynamically
///   (`#KEYS`, `ipairs(ARGV)`, `KEYS[i]`).
///
/// Fields take any `redis::ToRedisArgs` type (`&str`, `String`, integers,
/// `Vec<u8>`, ...). A field type that writes several Redis arguments (a `Vec`
/// of strings, a tuple) or none (`Option::None`) shifts the following
/// entries: use a variadic field for lists. The attributes `#[key]` and
/// `#[arg]` are removed from the struct, which is otherwise emitted as
/// written; its documentation gains a section naming the script and the
/// `KEYS` / `ARGV` index of each field.
///
/// A field without either attribute, a field with both, and a variadic field
/// followed by another of its kind are compile errors spanned at the field;
/// so is a field type that does not implement `redis::ToRedisArgs` (the error
/// points at the type). A misspelt option or lint name gets a "did you mean".
///
/// # Generated items
///
/// An inherent `impl` on the struct (with the struct's generics) holding,
/// with `T` the `returns` type:
///
/// | item | what |
/// |---|---|
/// | `pub const SOURCE: &'static str` | the Lua source, `include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", path))` |
/// | `pub const SHA1: &'static str` | lowercase hexadecimal SHA1 of the source, computed at compile time |
/// | `pub const KEY_COUNT: usize` | number of fixed `#[key]` fields |
/// | `pub const ARG_COUNT: usize` | number of fixed `#[arg]` fields |
/// | `pub const SCRIPT: ScriptDef` | the runtime's description: name, path, source, SHA1, read-only flag |
/// | `pub const CALLS: &'static [(u32, &'static str)]` | the line and upper-case command name of each `redis.call` / `redis.pcall` with a literal name, to name the command of a failure Redis reports by line (`@user_script:<line>`) |
/// | `pub fn call(&self) -> ScriptCall` | an invocation with this value's keys and arguments |
/// | `pub async fn invoke<C>(&self, con: &mut C) -> RedisResult<T>` | runs the script on an async connection (`C: redis::aio::ConnectionLike`, e.g. `MultiplexedConnection`, `ConnectionManager`, cluster connections); with redlua's `aio` feature (a default one) |
/// | `pub fn invoke_blocking<C>(&self, con: &mut C) -> RedisResult<T>` | the same on a blocking connection (`C: redis::ConnectionLike`) |
/// | `pub fn add_to_pipeline<'p>(&self, pipe: &'p mut Pipeline) -> &'p mut Pipeline` | adds the invocation to a pipeline |
/// | `pub async fn load<C>(con: &mut C) -> RedisResult<()>` | `SCRIPT LOAD`, checking the SHA1; with the `aio` feature |
/// | `pub fn load_blocking<C>(con: &mut C) -> RedisResult<()>` | the same, blocking |
///
/// Scripts are sent with `EVALSHA` (`EVALSHA_RO` when read-only): the source
/// only travels when the server answers `NOSCRIPT`, after which `invoke`
/// loads it and retries once. Pipelines cannot recover that way: call
/// `load` first.
///
/// # Lints
///
/// Errors refuse compilation; all are reported at once (of syntax errors,
/// only the first, as what follows is mostly its fallout). `syntax` cannot
/// be allowed; the others can, with `allow(...)`.
///
/// Warnings (the lints marked so below) are compiler warnings spanned at the
/// path string, with the script's file, line and column, the quoted line,
/// and the `allow(...)` that silences them. A stable procedural macro cannot
/// emit a warning of its own, so rustc words each one as the use of a
/// deprecated constant, under its `deprecated` lint (`-D warnings` makes it
/// an error):
///
/// ```text
/// warning: use of deprecated constant `_::maybe_false::_w`: GET returns a string or `false` (a nil reply); `+` on `false` raises an error [maybe_false]
///           --> scripts/bump.lua:1:11
///            |
///          1 | local n = redis.call('GET', KEYS[1]) + 1
///            |           ^^^^^^^^^^^^^^^^^^^^^^^^^^ may be missing here
///            = help: give a default (`redis.call(...) or '0'`, `tonumber(...) or 0`), or test the value first
///            = help: if this is intended, add `allow(maybe_false)` to `#[redis_script(...)]`
///  --> src/main.rs:3:16
///   |
/// 3 | #[redis_script("scripts/bump.lua", returns = i64)]
///   |                ^^^^^^^^^^^^^^^^^^
/// ```
///
/// | lint | finds |
/// |---|---|
/// | `syntax` | the script is not valid Lua 5.1 (e.g. `goto`, `//`) |
/// | `arity` | `KEYS[n]` / `ARGV[n]` past the declared fields; a declared field the script never reads (error at the field); a non-positive-integer index |
/// | `dynamic_access` | `KEYS` / `ARGV` read with a computed index, by length or as a whole, without a variadic field |
/// | `global_assignment` | assigning a global variable (Redis forbids it) |
/// | `undefined_global` | reading a global the Redis sandbox does not have, with a "did you mean" suggestion |
/// | `unknown_member` | a member of a sandbox library that does not exist (`redis.cal`, `os.time`) |
/// | `unknown_command` | `redis.call` with a literal command name no supported Redis or Valkey has, or one the target refuses in scripts (`noscript`) |
/// | `command_arity` | `redis.call` with a number of arguments the command does not accept |
/// | `write_in_read_only` | a write command in a `read_only` script |
/// | `literal_key` | a key passed as a string literal instead of through `KEYS` (an error here, since generated calls may run on a cluster; a warning from `lockctl lint`) |
/// | `non_integer_return` | the script returning a non-integer number (Redis truncates it) |
/// | `return_type` | a `return` the `returns` type cannot hold |
/// | `nil_return` | a nil reply (`return false`, `return nil`, a bare `return`) the `returns` type cannot hold (`i64`, not `Option<i64>`); (warning) a reply that may be nil (`return redis.call('GET', k)` with `returns = String`), or a returned `false` or boolean (`return redis.call('EXISTS', k) == 1`) without a declared type (nil, not 0) |
/// | `integer_condition` | a command's integer reply used as a condition (`if redis.call('EXISTS', k) then`: 0 is true in Lua) |
/// | `nil_comparison` | a reply compared with `nil` (`redis.call('GET', k) == nil`: a nil reply arrives as `false`) |
/// | `table_comparison` | a value compared with a table constructor (`v == {}`: a table is equal only to itself) |
/// | `status_comparison` | a status reply compared with a string (`redis.call('SET', k, v) == 'OK'`: it is a table `{ok = 'OK'}`) |
/// | `number_string_comparison` | a number compared with a string (`redis.call('INCR', k) == '1'`, `tonumber(x) > ARGV[1]`) |
/// | `scan_cursor` | a SCAN cursor compared with a number (`until cursor == 0`: the cursor is a string), or advanced only inside the loop over the page |
/// | `maybe_false` | (warning) a reply that may be `false` used in arithmetic, `..` or as a command argument (`redis.call('GET', k) + 1`) |
/// | `argument_type` | a `redis.call` argument that is never a string or a number: a table, a boolean, nil |
/// | `number_text` | a number of 1e14 or more turned into text (`tostring`, `..`, `cjson.encode` write 14 significant digits: `1.7e+15`); (warning) an integer past 2^53 |
/// | `flat_reply_index` | a flat reply indexed by a field name (`redis.call('HGETALL', k).name` is always nil) |
/// | `pcall_unchecked` | (warning) a `redis.pcall` result used without checking `err` |
/// | `fractional_argument` | (warning) a number that may be fractional where an integer is needed (`EXPIRE k ARGV[1] / 1000`) |
/// | `return_shape` | a returned table Redis converts otherwise: `{a, nil, b}` is cut at the nil, `{count = n}` arrives empty |
/// | `cjson_empty_table` | (warning) `cjson.encode({})` gives `{}`, not `[]`; so does a list that may be empty where it is encoded (filled in a loop, a command's list reply), and a document `cjson.decode` gave, encoded again |
/// | `cjson_null_condition` | `cjson.null` as a condition (always true); (warning) a `cjson.decode` field tested as a condition or compared with `nil` (a JSON null is `cjson.null`) |
/// | `argv_pattern` | (warning) `KEYS[n]` / `ARGV[n]` used as a Lua pattern (`string.find(s, ARGV[1])`) |
/// | `unpack_reply` | (warning) `unpack` of a command's array reply, which may be empty or too long |
/// | `lexical_comparison` | (warning) a string reply compared with `<` / `>` as text (`redis.call('ZSCORE', k, m) > ARGV[1]`: '10' < '9') |
/// | `invalid_expire` | an expire time SET, SETEX, PSETEX or GETEX always refuses (`SET k v EX 0`); (warning) one that arithmetic can make 0 or negative (`math.floor(ms / 1000)`) |
/// | `target_version` | a command, subcommand or option the target lacks (`HEXPIRE` on `redis-7.0`) |
/// | `shebang_flag` | a `#!lua flags=...` flag the target does not know (`allow-key-locking`) |
/// | `library` | (`#[redis_function]` only; cannot be allowed) a library `FUNCTION LOAD` refuses, or `KEYS` / `ARGV` in a function: see [`redis_function`] |
///
/// Diagnostics about the script are spanned at the path string; those about
/// a declared key or argument that the script never reads, at that field.
/// A missing or unreadable file is an error at the path string that shows
/// where the path was resolved.
///
/// # More examples
///
/// A read-only script with a variadic list of keys and a checked return
/// type; `scripts/sum.lua` starts with `#!lua flags=no-writes`, so it is sent
/// with `EVALSHA_RO` without the `read_only` option:
///
/// ```
/// # use redlua::redis_script;
/// #[redis_script("scripts/sum.lua", returns = i64)]
/// struct Sum<'a> {
///     #[key(variadic)]
///     counters: Vec<&'a str>,
/// }
///
/// # fn demo(mut con: redlua::redis::Connection) -> redlua::redis::RedisResult<()> {
/// let total = Sum { counters: vec!["a", "b"] }.invoke_blocking(&mut con)?;
/// # let _ = total; Ok(()) }
/// ```
///
/// A lint switched off, options combined, and a script without keys or
/// arguments:
///
/// ```
/// # use redlua::redis_script;
/// #[redis_script("scripts/config.lua", returns = Option<String>, read_only, allow(literal_key))]
/// struct Config;
/// ```
///
/// `crate = path` names where the generated code finds the runtime, for a
/// crate that has it under another name than `::redlua`. This one compiles
/// only inside the crate that defines `__private` (the runtime itself), so it
/// is not a doctest:
///
/// ```ignore
/// #[redis_script("scripts/unlock.lua", returns = bool, crate = crate)]
/// pub(crate) struct Unlock<'a> { #[key] name: &'a str, #[arg] owner: &'a str }
/// ```
///
/// Pipelines need the script loaded first:
///
/// ```
/// # use redlua::redis_script;
/// # #[redis_script("scripts/sum.lua", returns = i64)]
/// # struct Sum<'a> { #[key(variadic)] counters: Vec<&'a str> }
/// # fn demo(mut con: redlua::redis::Connection) -> redlua::redis::RedisResult<()> {
/// Sum::load_blocking(&mut con)?;
/// let mut pipe = redlua::redis::pipe();
/// Sum { counters: vec!["a"] }.add_to_pipeline(&mut pipe).get("a");
/// let (total, a): (i64, Option<i64>) = pipe.query(&mut con)?;
/// # let _ = (total, a); Ok(()) }
/// ```
#[proc_macro_attribute]
pub fn redis_script(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(Kind::Script, attr.into(), item.into()).into()
}

/// Turns a struct into a typed, compile-time checked call of one function of
/// a Redis Functions library (Redis 7 and later).
///
/// ```
/// use redlua::redis_function;
///
/// // scripts/counters.lua:
/// //   #!lua name=counters
/// //   redis.register_function('bump', function(keys, args)
/// //     return redis.call('INCRBY', keys[1], args[1])
/// //   end)
/// //   redis.register_function{function_name = 'peek', flags = {'no-writes'},
/// //     callback = function(keys) return redis.call('GET', keys[1]) end}
///
/// #[redis_function("scripts/counters.lua", name = "bump", returns = i64)]
/// struct Bump<'a> {
///     #[key] counter: &'a str, // keys[1]
///     #[arg] by: i64,          // args[1]
/// }
///
/// #[redis_function("scripts/counters.lua", name = "peek", returns = Option<i64>)]
/// struct Peek<'a> {
///     #[key] counter: &'a str,
/// }
///
/// # async fn demo(con: &mut redlua::redis::aio::MultiplexedConnection) -> redlua::redis::RedisResult<()> {
/// let n = Bump { counter: "visits", by: 1 }.invoke(con).await?; // FCALL bump 1 visits 1
/// let now = Peek { counter: "visits" }.invoke(con).await?;      // FCALL_RO peek 1 visits
/// # Ok(()) }
/// ```
///
/// # Syntax
///
/// `#[redis_function("library.lua", name = "function" [, returns = Type] [, allow(lint, ...)] [, crate = path])]`
/// on a struct, whose fields follow the conventions of [`redis_script`]:
/// `#[key]` fields are the function's keys (its callback's first parameter,
/// whatever it is named), `#[arg]` fields its arguments (the second), in
/// field order, with an optional variadic tail of each.
///
/// - **`"library.lua"`** (required): the library file, relative to the
///   invoking crate's `Cargo.toml`. It must start with `#!lua name=<library>`
///   and register functions with `redis.register_function`, in either form
///   (`('name', callback)` or `{function_name = ..., callback = ..., flags =
///   {...}}`).
/// - **`name = "function"`** (required): the function to call. A name the
///   library does not register is an error at the name, with a "did you
///   mean" and the list of the library's functions.
/// - **`returns`**, **`allow(...)`**, **`crate = path`**: as for
///   [`redis_script`]. There is no `read_only` option: a function registered
///   with the `no-writes` flag is called with `FCALL_RO`, and a write
///   command in it is a compile error (lint `write_in_read_only`).
///
/// # Checks
///
/// The whole library is checked as Redis checks it at `FUNCTION LOAD`
/// (lint `library`, which cannot be allowed): the first line, the library
/// and function names (`[A-Za-z0-9_]+`), a function registered twice, an
/// unknown flag, a malformed registration, what the top level may not use
/// while the library loads (`redis.call`, and any global but `redis` with
/// `register_function`, `log` and the version constants), the `KEYS` /
/// `ARGV` globals (which functions do not have), and a
/// library that registers nothing. The named function's body is then
/// analyzed like a script, with every lint of [`redis_script`], against the
/// struct's fields: its first parameter plays `KEYS` and its second `ARGV`
/// (errors name them as written, e.g. `keys[3]`). Errors name the library
/// file, line and column and quote the line. A callback given neither inline
/// nor as a `local function` defined above its registration is not analyzed.
///
/// # Generated items
///
/// | item | what |
/// |---|---|
/// | `pub const SOURCE: &'static str` | the library's source, `include_str!`'d |
/// | `pub const LIBRARY_NAME: &'static str` | the library's name (`#!lua name=`) |
/// | `pub const FUNCTION_NAME: &'static str` | the function's name |
/// | `pub const KEY_COUNT: usize`, `ARG_COUNT: usize` | fixed keys and arguments |
/// | `pub const LIBRARY: LibraryDef`, `FUNCTION: FunctionDef` | the runtime's descriptions |
/// | `pub const CALLS: &'static [(u32, &'static str)]` | the library line and upper-case command name of each `redis.call` / `redis.pcall` of the function with a literal name, to name the command of a failure Redis reports by line (`@user_function:<line>`) |
/// | `pub fn call(&self) -> FunctionCall` | a call with this value's keys and arguments |
/// | `pub async fn invoke<C>(&self, con: &mut C) -> RedisResult<T>` | `FCALL` / `FCALL_RO` on an async connection; with the `aio` feature |
/// | `pub fn invoke_blocking<C>(&self, con: &mut C) -> RedisResult<T>` | the same, blocking |
/// | `pub fn add_to_pipeline<'p>(&self, pipe: &'p mut Pipeline) -> &'p mut Pipeline` | adds the call to a pipeline |
/// | `pub async fn load<C>(con: &mut C) -> RedisResult<()>` | `FUNCTION LOAD REPLACE`, checking the library name; with the `aio` feature |
/// | `pub fn load_blocking<C>(con: &mut C) -> RedisResult<()>` | the same, blocking |
///
/// When the server answers `ERR Function not found` (functions flushed, a
/// restart, a new node), `invoke` loads the library with `FUNCTION LOAD
/// REPLACE` and retries once. Pipelines cannot recover that way: call
/// `load` first.
#[proc_macro_attribute]
pub fn redis_function(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(Kind::Function, attr.into(), item.into()).into()
}

/// Expands `#[<kind>(attr)] item`: parse, check, generate.
///
/// Never fails: errors become `compile_error!`s, emitted next to the struct
/// (stripped of its `#[key]` / `#[arg]` attributes), and after a parse
/// error nothing else, so that they are the only errors the user sees.
fn run(
    kind: Kind,
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let input = match Input::parse(kind, attr, item) {
        Ok(input) => input,
        Err(tokens) => return tokens,
    };
    let mut errors = None;
    let checked = check::check(&input, &mut errors);
    expand::expand(input, &checked, errors)
}
