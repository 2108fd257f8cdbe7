//! Finding `redis.call` / `redis.pcall` sites.

use super::Context;
use crate::{Report, Span};

/// One argument of a `redis.call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallArg {
    /// A string literal (its value, unescaped) or number literal (its text).
    Literal(String, Span),
    /// `KEYS[n]` with a literal `n`.
    Key(u32, Span),
    /// Any other single expression.
    Expr(Span),
    /// A call or `...` in last position: expands to any number of values.
    Spread(Span),
}

/// A `redis.call(...)` or `redis.pcall(...)` site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisCall {
    /// `pcall` rather than `call`.
    pub pcall: bool,
    /// The span of the whole call.
    pub span: Span,
    /// The first argument, then the others.
    pub args: Vec<CallArg>,
}

/// All `redis.call` / `redis.pcall` sites of the script.
pub fn redis_calls(_cx: &Context<'_>) -> Vec<RedisCall> {
    Vec::new()
}

/// Fills `report.info.commands` and `report.info.writes`.
pub(crate) fn record_info(_cx: &Context<'_>, _calls: &[RedisCall], _report: &mut Report) {}
