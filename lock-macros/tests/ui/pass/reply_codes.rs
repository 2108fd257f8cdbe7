use redlua::redis_script;
use redlua::script::{ReplyCode, ReplyCodes};

/// What `claim.lua` answers: `{1, token}`, `{0, ttl}` or `-1`.
#[derive(Debug, PartialEq)]
enum Claimed {
    Won { token: i64 },
    Busy { ttl_ms: i64 },
    NoOwner,
}

impl Claimed {
    const WON: i64 = 1;
    const BUSY: i64 = 0;
    const NO_OWNER: i64 = -1;
}

impl ReplyCodes for Claimed {
    const CODES: &'static [ReplyCode] = &[
        ReplyCode::Pair(Claimed::WON),
        ReplyCode::Pair(Claimed::BUSY),
        ReplyCode::Integer(Claimed::NO_OWNER),
    ];
}

impl redlua::redis::FromRedisValue for Claimed {
    fn from_redis_value(
        v: redlua::redis::Value,
    ) -> Result<Self, redlua::redis::ParsingError> {
        if let redlua::redis::Value::Int(Claimed::NO_OWNER) = v {
            return Ok(Claimed::NoOwner);
        }
        let (code, value): (i64, i64) = redlua::redis::FromRedisValue::from_redis_value(v)?;
        match code {
            Claimed::WON => Ok(Claimed::Won { token: value }),
            Claimed::BUSY => Ok(Claimed::Busy { ttl_ms: value }),
            other => Err(format!("unknown code {other}").into()),
        }
    }
}

// Every `return` of the script gives a code `Claimed` declares.
#[redis_script("tests/ui/scripts/claim.lua", returns = Claimed, codes)]
struct Claim<'a> {
    #[key]
    key: &'a str,
    #[arg]
    owner: &'a str,
}

/// What `take.lua` answers: `{1, token, left}` or `{0, ttl, left}`.
#[derive(Debug, PartialEq)]
enum Took {
    Yes { token: i64, left: i64 },
    No { ttl_ms: i64, left: i64 },
}

impl ReplyCodes for Took {
    const CODES: &'static [ReplyCode] = &[ReplyCode::Triple(1), ReplyCode::Triple(0)];
}

impl redlua::redis::FromRedisValue for Took {
    fn from_redis_value(
        v: redlua::redis::Value,
    ) -> Result<Self, redlua::redis::ParsingError> {
        let (code, a, left): (i64, i64, i64) = redlua::redis::FromRedisValue::from_redis_value(v)?;
        Ok(if code == 1 {
            Took::Yes { token: a, left }
        } else {
            Took::No { ttl_ms: a, left }
        })
    }
}

// A table of three whose first element is a code: `Triple`.
#[redis_script("tests/ui/scripts/take.lua", returns = Took, codes)]
struct Take<'a> {
    #[key]
    permits: &'a str,
    #[key]
    tokens: &'a str,
}

fn main() {
    let claim = Claim { key: "job", owner: "me" };
    let _ = (claim.key, claim.owner);
    let take = Take { permits: "p", tokens: "t" };
    let _ = (take.permits, take.tokens);
    let pair = |a, b| redlua::redis::Value::Array(vec![redlua::redis::Value::Int(a), redlua::redis::Value::Int(b)]);
    use redlua::redis::FromRedisValue;
    assert_eq!(Claimed::from_redis_value(pair(1, 7)).unwrap(), Claimed::Won { token: 7 });
    assert_eq!(Claimed::from_redis_value(pair(0, 250)).unwrap(), Claimed::Busy { ttl_ms: 250 });
    assert_eq!(
        Claimed::from_redis_value(redlua::redis::Value::Int(-1)).unwrap(),
        Claimed::NoOwner
    );
    let triple = |a, b, c| {
        redlua::redis::Value::Array(vec![
            redlua::redis::Value::Int(a),
            redlua::redis::Value::Int(b),
            redlua::redis::Value::Int(c),
        ])
    };
    assert_eq!(Took::from_redis_value(triple(1, 7, 2)).unwrap(), Took::Yes { token: 7, left: 2 });
    assert_eq!(Took::from_redis_value(triple(0, 90, 0)).unwrap(), Took::No { ttl_ms: 90, left: 0 });
}
