use redlua::redis_script;

// INCR replies with a number and ARGV[1] is a string: Lua never equates them.
#[redis_script("tests/ui/scripts/incr_equals_string.lua", returns = i64)]
struct CountFirst<'a> {
    #[key]
    counter: &'a str,
    #[arg]
    first: &'a str,
}

fn main() {}
