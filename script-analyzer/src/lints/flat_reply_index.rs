//! `flat_reply_index`: a flat reply indexed by a field name.
//!
//! Under RESP2, HGETALL, CONFIG GET, `ZRANGE ... WITHSCORES` and the other
//! map or pair replies reach Lua as a flat array `{k1, v1, k2, v2, ...}`:
//! `redis.call('HGETALL', k).name` is always nil. Walk the pairs, or ask
//! for the field (HGET, HMGET).
//!
//! Under RESP3 (after `redis.setresp(3)`), a map, set, double, big number or
//! verbatim string reply is a table with one field (`map`, `set`, `double`,
//! `big_number`, `verbatim_string`): any other name is always nil as well,
//! and code written for flat arrays reads nothing: `r[i]`, `#r` (0),
//! `ipairs(r)` (no element), through locals, fields, loops and branches.
//!
//! A loop over every element of a flat reply (`for _, v in ipairs(r)`, or
//! `for i = 1, #r do ... r[i]`) gets fields and values (members and
//! scores) alternately: using each as a number (`total = total + v`,
//! `v > max`) takes the fields too. Fires when the loop's index is not
//! read otherwise (a loop that reads it may keep only the even positions).

use super::{Context, RedisCall};
use crate::facts::UseKind;
use crate::facts::unparenthesized;
use crate::facts::{Inferred, Key, Ty, index_key};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{
    BinOp, Call, Expression, FunctionArgs, FunctionCall, GenericFor, Index, NumericFor, Prefix,
    Suffix, UnOp, VarExpression,
};
use full_moon::node::Node;
use full_moon::tokenizer::TokenReference;
use full_moon::visitors::Visitor;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut finder = Finder {
        cx,
        found: Vec::new(),
    };
    cx.visit(&mut finder);
    report.diagnostics.extend(finder.found);
}

struct Finder<'c, 'a> {
    cx: &'c Context<'a>,
    found: Vec<Diagnostic>,
}

/// The one field of a RESP3 reply table `value` surely is.
fn wrapper_field(value: &Inferred) -> Option<&'static str> {
    value.reply()?;
    let table = value.ty.minus(Ty::FALSY.union(Ty::ERROR));
    [
        (Ty::MAP, "map"),
        (Ty::SET, "set"),
        (Ty::DOUBLE, "double"),
        (Ty::BIG_NUMBER, "big_number"),
        (Ty::VERBATIM, "verbatim_string"),
    ]
    .into_iter()
    .find(|(ty, _)| table == *ty)
    .map(|(_, field)| field)
}

fn flat(value: &Inferred) -> bool {
    value.reply().is_some()
        && value.ty.intersects(Ty::PAIRS)
        && value.ty.within(Ty::PAIRS.union(Ty::FALSE).union(Ty::ERROR))
}

impl Finder<'_, '_> {
    fn chain<'s>(&mut self, prefix: &Prefix, suffixes: impl Iterator<Item = &'s Suffix>) {
        let suffixes: Vec<&Suffix> = suffixes.collect();
        if !suffixes.iter().any(|s| matches!(s, Suffix::Index(_))) {
            return;
        }
        let steps = self.cx.types.chain(prefix, suffixes.iter().copied());
        for (suffix, before) in suffixes.iter().zip(&steps) {
            let Suffix::Index(index) = suffix else {
                continue;
            };
            let name = match index_key(index) {
                Some(Key::Name(name)) => name,
                Some(Key::Number(_)) => {
                    self.positional(before, index, "indexed by a position");
                    continue;
                }
                None => {
                    if let Index::Brackets { expression, .. } = index
                        && self.cx.types.of(expression).ty.within(Ty::NUMBER)
                    {
                        self.positional(before, index, "indexed by a position");
                    }
                    continue;
                }
            };
            // `r.err` is how a `redis.pcall` result is checked.
            if name == "err" && before.ty.intersects(Ty::ERROR) {
                continue;
            }
            let Some((command, shape, _)) = before.reply() else {
                continue;
            };
            if let Some(field) = wrapper_field(before) {
                if name != field {
                    self.found.push(
                        Diagnostic::error(
                            Lint::FlatReplyIndex,
                            self.cx.span_of(index),
                            format!("{command} returns {shape} under RESP3; indexed by the name `{name}`, it is always nil"),
                        )
                        .with_label(format!("the reply's only field is `{field}`"))
                        .with_help(format!("read it through `.{field}`")),
                    );
                }
                continue;
            }
            if !flat(before) {
                continue;
            }
            self.found.push(
                Diagnostic::error(
                    Lint::FlatReplyIndex,
                    self.cx.span_of(index),
                    format!("{command} returns {shape}; indexed by the name `{name}`, it is always nil"),
                )
                .with_label("a flat reply has only the indices 1, 2, 3...")
                .with_help(
                    "walk the pairs (`for i = 1, #reply, 2 do local field, value = reply[i], reply[i + 1] ... end`), or ask for the field (HGET, HMGET)",
                ),
            );
        }
    }
}

