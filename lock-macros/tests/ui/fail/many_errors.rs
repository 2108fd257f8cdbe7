use redlua::redis_script;

// Every problem is reported at once.
#[redis_script("tests/ui/scripts/many_errors.lua")]
struct Broken<'a> {
    #[key]
    key: &'a str,
    #[arg]
    unused: i64,
}

fn main() {}
