use redlua::redis_script;

// EXISTS replies 0 or 1, and 0 is true in Lua: the `if` is always taken.
#[redis_script("tests/ui/scripts/exists_condition.lua", returns = Option<String>)]
struct GetOr<'a> {
    #[key]
    key: &'a str,
    #[arg]
    default: &'a str,
}

fn main() {}
