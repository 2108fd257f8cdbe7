//! Calls in the flow walk: what a call made as a statement, or in an
//! assignment, does to what is known of the locals.

use crate::facts::eval::expr_key;
use crate::facts::narrow::narrow;
use crate::facts::state::State;
use crate::facts::value::{Inferred, Range};
use crate::facts::{FieldKey, Key, index_key, unparenthesized};
use full_moon::ast::{Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix, Var};

/// Statements the walk may visit before giving up.
use super::Flow;

impl Flow<'_, '_> {
    /// A call as a statement, and what it does to the state: `error`
    /// ends the path, `assert(v)` makes `v` true, `table.insert(t, v)`
    /// grows `t`.
    pub(super) fn call_statement(&self, call: &FunctionCall, state: State) -> State {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        self.eval_chain(call.prefix(), &suffixes, &state);
        self.effects(call, state, true)
    }

    /// What the values assigned do to the state: `table.remove(t)` in
    /// `local last = table.remove(t)` shrinks `t`.
    pub(super) fn assigned_effects(&self, exprs: &[&Expression], mut state: State) -> State {
        for expr in exprs {
            if let Expression::FunctionCall(call) = unparenthesized(expr) {
                state = self.effects(call, state, false);
            }
        }
        state
    }

    /// What a call does to the state once evaluated. `statement`: its
    /// value is not used (`error` and `assert` end or narrow the path).
    pub(super) fn effects(&self, call: &FunctionCall, mut state: State, statement: bool) -> State {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let Prefix::Name(name) = call.prefix() else {
            return state;
        };
        if self.types.local(name).is_some() {
            return state;
        }
        let mut path = name.token().to_string();
        let args = match suffixes.as_slice() {
            [Suffix::Call(Call::AnonymousCall(args))] => args,
            [
                Suffix::Index(index),
                Suffix::Call(Call::AnonymousCall(args)),
            ] => match index_key(index) {
                Some(Key::Name(member)) => {
                    path = format!("{path}.{member}");
                    args
                }
                _ => return state,
            },
            _ => return state,
        };
        let arguments: Vec<&Expression> = match &**args {
            FunctionArgs::Parentheses { arguments, .. } => arguments.iter().collect(),
            _ => Vec::new(),
        };
        match path.as_str() {
            "error" if statement => State::dead(),
            "assert" if statement => match arguments.first() {
                Some(cond) => narrow(self, cond, &state, true),
                None => State::dead(),
            },
            "table.insert" | "table.remove" | "table.sort" => {
                let table = arguments.first().and_then(|t| match unparenthesized(t) {
                    Expression::Var(Var::Name(token)) => self.types.local(token),
                    _ => None,
                });
                let Some(table) = table.filter(|t| self.follows_fields(*t)) else {
                    return state;
                };
                state
                    .fields
                    .retain(|(t, key), _| *t != table || !matches!(key, FieldKey::Index(_)));
                if path == "table.insert" {
                    // `table.insert(t, v)` or `table.insert(t, pos, v)`.
                    let value = arguments
                        .last()
                        .filter(|_| (2..=3).contains(&arguments.len()))
                        .and_then(|v| self.at.borrow().get(&expr_key(v)).cloned())
                        .unwrap_or_else(Inferred::any);
                    self.add_element(&mut state, table, &value);
                }
                let over = self.looped_over().filter(|_| path == "table.insert");
                if let Some(len) = state.fields.get_mut(&(table, FieldKey::Len)) {
                    if over.is_some() {
                        len.origin = over;
                    }
                    len.range = match path.as_str() {
                        "table.insert" => Range::new(len.range.lo + 1.0, len.range.hi + 1.0),
                        "table.remove" => Range::new((len.range.lo - 1.0).max(0.0), len.range.hi),
                        _ => len.range,
                    };
                }
                state
            }
            _ => state,
        }
    }
}
