//! What Redis's Lua sandbox provides: the globals a script may read and the
//! members of each library.
//!
//! Redis runs scripts in Lua 5.1 with a fixed set of libraries and a
//! read-only global table: reading a name outside this set fails with
//! "Script attempted to access nonexistent global variable", creating one with
//! "Attempt to modify a readonly table".

/// The base functions and values Redis keeps.
const BASE: &[&str] = &[
    "_G",
    "_VERSION",
    "assert",
    "collectgarbage",
    "error",
    "gcinfo",
    "getfenv",
    "getmetatable",
    "ipairs",
    "loadstring",
    "newproxy",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawset",
    "select",
    "setfenv",
    "setmetatable",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "xpcall",
];

/// The libraries, each with its members.
const LIBRARIES: &[(&str, &[&str])] = &[
    (
        "redis",
        &[
            "call",
            "pcall",
            "error_reply",
            "status_reply",
            "sha1hex",
            "log",
            "LOG_DEBUG",
            "LOG_VERBOSE",
            "LOG_NOTICE",
            "LOG_WARNING",
            "setresp",
            "set_repl",
            "REPL_ALL",
            "REPL_AOF",
            "REPL_REPLICA",
            "REPL_SLAVE",
            "REPL_NONE",
            "replicate_commands",
            "breakpoint",
            "debug",
            "acl_check_cmd",
            "REDIS_VERSION",
            "REDIS_VERSION_NUM",
        ],
    ),
    (
        "string",
        &[
            "byte", "char", "dump", "find", "format", "gfind", "gmatch", "gsub", "len", "lower",
            "match", "rep", "reverse", "sub", "upper",
        ],
    ),
    (
        "table",
        &[
            "concat", "foreach", "foreachi", "getn", "insert", "maxn", "remove", "setn", "sort",
        ],
    ),
    (
        "math",
        &[
            "abs",
            "acos",
            "asin",
            "atan",
            "atan2",
            "ceil",
            "cos",
            "cosh",
            "deg",
            "exp",
            "floor",
            "fmod",
            "frexp",
            "huge",
            "ldexp",
            "log",
            "log10",
            "max",
            "min",
            "mod",
            "modf",
            "pi",
            "pow",
            "rad",
            "random",
            "randomseed",
            "sin",
            "sinh",
            "sqrt",
            "tan",
            "tanh",
        ],
    ),
    (
        "bit",
        &[
            "arshift", "band", "bnot", "bor", "bswap", "bxor", "lshift", "rol", "ror", "rshift",
            "tobit", "tohex",
        ],
    ),
    (
        "cjson",
        &[
            "decode",
            "decode_array_with_array_mt",
            "decode_invalid_numbers",
            "decode_max_depth",
            "encode",
            "encode_empty_table_as_object",
            "encode_invalid_numbers",
            "encode_keep_buffer",
            "encode_max_depth",
            "encode_number_precision",
            "encode_sparse_array",
            "new",
            "null",
            "_NAME",
            "_VERSION",
        ],
    ),
    (
        "cmsgpack",
        &["pack", "unpack", "unpack_one", "unpack_limit"],
    ),
    ("struct", &["pack", "unpack", "size"]),
    (
        "coroutine",
        &["create", "resume", "running", "status", "wrap", "yield"],
    ),
    // Only `os.clock`, and only from Redis 7.4.
    ("os", &["clock"]),
];

/// Globals that a script receives.
const INPUTS: &[&str] = &["KEYS", "ARGV"];

/// Names Lua has but Redis removes, with why.
const REMOVED: &[(&str, &str)] = &[
    (
        "print",
        "use `redis.log(redis.LOG_NOTICE, ...)` to write to the server's log",
    ),
    ("require", "Redis scripts cannot load modules"),
    ("module", "Redis scripts cannot define modules"),
    ("dofile", "Redis scripts cannot read files"),
    ("loadfile", "Redis scripts cannot read files"),
    ("io", "Redis scripts cannot do I/O"),
    (
        "debug",
        "the `debug` library is not loaded; `redis.debug` logs to the Lua debugger",
    ),
    ("package", "Redis scripts cannot load modules"),
];

/// Whether Redis provides the global `name`.
pub(crate) fn is_global(name: &str) -> bool {
    BASE.contains(&name) || INPUTS.contains(&name) || library(name).is_some()
}

/// Every global Redis provides.
pub(crate) fn globals() -> impl Iterator<Item = &'static str> {
    BASE.iter()
        .chain(INPUTS)
        .copied()
        .chain(LIBRARIES.iter().map(|(name, _)| *name))
}

/// The members of library `name`, if it is one.
pub(crate) fn library(name: &str) -> Option<&'static [&'static str]> {
    LIBRARIES
        .iter()
        .find(|(lib, _)| *lib == name)
        .map(|(_, members)| *members)
}

/// Why Lua's global `name` is missing from Redis, if it is one Redis removed.
pub(crate) fn removed(name: &str) -> Option<&'static str> {
    REMOVED
        .iter()
        .find(|(removed, _)| *removed == name)
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_sandbox() {
        for name in [
            "redis", "KEYS", "ARGV", "cjson", "bit", "tonumber", "unpack", "os",
        ] {
            assert!(is_global(name), "{name}");
        }
        for name in ["print", "require", "io", "dofile", "loadfile", "reddis"] {
            assert!(!is_global(name), "{name}");
        }
        assert!(library("redis").unwrap().contains(&"sha1hex"));
        assert_eq!(library("os"), Some(&["clock"][..]));
        assert!(removed("print").is_some());
        assert!(globals().any(|g| g == "cmsgpack"));
    }
}
