use redlua::redis_script;

// Nothing may follow `return` in a block: Redis refuses to compile the script.
#[redis_script("tests/ui/scripts/return_twice.lua", returns = Option<String>)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
