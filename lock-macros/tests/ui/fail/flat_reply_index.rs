use redlua::redis_script;

// HGETALL arrives as a flat array {field, value, ...}: `.state` is always nil.
#[redis_script("tests/ui/scripts/hgetall_by_name.lua", returns = Option<String>)]
struct JobState<'a> {
    #[key]
    job: &'a str,
}

fn main() {}
