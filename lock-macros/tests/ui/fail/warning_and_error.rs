use redlua::redis_script;

// A script with an error (KEYS[2] is not declared) and a warning (GET may
// answer `false`): the error stops the build, and the warning is shown too.
#[redis_script("tests/ui/scripts/warning_and_error.lua", returns = i64)]
struct Bump<'a> {
    #[key]
    counter: &'a str,
}

fn main() {
    let _ = Bump { counter: "c" }.call();
}
