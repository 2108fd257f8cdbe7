use redlua::redis_script;

// Reading a member Redis's Lua lacks is no error when the script tests for
// it: `table.unpack or unpack`.
#[redis_script("tests/ui/scripts/unpack_compat.lua", returns = Vec<Option<String>>, read_only)]
struct Values {
    #[key(variadic)]
    keys: Vec<String>,
}

fn main() {
    let call = Values {
        keys: vec!["a".to_owned(), "b".to_owned()],
    }
    .call();
    assert_eq!(call.keys(), &[b"a".to_vec(), b"b".to_vec()]);
}
