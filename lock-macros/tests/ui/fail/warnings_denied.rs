// The analyzer's warnings are compiler warnings (of the `deprecated` lint):
// `deny(warnings)` makes them errors, so this snapshot shows them.
#![deny(warnings)]

use redlua::{redis_function, redis_script};

// maybe_false: GET may answer `false`, and `false + 1` raises.
#[redis_script("tests/ui/scripts/get_plus_one.lua", returns = i64)]
struct Bump<'a> {
    #[key]
    counter: &'a str,
}

// The same warning in a function of a library.
#[redis_function("tests/ui/scripts/library_warning.lua", name = "bump", returns = i64)]
struct BumpBy<'a> {
    #[key]
    counter: &'a str,
    #[arg]
    by: i64,
}

// Allowed: no warning.
#[redis_script("tests/ui/scripts/get_plus_one.lua", returns = i64, allow(maybe_false))]
struct BumpAllowed<'a> {
    #[key]
    counter: &'a str,
}

fn main() {
    let _ = Bump { counter: "c" }.call();
    let _ = BumpBy { counter: "c", by: 1 }.call();
    let _ = BumpAllowed { counter: "c" }.call();
}
