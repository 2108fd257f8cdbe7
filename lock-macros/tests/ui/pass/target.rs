use redlua::redis_script;

// HEXPIRE exists on the target: Redis 7.4.
#[redis_script("tests/ui/scripts/hexpire.lua", returns = Vec<i64>, target = "redis-7.4")]
struct ExpireField<'a> {
    #[key]
    hash: &'a str,
    #[arg]
    seconds: u64,
    #[arg]
    field: &'a str,
}

fn main() {
    let call = ExpireField { hash: "h", seconds: 10, field: "f" }.call();
    assert_eq!(call.keys(), [b"h".to_vec()]);
    assert_eq!(call.args(), [b"10".to_vec(), b"f".to_vec()]);
}
