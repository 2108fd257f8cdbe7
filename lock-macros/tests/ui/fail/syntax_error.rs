use redlua::redis_script;

#[redis_script("tests/ui/scripts/goto.lua", returns = i64)]
struct Goto;

fn main() {}
