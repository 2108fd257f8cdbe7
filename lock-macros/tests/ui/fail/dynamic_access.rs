use redlua::redis_script;

// The script iterates over all of KEYS, but the struct has no variadic key.
#[redis_script("tests/ui/scripts/all_keys.lua", returns = i64)]
struct Total<'a> {
    #[key]
    first: &'a str,
}

fn main() {}
