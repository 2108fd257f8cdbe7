use redlua::redis_script;

// SET replies with a status, a table `{ok = 'OK'}` in Lua: never equal to 'OK'.
#[redis_script("tests/ui/scripts/set_equals_ok.lua", returns = i64)]
struct CountAndSet<'a> {
    #[key]
    counter: &'a str,
    #[key]
    target: &'a str,
    #[arg]
    value: &'a str,
}

fn main() {}
