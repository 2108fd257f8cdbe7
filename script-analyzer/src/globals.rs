//! The names Redis's Lua sandbox provides, for tools that offer them (an
//! editor's completion): the globals a script may read, and the members of
//! each library (`redis.call`, `cjson.encode`, `string.format`, ...).
//!
//! ```
//! use redlua_analyzer::globals;
//!
//! assert!(globals::names().any(|name| name == "cjson"));
//! assert!(globals::members("redis").unwrap().contains(&"pcall"));
//! assert_eq!(globals::members("print"), None);
//! ```

/// Every global Redis's sandbox provides: the base functions, `KEYS`,
/// `ARGV` and the libraries.
pub fn names() -> impl Iterator<Item = &'static str> {
    crate::sandbox::globals()
}

/// The members of the library `name` (`"redis"`, `"cjson"`), if it is one.
pub fn members(name: &str) -> Option<&'static [&'static str]> {
    crate::sandbox::library(name)
}
