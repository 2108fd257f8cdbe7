use redlua::redis_script;

#[redis_script("tests/ui/scripts/does_not_exist.lua")]
struct Missing<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
