//! `scan_cursor`: a SCAN cursor compared with a number.
//!
//! SCAN, SSCAN, HSCAN and ZSCAN reply `{cursor, items}`, and the cursor is a
//! string: `until cursor == 0` is never true, so the loop never ends (and
//! `cursor > 0` raises). Compare with `'0'`.

use super::typed::each_comparison;
use super::{Context, RedisCall};
use crate::facts::{Origin, Ty};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
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
