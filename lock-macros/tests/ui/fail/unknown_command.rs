use redlua::redis_script;

#[redis_script("tests/ui/scripts/unknown_command.lua", returns = i64)]
struct Hit<'a> {
    #[key]
    page: &'a str,
}

fn main() {}
