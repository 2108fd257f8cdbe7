use redlua::redis_script;

// The script returns a table, which an `i64` cannot hold.
#[redis_script("tests/ui/scripts/returns_table.lua", returns = i64)]
struct Wrapped<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
