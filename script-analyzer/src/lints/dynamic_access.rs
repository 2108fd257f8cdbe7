//! `dynamic_access`: `KEYS` / `ARGV` read with a computed index, by length or
//! as a whole (`KEYS[i]`, `#ARGV`, `unpack(KEYS)`, `ipairs(ARGV)`) while the
//! struct declares a fixed number of them.
//!
//! Such a script takes a variable number of inputs: the struct should end
//! with a `Vec` field marked `#[key(variadic)]` / `#[arg(variadic)]`.

use super::inputs::{self, Access, Table};
use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let Some(declared) = cx.options.declared else {
        return;
    };
    for u in inputs::uses(cx) {
        let Access::Dynamic(how) = u.access else {
            continue;
        };
        let (variadic, attribute) = match u.table {
            Table::Keys => (declared.keys_variadic, "#[key(variadic)]"),
            Table::Argv => (declared.args_variadic, "#[arg(variadic)]"),
        };
        if variadic {
            continue;
        }
        let name = u.table.name();
        report.diagnostics.push(
            Diagnostic::error(
                Lint::DynamicAccess,
                u.span,
                format!("{name} is read dynamically ({how}), but the struct declares a fixed number of them"),
            )
            .with_label(format!("reads {how} of {name}"))
            .with_help(format!("end the struct with a `Vec` field marked `{attribute}`")),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::{lint_with, messages};
    use crate::{Declared, Lint, Options};

    #[test]
    fn dynamic_reads_need_a_variadic_field() {
        assert_eq!(
            messages(
                Lint::DynamicAccess,
                "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end",
                1,
                0
            ),
            [
                "KEYS is read dynamically (its length), but the struct declares a fixed number of them",
                "KEYS is read dynamically (a computed index), but the struct declares a fixed number of them",
            ]
        );
        assert_eq!(
            messages(
                Lint::DynamicAccess,
                "return redis.call('MGET', unpack(KEYS))",
                0,
                0
            ),
            [
                "KEYS is read dynamically (the whole table), but the struct declares a fixed number of them"
            ]
        );
        assert_eq!(
            messages(Lint::DynamicAccess, "for _, a in ipairs(ARGV) do end", 0, 0).len(),
            1
        );
    }

    #[test]
    fn variadic_fields_allow_it() {
        let options = Options {
            declared: Some(Declared {
                keys: 0,
                keys_variadic: true,
                args: 1,
                args_variadic: false,
            }),
            ..Options::default()
        };
        assert!(
            lint_with(
                Lint::DynamicAccess,
                "return redis.call('DEL', unpack(KEYS))",
                &options
            )
            .is_empty()
        );
        assert_eq!(
            lint_with(Lint::DynamicAccess, "return #ARGV", &options).len(),
            1
        );
        // Undeclared (lockctl lint on a bare file): not reported.
        assert!(lint_with(Lint::DynamicAccess, "return #ARGV", &Options::default()).is_empty());
    }
}
