use redlua::redis_script;

// No Redis or Valkey knows `allow-key-locking`: the server refuses the script.
#[redis_script("tests/ui/scripts/allow_key_locking.lua", returns = Option<String>)]
struct Get<'a> {
    #[key]
    key: &'a str,
}

fn main() {}
