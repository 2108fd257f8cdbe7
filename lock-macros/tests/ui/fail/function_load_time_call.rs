use redlua::redis_function;

// The library calls Redis at its top level: FUNCTION LOAD refuses it.
#[redis_function("tests/ui/scripts/load_time_call.lua", name = "get")]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
