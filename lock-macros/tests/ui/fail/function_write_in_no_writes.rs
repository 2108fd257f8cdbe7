use redlua::redis_function;

// `take` is registered with `no-writes`, but GETDEL writes.
#[redis_function("tests/ui/scripts/no_writes_write.lua", name = "take")]
struct Take<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
