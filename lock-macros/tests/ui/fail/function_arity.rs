use redlua::redis_function;

// `set` reads args[1], which is not declared.
#[redis_function("tests/ui/scripts/library.lua", name = "set")]
struct Set<'a> {
    #[key]
    key: &'a str,
}

// `get` reads keys[1] only: the second key is never read.
#[redis_function("tests/ui/scripts/library.lua", name = "get")]
struct Get<'a> {
    #[key]
    key: &'a str,
    #[key]
    other: &'a str,
}

fn main() {}
