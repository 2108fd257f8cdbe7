// Every option at once: `returns`, `read_only`, `allow(...)`, `crate = path`,
// variadic keys and arguments, interleaved fields, generics and a where clause.
mod reexported {
    pub use redlua as inner;
}

use reexported::inner::redis_script;

/// A weighted sum of counters.
#[redis_script(
    "tests/ui/scripts/sum_read_only.lua",
    returns = Option<i64>,
    read_only,
    allow(literal_key, non_integer_return),
    crate = reexported::inner,
)]
pub struct WeightedSum<'a, W>
where
    W: redlua::redis::ToRedisArgs,
{
    /// Only checked for existence.
    #[key]
    pub marker: &'a str,
    /// The scale.
    #[arg]
    pub scale: W,
    /// The counters.
    #[key(variadic)]
    pub counters: Vec<String>,
    /// One weight per counter.
    #[arg(variadic)]
    pub weights: &'a [u32],
}

/// A script without keys or arguments (and a trailing comma).
#[redis_script("tests/ui/scripts/return_3_5.lua", allow(non_integer_return),)]
struct Half;

fn main() {
    type Sum<'a> = WeightedSum<'a, f64>;
    assert_eq!(Sum::KEY_COUNT, 1);
    assert_eq!(Sum::ARG_COUNT, 1);
    assert!(Sum::SCRIPT.read_only);
    assert_eq!(Sum::SCRIPT.name, "WeightedSum");
    assert_eq!(Sum::SCRIPT.path, "tests/ui/scripts/sum_read_only.lua");
    assert!(Sum::SOURCE.starts_with("#!lua flags=no-writes\n"));
    assert_eq!(Sum::SHA1.len(), 40);
    assert!(Sum::SHA1.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));

    let weights = [2, 3];
    let sum = WeightedSum {
        marker: "m",
        scale: 0.5,
        counters: vec!["a".to_owned(), "b".to_owned()],
        weights: &weights,
    };
    let call = sum.call();
    let strings = |v: &[Vec<u8>]| -> Vec<String> {
        v.iter().map(|b| String::from_utf8(b.clone()).unwrap()).collect()
    };
    assert_eq!(strings(call.keys()), ["m", "a", "b"]);
    assert_eq!(strings(call.args()), ["0.5", "2", "3"]);

    assert!(!Half::SCRIPT.read_only);
    assert_eq!((Half::KEY_COUNT, Half::ARG_COUNT), (0, 0));
    assert!(Half.call().keys().is_empty());

    // The generated methods exist with the documented signatures.
    let mut pipe = redlua::redis::pipe();
    sum.add_to_pipeline(&mut pipe);
    Half.add_to_pipeline(&mut pipe);
    let _blocking: fn(&Half, &mut redlua::redis::Connection) -> redlua::redis::RedisResult<redlua::redis::Value> =
        Half::invoke_blocking;
    let _load: fn(&mut redlua::redis::Connection) -> redlua::redis::RedisResult<()> =
        Half::load_blocking::<redlua::redis::Connection>;
}
