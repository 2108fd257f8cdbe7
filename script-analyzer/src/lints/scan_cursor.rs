//! `scan_cursor`: a SCAN loop that never ends.
//!
//! - SCAN, SSCAN, HSCAN and ZSCAN reply `{cursor, items}`, and the cursor
//!   is a string: `until cursor == 0` is never true, so the loop never ends
//!   (and `cursor > 0` raises). Compare with `'0'`.
//! - The local a loop passes to SCAN as its cursor must advance on every
//!   round of that loop. When every assignment to it sits inside an inner
//!   loop (typically the loop over the page's items), a round whose page
//!   is empty (SCAN returns empty pages with a non-zero cursor, often so
//!   with `MATCH`) leaves the cursor where it was: SCAN is called again
//!   with the same cursor, gets the same empty page, and the script loops
//!   until it is killed.

use super::typed::each_comparison;
use super::{CallArg, Context, RedisCall};
use crate::Span;
use crate::facts::{Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Assignment, Expression, GenericFor, NumericFor, Repeat, Var, While};
use full_moon::node::Node;
use full_moon::visitors::Visitor;

/// The SCAN family, with the position of the cursor among the arguments
/// (the command name is argument 0).
const CURSOR_ARG: &[(&str, usize)] = &[("SCAN", 1), ("SSCAN", 2), ("HSCAN", 2), ("ZSCAN", 2)];

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    compared_with_numbers(cx, report);
    advanced_only_in_an_inner_loop(cx, calls, report);
}

/// The loops, the locals read and the assignments of a script, by offsets.
#[derive(Default)]
struct Places {
    /// Each loop statement's `(start, end)`.
    loops: Vec<(usize, usize)>,
    /// Each local read as a plain name, by its span's offsets.
    names: std::collections::HashMap<(usize, usize), usize>,
    /// Each assignment to a local: the local, and where.
    assigned: Vec<(usize, Span)>,
}

struct Collector<'c, 'a> {
    cx: &'c Context<'a>,
    places: Places,
}

impl Collector<'_, '_> {
    fn push_loop(&mut self, node: &impl Node) {
        let span = self.cx.span_of(node);
        self.places.loops.push((span.start.offset, span.end.offset));
    }
}

impl Visitor for Collector<'_, '_> {
    fn visit_repeat(&mut self, node: &Repeat) {
        self.push_loop(node);
    }

    fn visit_while(&mut self, node: &While) {
        self.push_loop(node);
    }

    fn visit_numeric_for(&mut self, node: &NumericFor) {
        self.push_loop(node);
    }

    fn visit_generic_for(&mut self, node: &GenericFor) {
        self.push_loop(node);
    }

    fn visit_expression(&mut self, expr: &Expression) {
        if let Expression::Var(Var::Name(token)) = expr
            && let Some(var) = self.cx.types.local(token)
        {
            let span = self.cx.span_of(expr);
            self.places
                .names
                .insert((span.start.offset, span.end.offset), var);
        }
    }

    fn visit_assignment(&mut self, assignment: &Assignment) {
        for target in assignment.variables() {
            if let Var::Name(token) = target
                && let Some(var) = self.cx.types.local(token)
            {
                self.places
                    .assigned
                    .push((var, self.cx.span_of(assignment)));
            }
        }
    }
}

/// A cursor assigned only inside a loop nested in the loop that scans.
fn advanced_only_in_an_inner_loop(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let mut collector = Collector {
        cx,
        places: Places::default(),
    };
    cx.visit(&mut collector);
    let places = collector.places;
    let within = |inner: (usize, usize), outer: (usize, usize)| {
        outer.0 <= inner.0 && inner.1 <= outer.1 && inner != outer
    };
    let mut reported = std::collections::HashSet::new();
    for call in calls {
        let Some(name) = call.command_name().map(str::to_ascii_uppercase) else {
            continue;
        };
        let Some(&(command, position)) = CURSOR_ARG.iter().find(|(c, _)| *c == name) else {
            continue;
        };
        let Some(CallArg::Expr(arg)) = call.args.get(position) else {
            continue;
        };
        let Some(&cursor) = places.names.get(&(arg.start.offset, arg.end.offset)) else {
            continue;
        };
        let at = (call.span.start.offset, call.span.end.offset);
        // The innermost loop around the call: the loop that scans.
        let Some(&scanning) = places
            .loops
            .iter()
            .filter(|l| within(at, **l))
            .min_by_key(|l| l.1 - l.0)
        else {
            continue;
        };
        let inner: Vec<(usize, usize)> = places
            .loops
            .iter()
            .copied()
            .filter(|l| within(*l, scanning))
            .collect();
        let mut in_round = false;
        let mut nested = None;
        for (var, span) in &places.assigned {
            let place = (span.start.offset, span.end.offset);
            if *var != cursor || !within(place, scanning) {
                continue;
            }
            if inner.iter().any(|l| within(place, *l)) {
                nested.get_or_insert(*span);
            } else {
                in_round = true;
            }
        }
        let Some(span) = nested.filter(|_| !in_round) else {
            continue;
        };
        if !reported.insert(span.start.offset) {
            continue;
        }
        report.diagnostics.push(
            Diagnostic::error(
                Lint::ScanCursor,
                span,
                format!(
                    "the {command} cursor advances only inside an inner loop: a round whose page is empty leaves it unchanged, and the scan repeats the same page forever"
                ),
            )
            .with_label("not reached when the page is empty")
            .with_help("assign the cursor from the reply right after the call, outside the loop over its items"),
        );
    }
}

