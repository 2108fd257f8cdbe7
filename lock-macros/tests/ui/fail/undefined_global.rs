use redlua::redis_script;

#[redis_script("tests/ui/scripts/undefined_global.lua", returns = i64)]
struct AddTo<'a> {
    #[key]
    counter: &'a str,
    #[arg]
    by: &'a str,
}

fn main() {}
