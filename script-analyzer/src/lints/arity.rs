//! `arity`: the script and the Rust struct must agree on `KEYS` and `ARGV`.
//!
//! - `KEYS[n]` / `ARGV[n]` past the declared fields (without a variadic tail)
//!   would read `nil` at run time;
//! - a declared field that the script never reads is a mistake on the Rust
//!   side (the error points at the field);
//! - an index that is not a positive integer literal (`KEYS[0]`, `ARGV[-1]`,
//!   `ARGV[1.5]`) never reads an input.
//!
//! Also records the indices read into [`ScriptInfo`](crate::ScriptInfo).

use super::inputs::{self, Access, Table};
use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report, Target};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let uses = inputs::uses(cx);
    for u in &uses {
        let info = &mut report.info;
        match (&u.access, u.table) {
            (Access::Index(n), Table::Keys) => drop(info.keys_read.insert(*n)),
            (Access::Index(n), Table::Argv) => drop(info.args_read.insert(*n)),
            (Access::Dynamic(_), Table::Keys) => info.keys_dynamic = true,
            (Access::Dynamic(_), Table::Argv) => info.args_dynamic = true,
            (Access::Invalid(_), _) => {}
        }
    }
    for u in &uses {
        if let Access::Invalid(why) = &u.access {
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::Arity,
                    u.span,
                    format!("invalid {} index: {why}", u.table.name()),
                )
                .with_label("reads no input")
                .with_note(format!(
                    "{} holds the inputs at indices 1, 2, 3, ...",
                    u.table.name()
                )),
            );
        }
    }
    let Some(declared) = cx.options.declared else {
        return;
    };
    let tables = [
        (
            Table::Keys,
            declared.keys,
            declared.keys_variadic,
            "key",
            "#[key]",
        ),
        (
            Table::Argv,
            declared.args,
            declared.args_variadic,
            "argument",
            "#[arg]",
        ),
    ];
    for (table, fixed, variadic, noun, attribute) in tables {
        let name = table.name();
        if !variadic {
            for u in uses.iter().filter(|u| u.table == table) {
                let Access::Index(n) = u.access else { continue };
                if n as usize > fixed {
                    let declared = match fixed {
                        0 => format!("no {noun}s are declared"),
                        1 => format!("only 1 {noun} is declared"),
                        _ => format!("only {fixed} {noun}s are declared"),
                    };
                    report.diagnostics.push(
                        Diagnostic::error(Lint::Arity, u.span, format!("{name}[{n}] is read, but {declared}"))
                            .with_label(format!("{name}[{n}] would be nil"))
                            .with_help(format!(
                                "add {} `{attribute}` field{} to the struct, or mark the last one `{}` (a Vec)",
                                if n as usize - fixed == 1 { "a" } else { "more" },
                                if n as usize - fixed == 1 { "" } else { "s" },
                                attribute.replace(']', "(variadic)]"),
                            )),
                    );
                }
            }
        }
        let dynamic = match table {
            Table::Keys => report.info.keys_dynamic,
            Table::Argv => report.info.args_dynamic,
        };
        if dynamic {
            // Every index may be read: nothing to say about unread fields.
            continue;
        }
        let read = match table {
            Table::Keys => &report.info.keys_read,
            Table::Argv => &report.info.args_read,
        };
        let unread: Vec<usize> = (1..=fixed)
            .filter(|i| !read.contains(&(*i as u32)))
            .collect();
        for i in unread {
            let target = match table {
                Table::Keys => Target::Key(i - 1),
                Table::Argv => Target::Arg(i - 1),
            };
            report.diagnostics.push(
                Diagnostic::declaration_error(
                    Lint::Arity,
                    target,
                    format!("this {noun} is passed as {name}[{i}], but the script never reads {name}[{i}]"),
                )
                .with_help(format!("remove the field, or read {name}[{i}] in the script")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::{lint, lint_with, marked, messages};
    use crate::{Declared, Lint, Options, Target, analyze};

    #[test]
    fn reads_past_the_declared_fields() {
        assert_eq!(
            messages(Lint::Arity, "return {KEYS[1], KEYS[3], ARGV[1]}", 2, 1),
            [
                "KEYS[3] is read, but only 2 keys are declared",
                "this key is passed as KEYS[2], but the script never reads KEYS[2]",
            ]
        );
        assert_eq!(
            messages(Lint::Arity, "return ARGV[1]", 0, 0),
            ["ARGV[1] is read, but no arguments are declared"]
        );
    }

    #[test]
    fn carets_cover_the_closing_bracket() {
        assert_eq!(
            marked(Lint::Arity, "return redis.call('GET', KEYS[2])", 1, 0),
            ["KEYS[2]"]
        );
        assert_eq!(
            marked(Lint::Arity, "return {ARGV[ 3 ], KEYS[1]}", 1, 0),
            ["ARGV[ 3 ]"]
        );
    }

    #[test]
    fn unread_fields_point_at_the_field() {
        let found = lint(Lint::Arity, "return ARGV[2]", 0, 2);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, Target::Arg(0));
    }

    #[test]
    fn invalid_indices() {
        let found = messages(
            Lint::Arity,
            "return {KEYS[0], ARGV[-1], ARGV[1.5], KEYS['a']}",
            0,
            0,
        );
        assert_eq!(
            found,
            [
                "invalid KEYS index: index 0 is out of range: the first is 1",
                "invalid ARGV index: index -1 is out of range: the first is 1",
                "invalid ARGV index: index 1.5 is not an integer",
                "invalid KEYS index: 'a' is a string, not an index",
            ]
        );
        // Without declarations, only invalid indices are reported.
        let options = Options::default();
        assert_eq!(
            lint_with(Lint::Arity, "return {KEYS[9], ARGV[0]}", &options).len(),
            1
        );
    }

    #[test]
    fn variadic_tails_accept_any_later_index() {
        let options = Options {
            declared: Some(Declared {
                keys: 1,
                keys_variadic: true,
                args: 0,
                args_variadic: false,
            }),
            ..Options::default()
        };
        assert!(lint_with(Lint::Arity, "return {KEYS[1], KEYS[7]}", &options).is_empty());
        assert_eq!(
            lint_with(Lint::Arity, "return {KEYS[1], ARGV[1]}", &options).len(),
            1
        );
    }

    #[test]
    fn derived_keys_and_locals_named_keys() {
        let src = "local prefix = KEYS[1] .. ':' .. ARGV[1]\nlocal KEYS = {1}\nreturn KEYS[5]";
        assert!(messages(Lint::Arity, src, 1, 1).is_empty());
    }

    #[test]
    fn records_what_is_read() {
        let info = analyze(
            "local n = #ARGV; return {KEYS[2], ARGV[1]}",
            &Options::default(),
        )
        .info;
        assert_eq!(info.keys_read.into_iter().collect::<Vec<_>>(), [2]);
        assert_eq!(info.args_read.into_iter().collect::<Vec<_>>(), [1]);
        assert!(info.args_dynamic);
        assert!(!info.keys_dynamic);
    }
}
