use redlua::redis_script;

#[redis_script("tests/ui/scripts/all_keys.lua")]
struct Total<'a> {
    #[key(variadic)]
    counters: Vec<&'a str>,
    #[key]
    last: &'a str,
}

fn main() {}
