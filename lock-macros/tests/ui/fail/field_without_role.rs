use redlua::redis_script;

#[redis_script("tests/ui/scripts/get.lua")]
struct Get<'a> {
    #[key]
    key: &'a str,
    timeout_ms: u64,
    #[key]
    #[arg]
    both: &'a str,
}

fn main() {}
