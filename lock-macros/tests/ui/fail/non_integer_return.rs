use redlua::redis_script;

#[redis_script("tests/ui/scripts/return_3_5.lua")]
struct Half;

fn main() {}
