use redlua::redis_script;

#[redis_script("tests/ui/scripts/literal_key.lua", returns = i64)]
struct Limited<'a> {
    #[key]
    counter: &'a str,
}

fn main() {}
