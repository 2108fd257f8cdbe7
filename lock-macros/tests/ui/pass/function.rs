use redlua::redis_function;

// Both forms of `redis.register_function`; `get` has the `no-writes` flag,
// so it is called with FCALL_RO.
#[redis_function("tests/ui/scripts/library.lua", name = "get", returns = Option<String>)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

#[redis_function("tests/ui/scripts/library.lua", name = "set", returns = String, allow(literal_key))]
struct Set<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

fn main() {
    const {
        assert!(Get::FUNCTION.read_only);
        assert!(!Set::FUNCTION.read_only);
    }
    assert_eq!(Get::LIBRARY_NAME, "ui_lib");
    assert_eq!(Set::FUNCTION_NAME, "set");
    assert_eq!(Set { key: "k", value: "v" }.call().args(), [b"v".to_vec()]);
    assert_eq!(Get { key: "k" }.call().keys(), [b"k".to_vec()]);
}
