use redlua::redis_script;

#[redis_script("tests/ui/scripts/global_assignment.lua", returns = i64)]
struct Count<'a> {
    #[key]
    counter: &'a str,
}

fn main() {}
