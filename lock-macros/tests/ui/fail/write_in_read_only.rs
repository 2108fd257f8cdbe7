use redlua::redis_script;

#[redis_script("tests/ui/scripts/writes.lua", read_only)]
struct SetAndGet<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

fn main() {}
