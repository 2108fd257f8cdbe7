// A script that returns `false` (a nil reply) compiles without a warning
// when the declared type holds nil: `Option<i64>` (`None`), `bool` (`false`),
// `redis::Value` (`Nil`).
#![deny(warnings)]

use redlua::redis_script;

#[redis_script("tests/ui/scripts/returns_false.lua", returns = Option<i64>)]
struct SetOnce<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

#[redis_script("tests/ui/scripts/returns_false.lua", returns = bool)]
struct SetOnceFlag<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

#[redis_script("tests/ui/scripts/returns_false.lua", returns = redlua::redis::Value)]
struct SetOnceValue<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

fn main() {
    let call = SetOnce { key: "k", value: "v" }.call();
    assert_eq!(call.keys(), &[b"k".to_vec()]);
    assert_eq!(call.args(), &[b"v".to_vec()]);
    let flag = SetOnceFlag { key: "k", value: "v" }.call();
    assert_eq!(flag.keys(), &[b"k".to_vec()]);
    let value = SetOnceValue { key: "k", value: "v" }.call();
    assert_eq!(value.args(), &[b"v".to_vec()]);
}
