use redlua::redis_script;

#[redis_script("tests/ui/scripts/unknown_member.lua")]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