/// A cursor compared with a number.
fn compared_with_numbers(cx: &Context<'_>, report: &mut Report) {
    each_comparison(cx, |cmp| {
        let (l, r) = (cx.types.of(cmp.lhs), cx.types.of(cmp.rhs));
        let (cursor, other) = match (&l.origin, &r.origin) {
            (Some(Origin::Cursor { command }), _) => (command.clone(), &r),
            (_, Some(Origin::Cursor { command })) => (command.clone(), &l),
            _ => return,
        };
        if !other.ty.within(Ty::NUMBER) {
            return;
        }
        let outcome = if cmp.is_equality() {
            format!("`{}` is always {}", cmp.op, cmp.always())
        } else {
            format!(
                "`{}` raises \"attempt to compare number with string\"",
                cmp.op
            )
        };
        report.diagnostics.push(
            Diagnostic::error(
                Lint::ScanCursor,
                cx.span_of(cmp.whole),
                format!("{cursor}'s cursor is a string; compared with a number, {outcome}"),
            )
            .with_label("a scan loop that waits for this never ends")
            .with_help("compare with the string: `cursor == '0'`"),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::ScanCursor, source, 1, 1)
    }

    #[test]
    fn cursors_compared_with_numbers() {
        let source = "local cursor = '0'\nrepeat\n  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1])\n  cursor = r[1]\n  for _, k in ipairs(r[2]) do redis.call('UNLINK', k) end\nuntil cursor == 0\nreturn KEYS[1]";
        assert_eq!(
            errors(source),
            ["SCAN's cursor is a string; compared with a number, `==` is always false"]
        );
        assert_eq!(
            errors("if redis.call('HSCAN', KEYS[1], 0)[1] ~= 0 then return ARGV[1] end return 0")
                .len(),
            1
        );
    }

    #[test]
    fn cursors_kept_in_a_field_compared_with_numbers() {
        let source = "local s = {}\ns.cursor = '0'\nrepeat\n  local r = redis.call('SCAN', s.cursor, 'COUNT', 100)\n  s.cursor = r[1]\n  if #r[2] > 0 then redis.call('UNLINK', unpack(r[2])) end\nuntil s.cursor == 0\nreturn KEYS[1] .. ARGV[1]";
        assert_eq!(errors(source).len(), 1, "{:?}", errors(source));
        let source = "local s = {}\ns.cursor = '0'\nrepeat\n  local r = redis.call('SCAN', s.cursor, 'COUNT', 100)\n  s.cursor = r[1]\nuntil s.cursor == '0'\nreturn KEYS[1] .. ARGV[1]";
        assert!(errors(source).is_empty(), "{:?}", errors(source));
    }

    #[test]
    fn a_cursor_advanced_only_inside_the_loop_over_the_page_is_reported() {
        for source in [
            // The page's loop, through a local holding the reply's cursor.
            "local cursor = '0'\nlocal hit = false\nrepeat\n  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1])\n  local next_cursor = page[1]\n  for _, k in ipairs(page[2]) do\n    cursor = next_cursor\n    if k == KEYS[1] then hit = true end\n  end\nuntil hit or cursor == '0'\nreturn hit",
            // A while loop, a numeric inner loop, in a branch.
            "local c = '0'\nlocal n = 0\nwhile true do\n  local r = redis.call('SSCAN', KEYS[1], c)\n  for i = 1, #r[2] do\n    if ARGV[1] == 'x' then c = r[1] end\n    n = n + 1\n  end\n  if c == '0' then break end\nend\nreturn n",
        ] {
            let found = errors(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].contains("advances only inside an inner loop"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn a_cursor_advanced_on_every_round_passes() {
        for source in [
            // Assigned after the loop over the page.
            "local cursor = '0'\nrepeat\n  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1])\n  for _, k in ipairs(page[2]) do redis.call('UNLINK', k) end\n  cursor = page[1]\nuntil cursor == '0'\nreturn KEYS[1]",
            // Assigned in both branches of an `if`, outside the inner loop.
            "local c = '0'\nlocal done = false\nrepeat\n  local r = redis.call('HSCAN', KEYS[1], c)\n  for _, v in ipairs(r[2]) do redis.call('SET', KEYS[2], v) end\n  if r[1] == '0' then done = true else c = r[1] end\nuntil done\nreturn ARGV[1]",
            // An inner loop that also assigns, and the round that always does.
            "local c = '0'\nrepeat\n  local r = redis.call('SCAN', c)\n  c = r[1]\n  for _, k in ipairs(r[2]) do if k == ARGV[1] then c = '0' end end\nuntil c == '0'\nreturn KEYS[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn cursors_compared_with_strings_pass() {
        for source in [
            "local cursor = '0'\nrepeat\n  local r = redis.call('SCAN', cursor)\n  cursor = r[1]\nuntil cursor == '0'\nreturn KEYS[1] .. ARGV[1]",
            "if tonumber(redis.call('SSCAN', KEYS[1], 0)[1]) == 0 then return ARGV[1] end return 0",
            "if #redis.call('SSCAN', KEYS[1], 0)[2] == 0 then return ARGV[1] end return 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
