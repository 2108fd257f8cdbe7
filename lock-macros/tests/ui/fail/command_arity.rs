use redlua::redis_script;

#[redis_script("tests/ui/scripts/command_arity.lua")]
struct Get<'a> {
    #[key]
    key: &'a str,
    #[arg]
    default: &'a str,
}

fn main() {}