impl Finder<'_, '_> {
    /// A RESP3 reply table read as a flat array: by position, by length,
    /// with `ipairs`.
    fn positional(&mut self, value: &Inferred, at: &impl Node, how: &str) {
        let Some(field) = wrapper_field(value) else {
            return;
        };
        let Some((command, shape, _)) = value.reply() else {
            return;
        };
        self.found.push(
            Diagnostic::error(
                Lint::FlatReplyIndex,
                self.cx.span_of(at),
                format!("{command} returns {shape} under RESP3, not a flat array; {how}, it is always empty"),
            )
            .with_label(format!("the elements are in `.{field}`"))
            .with_help(format!("read them through `.{field}` (`for k, v in pairs(r.{field}) do`)")),
        );
    }
}

impl Visitor for Finder<'_, '_> {
    fn visit_function_call(&mut self, call: &FunctionCall) {
        self.chain(call.prefix(), call.suffixes());
        // `ipairs(r)`.
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        if let (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))]) =
            (call.prefix(), suffixes.as_slice())
            && name.token().to_string() == "ipairs"
            && self.cx.model.is_global(name)
            && let FunctionArgs::Parentheses { arguments, .. } = &**args
            && let Some(table) = arguments.iter().next()
        {
            let value = self.cx.types.of(table);
            self.positional(&value, call, "walked with `ipairs`");
        }
    }

    fn visit_generic_for(&mut self, node: &GenericFor) {
        let exprs: Vec<&Expression> = node.expressions().iter().collect();
        let [Expression::FunctionCall(call)] = exprs.as_slice() else {
            return;
        };
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let (Prefix::Name(function), [Suffix::Call(Call::AnonymousCall(args))]) =
            (call.prefix(), suffixes.as_slice())
        else {
            return;
        };
        if !matches!(function.token().to_string().as_str(), "ipairs" | "pairs")
            || !self.cx.model.is_global(function)
        {
            return;
        }
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return;
        };
        let Some(table) = arguments.iter().next() else {
            return;
        };
        let reply = self.cx.types.of(table);
        let Some((command, _, false)) = reply.reply() else {
            return;
        };
        if !reply.ty.minus(Ty::FALSY).within(Ty::PAIRS) {
            return;
        }
        let names: Vec<&TokenReference> = node.names().iter().collect();
        let [index, value, ..] = names.as_slice() else {
            return;
        };
        let index_read = self
            .cx
            .types
            .local(index)
            .is_some_and(|i| !self.cx.types.uses(i).is_empty());
        let Some(value) = self.cx.types.local(value) else {
            return;
        };
        if index_read {
            return;
        }
        let Some(used) = self
            .cx
            .types
            .uses(value)
            .iter()
            .find(|u| matches!(u.kind, UseKind::Arithmetic | UseKind::Ordering))
        else {
            return;
        };
        self.found.push(
            Diagnostic::error(
                Lint::FlatReplyIndex,
                used.span,
                format!(
                    "the loop goes over every element of the {command} reply, a flat table of pairs (`{{k1, v1, k2, v2, ...}}`): used as a number here, it is each field (or member) as well as each value"
                ),
            )
            .with_label("a field, then a value, then a field...")
            .with_help("walk the pairs: `for i = 1, #r, 2 do local field, value = r[i], r[i + 1] ... end`"),
        );
    }

    fn visit_numeric_for(&mut self, node: &NumericFor) {
        // `for i = 1, #r do ... r[i] ... end`, one by one.
        if node
            .step()
            .is_some_and(|s| !matches!(unparenthesized(s), Expression::Number(n) if crate::facts::number(n) == Some(1.0)))
        {
            return;
        }
        let Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            expression,
        } = unparenthesized(node.end())
        else {
            return;
        };
        let Expression::Var(full_moon::ast::Var::Name(table)) = unparenthesized(expression) else {
            return;
        };
        let reply = self.cx.types.of(expression);
        let Some((command, _, false)) = reply.reply() else {
            return;
        };
        if !reply.ty.minus(Ty::FALSY).within(Ty::PAIRS) {
            return;
        }
        let (Some(table), Some(index)) = (
            self.cx.types.local(table),
            self.cx.types.local(node.index_variable()),
        ) else {
            return;
        };
        let mut reads = ElementReads {
            cx: self.cx,
            table,
            index,
            count: 0,
            as_number: None,
        };
        full_moon::visitors::Visit::visit(node.block(), &mut reads);
        // The index is read only to pick each element: no even positions.
        if reads.count != self.cx.types.uses(index).len() {
            return;
        }
        let Some(span) = reads.as_number else {
            return;
        };
        self.found.push(
            Diagnostic::error(
                Lint::FlatReplyIndex,
                span,
                format!(
                    "the loop goes over every element of the {command} reply, a flat table of pairs (`{{k1, v1, k2, v2, ...}}`): used as a number here, it is each field (or member) as well as each value"
                ),
            )
            .with_label("a field, then a value, then a field...")
            .with_help("walk the pairs: `for i = 1, #r, 2 do local field, value = r[i], r[i + 1] ... end`"),
        );
    }

    fn visit_expression(&mut self, expr: &Expression) {
        if let Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            expression,
        } = expr
        {
            let value = self.cx.types.of(expression);
            self.positional(&value, expr, "its length `#` is 0");
        }
    }

    fn visit_var_expression(&mut self, var: &VarExpression) {
        self.chain(var.prefix(), var.suffixes());
    }
}

