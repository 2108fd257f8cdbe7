use redlua::redis_script;

// Script paths are relative to the crate's Cargo.toml, so that the crate
// builds wherever it is checked out.
#[redis_script("/etc/redlua/get.lua", returns = Option<String>)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
