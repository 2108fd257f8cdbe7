use redlua::redis_function;

// The library registers `get` and `set`.
#[redis_function("tests/ui/scripts/library.lua", name = "gte")]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