/// The reads `t[i]` of a loop's body, and the first used as a number.
struct ElementReads<'c, 'a> {
    cx: &'c Context<'a>,
    table: usize,
    index: usize,
    count: usize,
    as_number: Option<crate::Span>,
}

impl ElementReads<'_, '_> {
    /// Whether `expr` is `t[i]`.
    fn is_element(&self, expr: &Expression) -> bool {
        let Expression::Var(full_moon::ast::Var::Expression(var)) = unparenthesized(expr) else {
            return false;
        };
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        matches!(
            (var.prefix(), suffixes.as_slice()),
            (Prefix::Name(t), [Suffix::Index(Index::Brackets { expression, .. })])
                if self.cx.types.local(t) == Some(self.table)
                    && matches!(unparenthesized(expression), Expression::Var(full_moon::ast::Var::Name(i))
                        if self.cx.types.local(i) == Some(self.index))
        )
    }
}

impl Visitor for ElementReads<'_, '_> {
    fn visit_var_expression(&mut self, var: &VarExpression) {
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        if let (Prefix::Name(t), [Suffix::Index(Index::Brackets { expression, .. })]) =
            (var.prefix(), suffixes.as_slice())
            && self.cx.types.local(t) == Some(self.table)
            && matches!(unparenthesized(expression), Expression::Var(full_moon::ast::Var::Name(i))
                if self.cx.types.local(i) == Some(self.index))
        {
            self.count += 1;
        }
    }

