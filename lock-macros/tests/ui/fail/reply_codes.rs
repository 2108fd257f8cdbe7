use redlua::redis_script;
use redlua::script::{ReplyCode, ReplyCodes};

/// What `claim.lua` answers, as its Rust side reads it: `{1, token}` or
/// `{0, ttl}`. The script's `return -1` (an empty owner) is missing here.
enum Claimed {
    Won,
    Busy,
}

impl ReplyCodes for Claimed {
    const CODES: &'static [ReplyCode] = &[ReplyCode::Pair(1), ReplyCode::Pair(0)];
}

impl redlua::redis::FromRedisValue for Claimed {
    fn from_redis_value(
        v: redlua::redis::Value,
    ) -> Result<Self, redlua::redis::ParsingError> {
        let (code, _): (i64, i64) = redlua::redis::FromRedisValue::from_redis_value(v)?;
        Ok(if code == 1 { Claimed::Won } else { Claimed::Busy })
    }
}

// A code the script returns and the type does not declare: a compile error
// naming the script's line.
#[redis_script("tests/ui/scripts/claim.lua", returns = Claimed, codes)]
struct Claim<'a> {
    #[key]
    key: &'a str,
    #[arg]
    owner: &'a str,
}

// A return whose code cannot be told: `codes` cannot check it.
#[redis_script("tests/ui/scripts/claim_unknown.lua", returns = Claimed, codes)]
struct Stored<'a> {
    #[key]
    key: &'a str,
}

// `codes` needs the type that declares them.
#[redis_script("tests/ui/scripts/get.lua", codes)]
struct NoType<'a> {
    #[key]
    key: &'a str,
}

// A table of three (`take.lua`'s `{1, token, left}`) is not a pair: the
// type declares its codes as `Triple`.
#[redis_script("tests/ui/scripts/take.lua", returns = Claimed, codes)]
struct Take<'a> {
    #[key]
    permits: &'a str,
    #[key]
    tokens: &'a str,
}

fn main() {
    let _ = (Claimed::Won, Claimed::Busy);
}
