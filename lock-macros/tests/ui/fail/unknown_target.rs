use redlua::redis_script;

#[redis_script("tests/ui/scripts/get.lua", target = "redis-7.3")]
struct Get<'a> {
    #[key]
    key: &'a str,
}

#[redis_script("tests/ui/scripts/get.lua", target = "dragonfly")]
struct GetElsewhere<'a> {
    #[key]
    key: &'a str,
}

#[redis_script("tests/ui/scripts/get.lua", target = redis_7_4)]
struct GetUnquoted<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
