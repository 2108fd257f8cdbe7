use redlua::redis_script;

#[redis_script("tests/ui/scripts/get.lua", allow(litreal_key, syntax))]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
