use redlua::redis_script;

// ARGV[1] is declared, but the script never reads it.
#[redis_script("tests/ui/scripts/unread_arg.lua", returns = i64)]
struct Incr<'a> {
    #[key]
    counter: &'a str,
    #[arg]
    by: i64,
}

fn main() {}
