use redlua::redis_script;

// A `#!lua flags=no-writes` shebang makes the script read-only (EVALSHA_RO)
// without the `read_only` option.
#[redis_script("tests/ui/scripts/shebang_get.lua", returns = Option<String>)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

// Without a shebang nor `read_only`, scripts are sent with EVALSHA.
#[redis_script("tests/ui/scripts/get.lua", returns = Option<String>)]
struct GetRw<'a> {
    #[key]
    key: &'a str,
}

fn main() {
    assert!(Get::SCRIPT.read_only);
    assert!(!GetRw::SCRIPT.read_only);
    assert_eq!(Get { key: "k" }.call().keys(), GetRw { key: "k" }.call().keys());
}
