//! `argument_type`: a `redis.call` argument that is not a string or a
//! number.
//!
//! Redis sends each argument of `redis.call` as a string: a Lua string as
//! it is, a number formatted. A table, a boolean or nil makes the call
//! raise "Lua redis lib command arguments must be strings or integers".
//! Fires on an argument that the value facts say is never a string or a
//! number: a table (a reply table, `{...}`), `true` / `false`, nil (a
//! missing local, a field never set, `false` narrowed by a test), followed
//! through locals, fields, loops and branches. An error: the call raises
//! whenever it runs. A value that only may be `false` is `maybe_false`'s,
//! and an input the caller does not pass is `arity`'s.

use super::typed::{Operand, each_operand, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report};

/// What a value that is never a string or number is, for the message.
fn refused(value: &Inferred) -> Option<&'static str> {
    if value.ty == Ty::EMPTY || value.ty.intersects(Ty::STRING.union(Ty::NUMBER)) {
        return None;
    }
    let never = Ty::TABLES
        .union(Ty::BOOL)
        .union(Ty::NIL)
        .union(Ty::FUNCTION);
    if !value.ty.within(never) {
        return None;
    }
    Some(if value.ty.within(Ty::TABLES) {
        "a table"
    } else if value.ty.within(Ty::BOOL) {
        "a boolean"
    } else if value.ty.within(Ty::NIL) {
        "nil"
    } else if value.ty.within(Ty::FALSY) {
        "nil or `false`"
    } else {
        "never a string or a number"
    })
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_operand(cx, |expr, operand| {
        if operand != Operand::CommandArg {
            return;
        }
        let value = cx.types.of(expr);
        // An input the caller does not pass: `arity` reports where it is read.
        if matches!(value.origin, Some(Origin::Missing { .. })) {
            return;
        }
        let Some(what) = refused(&value) else {
            return;
        };
        report.diagnostics.push(
            Diagnostic::error(
                Lint::ArgumentType,
                cx.span_of(expr),
                format!(
                    "`{}` is {what}: Redis takes only strings and numbers as command arguments",
                    text(cx, expr)
                ),
            )
            .with_label("raises \"Lua redis lib command arguments must be strings or integers\"")
            .with_help("pass a string or a number: `tostring(...)`, `cjson.encode(...)`, or the field you meant"),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::ArgumentType, source, 2, 1)
    }

    #[test]
    fn tables_booleans_and_nil_are_refused() {
        assert_eq!(
            errors(
                "local r = redis.call('HGETALL', KEYS[1])\nreturn redis.call('SET', KEYS[2], r)"
            ),
            ["`r` is a table: Redis takes only strings and numbers as command arguments"]
        );
        for source in [
            // A literal table, through a field.
            "local o = {}\no.v = {1, 2}\nreturn redis.call('SET', KEYS[1], o.v, KEYS[2])",
            // A boolean, in a loop.
            "for i = 1, 2 do redis.call('SET', KEYS[i], ARGV[1] == 'x') end",
            // nil: a local never set on this path.
            "local v\nif ARGV[1] == 'a' then v = 'x' else redis.call('SET', KEYS[1], v) end\nreturn KEYS[2]",
            // `false`, after a test left only it.
            "local v = redis.call('GET', KEYS[1])\nif not v then redis.call('SET', KEYS[2], v) end",
            // The status table of SET.
            "local ok = redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], ok)",
        ] {
            assert_eq!(errors(source).len(), 1, "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn strings_numbers_and_unknown_values_pass() {
        for source in [
            "local r = redis.call('HGETALL', KEYS[1])\nreturn redis.call('SET', KEYS[2], cjson.encode(r))",
            "local o = {}\no.v = 'a'\nreturn redis.call('SET', KEYS[1], o.v, KEYS[2])",
            "for i = 1, 2 do redis.call('SET', KEYS[i], tostring(ARGV[1] == 'x')) end",
            "local v\nif ARGV[1] == 'a' then v = 'x' end\nif v then redis.call('SET', KEYS[1], v) end\nreturn KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[2], v or '0')",
            "local ok = redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], ok.ok)",
            "local function f(x) return redis.call('SET', KEYS[1], x) end return f(KEYS[2])",
            "redis.call('SET', KEYS[1], unpack(ARGV))",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
