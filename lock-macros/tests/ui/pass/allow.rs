use redlua::redis_script;

// `literal_key` is switched off: the script reads a fixed configuration key.
#[redis_script("tests/ui/scripts/literal_key.lua", returns = i64, allow(literal_key))]
struct Limited<'a> {
    #[key]
    counter: &'a str,
}

fn main() {
    let call = Limited { counter: "hits" }.call();
    assert_eq!(call.keys(), &[b"hits".to_vec()]);
    assert!(call.args().is_empty());
    assert_eq!(Limited::KEY_COUNT, 1);
    assert_eq!(Limited::ARG_COUNT, 0);
}
