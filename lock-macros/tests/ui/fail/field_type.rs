use redlua::redis_script;

/// Not something Redis can take: no `redis::ToRedisArgs` implementation.
struct Expiry {
    seconds: u64,
}

#[redis_script("tests/ui/scripts/writes.lua")]
struct Set<'a> {
    #[key]
    key: &'a str,
    #[arg]
    expiry: Expiry,
}

fn main() {
    let _ = Expiry { seconds: 1 }.seconds;
}
