//! The codes a script replies with: for each `return` of the main chunk,
//! the integer it returns (`return 1`, `return result` whose value is 0 or
//! 1), or the integer first element of the pair it returns (`return {1,
//! token}`), as far as the value facts tell. What a reply type that
//! declares its codes is checked against (see
//! [`ScriptInfo::reply_codes`](crate::ScriptInfo::reply_codes)).
//!
//! A call of a local function of the main chunk that returns its first
//! parameter unchanged (`local function finish(result) ... return result
//! end`) with a literal (`return finish(1)`) returns that literal.
//!
//! Invariants: codes are integers below 10^15 in magnitude, so that no
//! arithmetic on them overflows; a return whose code is not known exactly
//! (a computed value with no small integer range) is
//! [`CodedReply::Unknown`], never guessed; an error reply is
//! [`CodedReply::Error`], not a code.

use super::Context;
use super::chunk_returns::{main_chunk_return_statements, main_chunk_returns};
use crate::facts::{Ty, number, unparenthesized};
use full_moon::ast::{
    Call, Expression, Field, FunctionArgs, LastStmt, Prefix, Stmt, Suffix, UnOp, Var,
};

/// The widest range of integers a returned value may be in and still count
/// as a set of codes (a local set to one of a few literals).
const MAX_CODES: i64 = 16;

/// One `return` of the main chunk, as a reply code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnedCode {
    /// The line of the returned expression (1-based).
    pub line: usize,
    /// What it returns.
    pub reply: CodedReply,
}

/// What a `return` replies with, as a code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodedReply {
    /// An integer, one of `lo..=hi` (`return -1`: `lo == hi == -1`).
    Integer {
        /// The least code.
        lo: i64,
        /// The greatest code.
        hi: i64,
    },
    /// A table of `len` elements whose first element is an integer, one of
    /// `lo..=hi` (`return {0, ttl}`: `lo == hi == 0`, `len == 2`).
    Pair {
        /// The least code.
        lo: i64,
        /// The greatest code.
        hi: i64,
        /// The number of elements.
        len: usize,
    },
    /// An error reply (`redis.error_reply(...)`): not a code.
    Error,
    /// A value whose code the analyzer cannot tell, as written.
    Unknown(String),
}

/// The reply code of every `return` of the main chunk, in source order.
pub(crate) fn returned_codes(cx: &Context<'_>) -> Vec<ReturnedCode> {
    main_chunk_return_statements(cx.ast.nodes())
        .into_iter()
        .filter_map(|ret| {
            // Redis uses the first returned value only. The line is the
            // `return` keyword's: a node's own position is worked out from
            // its children, which takes long on deeply nested expressions.
            let first = ret.returns().iter().next()?;
            Some(ReturnedCode {
                line: ret.token().token().start_position().line(),
                reply: coded(cx, first),
            })
        })
        .collect()
}

/// What `expr` replies with, as a code.
fn coded(cx: &Context<'_>, expr: &Expression) -> CodedReply {
    let expr = unparenthesized(expr);
    if let Expression::TableConstructor(table) = expr {
        let elements: Vec<&Expression> = table
            .fields()
            .iter()
            .filter_map(|f| match f {
                Field::NoKey(value) => Some(value),
                _ => None,
            })
            .collect();
        let keyed = elements.len() != table.fields().len();
        return match (elements.first(), keyed) {
            (Some(first), false) => match integers(cx, first) {
                Some((lo, hi)) => CodedReply::Pair {
                    lo,
                    hi,
                    len: elements.len(),
                },
                None => unknown(expr),
            },
            _ => unknown(expr),
        };
    }
    let value = cx.types.of(expr);
    if !value.ty.is_any() && value.ty.within(Ty::ERROR) {
        return CodedReply::Error;
    }
    match integers(cx, expr) {
        Some((lo, hi)) => CodedReply::Integer { lo, hi },
        None => unknown(expr),
    }
}

/// The integers `expr` may be, when they are few and it is surely one.
fn integers(cx: &Context<'_>, expr: &Expression) -> Option<(i64, i64)> {
    if let Some(n) = literal(expr).or_else(|| passed_through(cx, expr)) {
        return Some((n, n));
    }
    let value = cx.types.of(expr);
    if value.ty.is_any() || !value.ty.within(Ty::INT) {
        return None;
    }
    let (lo, hi) = (value.range.lo, value.range.hi);
    let whole = |n: f64| n.fract() == 0.0 && n.abs() < 1e15;
    #[allow(clippy::cast_precision_loss)]
    if !(whole(lo) && whole(hi)) || hi - lo >= MAX_CODES as f64 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    Some((lo as i64, hi as i64))
}

