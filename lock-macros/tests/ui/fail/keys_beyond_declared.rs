use redlua::redis_script;

// The script also writes KEYS[2], which this struct does not declare.
#[redis_script("tests/ui/scripts/two_keys.lua")]
struct Copy<'a> {
    #[key]
    from: &'a str,
}

fn main() {}