    fn visit_expression(&mut self, expr: &Expression) {
        let Expression::BinaryOperator { lhs, binop, rhs } = expr else {
            return;
        };
        if matches!(
            binop,
            BinOp::TwoDots(_)
                | BinOp::And(_)
                | BinOp::Or(_)
                | BinOp::TwoEqual(_)
                | BinOp::TildeEqual(_)
        ) {
            return;
        }
        for side in [lhs, rhs] {
            if self.as_number.is_none() && self.is_element(side) {
                self.as_number = Some(self.cx.span_of(&**side));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{marked, messages};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::FlatReplyIndex, source, 1, 0)
    }

    #[test]
    fn every_element_of_a_flat_reply_read_by_position_in_a_loop() {
        for source in [
            "local hits = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf', 'WITHSCORES')\nlocal sum = 0\nfor i = 1, #hits do sum = sum + hits[i] end\nreturn sum",
            "local h = redis.call('HGETALL', KEYS[1])\nlocal best = 0\nfor i = 1, #h do if h[i] > best then best = h[i] end end\nreturn best",
        ] {
            let found = errors(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("every element of the"), "{found:?}");
        }
        for source in [
            // By pairs, or only the scores.
            "local hits = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nlocal sum = 0\nfor i = 2, #hits, 2 do sum = sum + hits[i] end\nreturn sum",
            "local hits = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nlocal sum = 0\nfor i = 1, #hits do if i % 2 == 0 then sum = sum + hits[i] end end\nreturn sum",
            // As text.
            "local h = redis.call('HGETALL', KEYS[1])\nlocal s = ''\nfor i = 1, #h do s = s .. h[i] end\nreturn s",
            // A plain array.
            "local r = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal sum = 0\nfor i = 1, #r do sum = sum + r[i] end\nreturn sum",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn every_element_of_a_flat_reply_used_as_a_number() {
        for source in [
            // WITHSCORES through a local, summed.
            "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nlocal total = 0\nfor _, v in ipairs(r) do total = total + v end\nreturn total",
            // HGETALL, compared in a branch, with `pairs`.
            "local best = 0\nfor k, v in pairs(redis.call('HGETALL', KEYS[1])) do\n  if ARGV then if v > best then best = v end end\nend\nreturn best",
        ] {
            let found = errors(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("every element of the"), "{found:?}");
        }
    }

    #[test]
    fn loops_over_pairs_that_read_the_index_or_not_as_numbers_pass() {
        for source in [
            // The index picks the scores.
            "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nlocal total = 0\nfor i, v in ipairs(r) do if i % 2 == 0 then total = total + v end end\nreturn total",
            // Every element used as text.
            "local out = {}\nfor _, v in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = v .. '!' end\nreturn out",
            // A plain array reply.
            "local total = 0\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do total = total + v end\nreturn total",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn flat_replies_indexed_by_name() {
        assert_eq!(
            errors("return redis.call('HGETALL', KEYS[1]).owner"),
            [
                "HGETALL returns a flat table of pairs (`{k1, v1, k2, v2, ...}`); indexed by the name `owner`, it is always nil"
            ]
        );
        assert_eq!(
            errors("local h = redis.call('HGETALL', KEYS[1])\nif h['state'] == 'done' then return 1 end return 0").len(),
            1
        );
        assert_eq!(
            errors("local c = redis.call('CONFIG', 'GET', 'maxmemory')\nreturn c.maxmemory"),
            [
                "CONFIG GET returns a flat table of pairs (`{k1, v1, k2, v2, ...}`); indexed by the name `maxmemory`, it is always nil"
            ]
        );
        assert_eq!(
            errors("local z = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES') return z.a").len(),
            1
        );
        assert_eq!(
            errors("local r = redis.pcall('HGETALL', KEYS[1]) if r.err then return 0 end return r.owner").len(),
            1
        );
    }

    #[test]
    fn carets_cover_the_closing_bracket() {
        assert_eq!(
            marked(
                Lint::FlatReplyIndex,
                "local h = redis.call('HGETALL', KEYS[1])\nreturn h['owner']",
                1,
                0
            ),
            ["['owner']"]
        );
    }

    #[test]
    fn resp3_reply_tables_indexed_by_another_name() {
        assert_eq!(
            errors("redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1]).owner"),
            [
                "HGETALL returns a map table (`{map = {...}}`) under RESP3; indexed by the name `owner`, it is always nil"
            ]
        );
        assert_eq!(
            errors("redis.setresp(3)\nlocal s = redis.call('ZSCORE', KEYS[1], 'm')\nreturn s and s.score").len(),
            1
        );
        for source in [
            "redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1]).map.owner",
            "redis.setresp(3)\nlocal s = redis.call('ZSCORE', KEYS[1], 'm') return s and tostring(s.double)",
            "redis.setresp(3)\nlocal r = redis.pcall('SMEMBERS', KEYS[1]) if r.err then return 0 end return #r.set",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn positions_and_other_tables_pass() {
        for source in [
            "local h = redis.call('HGETALL', KEYS[1]) return h[1]",
            "local h = redis.call('HGETALL', KEYS[1]) local t = {} for i = 1, #h, 2 do t[h[i]] = h[i + 1] end return t.owner",
            "local h = redis.call('HGETALL', KEYS[1]) h = {owner = 1} return h.owner",
            "return redis.call('ZRANGE', KEYS[1], 0, -1).n",
            "return cjson.decode(redis.call('GET', KEYS[1])).owner",
            "return redis.call('TYPE', KEYS[1]).ok",
            "local r = redis.pcall('HGETALL', KEYS[1]) if r.err then return 0 end return r[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn resp3_maps_read_as_flat_arrays() {
        for source in [
            // By length, through a local, in a loop.
            "redis.setresp(3)\nlocal r = redis.call('HGETALL', KEYS[1])\nlocal n = 0\nfor i = 2, #r, 2 do n = n + r[i] end\nreturn n",
            // With ipairs, through a field.
            "redis.setresp(3)\nlocal o = {}\no.r = redis.call('HGETALL', KEYS[1])\nfor _, v in ipairs(o.r) do return v end",
            // By position, past a branch.
            "redis.setresp(3)\nlocal r = redis.call('SMEMBERS', KEYS[1])\nif not r then return 0 end\nreturn r[1]",
        ] {
            assert!(!errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn resp3_maps_read_through_their_field_pass() {
        for source in [
            "redis.setresp(3)\nlocal r = redis.call('HGETALL', KEYS[1])\nlocal n = 0\nfor k, v in pairs(r.map) do n = n + v end\nreturn n",
            "redis.setresp(3)\nlocal r = redis.call('LRANGE', KEYS[1], 0, -1)\nfor i = 1, #r do return r[i] end",
            "local r = redis.call('HGETALL', KEYS[1])\nlocal n = 0\nfor i = 2, #r, 2 do n = n + r[i] end\nreturn n",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn resp3_pairs_read_as_flat_arrays_are_tables() {
        // Under RESP3 each WITHSCORES element is a `{member, score}` pair:
        // read flat, a member is a table.
        let source = "redis.setresp(3)\nlocal r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nfor i = 1, #r, 2 do redis.call('SADD', KEYS[1], r[i]) end";
        let found = crate::lints::test_util::lint(Lint::ArgumentType, source, 1, 0);
        assert_eq!(found.len(), 1, "{found:?}");
        let fine = "redis.setresp(3)\nlocal r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nfor _, pair in ipairs(r) do redis.call('SADD', KEYS[1], pair[1]) end";
        assert!(crate::lints::test_util::lint(Lint::ArgumentType, fine, 1, 0).is_empty());
    }
}