/// `f(n)`, for a literal `n` and a local function `f` of the main chunk
/// that returns its first parameter unchanged wherever it returns: `n`.
fn passed_through(cx: &Context<'_>, expr: &Expression) -> Option<i64> {
    let Expression::FunctionCall(call) = unparenthesized(expr) else {
        return None;
    };
    let Prefix::Name(name) = call.prefix() else {
        return None;
    };
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let [Suffix::Call(Call::AnonymousCall(args))] = suffixes[..] else {
        return None;
    };
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return None;
    };
    let [argument] = arguments.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let n = literal(argument)?;
    let name = name.token().to_string();
    let function = cx.ast.nodes().stmts().find_map(|stmt| match stmt {
        Stmt::LocalFunction(f) if f.name().token().to_string() == name => Some(f),
        _ => None,
    })?;
    let parameter = function.body().parameters().iter().next()?.to_string();
    let block = function.body().block();
    let returns = main_chunk_returns(block);
    let ends_in_return = matches!(block.last_stmt(), Some(LastStmt::Return(_)));
    let identity = ends_in_return
        && !returns.is_empty()
        && returns.iter().all(|r| {
            matches!(unparenthesized(r), Expression::Var(Var::Name(t)) if t.token().to_string() == parameter.trim())
        });
    identity.then_some(n)
}

/// An integer literal, negated or not (`3`, `-2`).
fn literal(expr: &Expression) -> Option<i64> {
    match unparenthesized(expr) {
        Expression::Number(token) => {
            let n = number(token)?;
            #[allow(clippy::cast_possible_truncation)]
            (n.fract() == 0.0 && n.abs() < 1e15).then_some(n as i64)
        }
        Expression::UnaryOperator {
            unop: UnOp::Minus(_),
            expression,
        } => literal(expression).map(|n| -n),
        _ => None,
    }
}

/// `expr` as written, for messages.
fn unknown(expr: &Expression) -> CodedReply {
    CodedReply::Unknown(expr.to_string().trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, analyze};

    fn codes(source: &str) -> Vec<(usize, CodedReply)> {
        analyze(source, &Options::default())
            .info
            .reply_codes
            .into_iter()
            .map(|c| (c.line, c.reply))
            .collect()
    }

    #[test]
    fn literal_codes_pairs_and_errors_are_read() {
        let source = "if ARGV[1] == 'x' then\n  return redis.error_reply('ERR no')\nend\nif ARGV[1] == 'y' then\n  return -2\nend\nif ARGV[1] == 'z' then\n  return {3, 0}\nend\nreturn {0, redis.call('pttl', KEYS[1])}\n";
        assert_eq!(
            codes(source),
            vec![
                (2, CodedReply::Error),
                (5, CodedReply::Integer { lo: -2, hi: -2 }),
                (
                    8,
                    CodedReply::Pair {
                        lo: 3,
                        hi: 3,
                        len: 2
                    }
                ),
                (
                    10,
                    CodedReply::Pair {
                        lo: 0,
                        hi: 0,
                        len: 2
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_local_set_to_a_few_literals_is_their_range() {
        let source = "local result\nif redis.call('exists', KEYS[1]) == 1 then\n  result = 0\nelse\n  result = 1\nend\nreturn result\n";
        assert_eq!(
            codes(source),
            vec![(7, CodedReply::Integer { lo: 0, hi: 1 })]
        );
    }

    #[test]
    fn a_local_function_that_returns_its_parameter_passes_a_literal_through() {
        let source = "local function finish(result)\n  redis.call('set', KEYS[1], result)\n  return result\nend\nif ARGV[1] == '1' then\n  return finish(0)\nend\nreturn finish(1)\n";
        assert_eq!(
            codes(source),
            vec![
                (6, CodedReply::Integer { lo: 0, hi: 0 }),
                (8, CodedReply::Integer { lo: 1, hi: 1 }),
            ]
        );
        // A function that returns something else is not followed.
        let source = "local function twice(n)\n  return n * 2\nend\nreturn twice(1)\n";
        assert!(matches!(codes(source)[..], [(4, CodedReply::Unknown(_))]));
    }

    #[test]
    fn a_value_the_facts_cannot_bound_is_unknown() {
        let source = "local earlier = redis.call('get', KEYS[1])\nreturn tonumber(earlier)\n";
        assert_eq!(
            codes(source),
            vec![(2, CodedReply::Unknown("tonumber(earlier)".to_owned()))]
        );
    }
}
