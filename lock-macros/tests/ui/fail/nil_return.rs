use redlua::redis_script;

// The script returns `false`, which arrives as nil: an `i64` cannot hold it
// (`Option<i64>` can).
#[redis_script("tests/ui/scripts/returns_false.lua", returns = i64)]
struct SetOnce<'a> {
    #[key]
    key: &'a str,
    #[arg]
    value: &'a str,
}

fn main() {}
