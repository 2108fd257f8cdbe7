use redlua::redis_script;

#[redis_script("tests/ui/scripts/get.lua", retuns = i64)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

#[redis_script("tests/ui/scripts/get.lua", readonly)]
struct GetReadOnly<'a> {
    #[key]
    key: &'a str,
}

#[redis_script("tests/ui/scripts/get.lua", cache = true)]
struct GetCached<'a> {
    #[key]
    key: &'a str,
}

#[redis_script("tests/ui/scripts/get.lua")]
enum NotAStruct {}

#[redis_script(returns = i64)]
struct NoPath;

fn main() {}
