use redlua::redis_script;

// HEXPIRE came with Redis 7.4; the default target is Redis 7.0.
#[redis_script("tests/ui/scripts/hexpire.lua", returns = Vec<i64>)]
struct ExpireField<'a> {
    #[key]
    hash: &'a str,
    #[arg]
    seconds: u64,
    #[arg]
    field: &'a str,
}

// No Valkey has it.
#[redis_script("tests/ui/scripts/hexpire.lua", returns = Vec<i64>, target = "valkey-8.0")]
struct ExpireFieldOnValkey<'a> {
    #[key]
    hash: &'a str,
    #[arg]
    seconds: u64,
    #[arg]
    field: &'a str,
}

fn main() {}
