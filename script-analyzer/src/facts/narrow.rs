//! Narrowing: what a condition being true (or false) says about the
//! locals and followed fields it tests.
//!
//! Only what the condition proves is removed: `if v then` removes `false`
//! and nil from `v`, `v == nil` keeps only nil, `type(v) == 'string'` keeps
//! only strings, `n > 0` raises the least value of `n`. A test never adds
//! a type: a guard does not make a string a number. A condition it does
//! not understand leaves the state as it is.

use super::state::State;
use super::value::{Inferred, Range, Ty};
use super::{FieldKey, index_key, number, unparenthesized};
use full_moon::ast::{BinOp, Call, Expression, FunctionArgs, Prefix, Suffix, UnOp, Var};
use full_moon::tokenizer::{TokenReference, TokenType};

/// What narrowing asks of the walk: which locals and fields it follows,
/// and what they hold.
pub(super) trait Places {
    /// The local variable `token` names, if it is one.
    fn resolve(&self, token: &TokenReference) -> Option<usize>;
    /// Whether the walk follows the local `var` here.
    fn follows(&self, var: usize) -> bool;
    /// Whether the walk follows the fields of the local table `var` here.
    fn follows_fields(&self, var: usize) -> bool;
    /// The value of `var` in `state`.
    fn local(&self, state: &State, var: usize) -> Inferred;
    /// The value of `var.key` in `state`, if known.
    fn field(&self, state: &State, var: usize, key: &FieldKey) -> Option<Inferred>;
    /// The value of `var.key` as the value of `var` says (an element of a
    /// reply), for a field the state does not hold.
    fn element(&self, state: &State, var: usize, key: &FieldKey) -> Option<Inferred>;
}

/// A value the state holds.
#[derive(Clone)]
enum Place {
    Var(usize),
    Field(usize, FieldKey),
}

/// `state`, knowing that `cond` is `truth`.
pub(super) fn narrow(flow: &dyn Places, cond: &Expression, state: &State, truth: bool) -> State {
    let (when_true, when_false) = both(flow, cond, state);
    if truth { when_true } else { when_false }
}

/// `state` knowing that `cond` is true, and knowing that it is false: in
/// one pass, so that a chain of `and` / `or` costs its length.
fn both(flow: &dyn Places, cond: &Expression, state: &State) -> (State, State) {
    if !state.live {
        return (state.clone(), state.clone());
    }
    match cond {
        Expression::Parentheses { expression, .. } => both(flow, expression, state),
        Expression::UnaryOperator {
            unop: UnOp::Not(_),
            expression,
        } => {
            let (when_true, when_false) = both(flow, expression, state);
            (when_false, when_true)
        }
        Expression::BinaryOperator {
            lhs,
            binop: BinOp::And(_),
            rhs,
        } => {
            let (left_true, left_false) = both(flow, lhs, state);
            let (right_true, right_false) = both(flow, rhs, &left_true);
            (right_true, left_false.join(right_false))
        }
        Expression::BinaryOperator {
            lhs,
            binop: BinOp::Or(_),
            rhs,
        } => {
            let (left_true, left_false) = both(flow, lhs, state);
            let (right_true, right_false) = both(flow, rhs, &left_false);
            (left_true.join(right_true), right_false)
        }
        _ => (
            leaf(flow, cond, state, true),
            leaf(flow, cond, state, false),
        ),
    }
}

/// `state`, knowing that `cond` (not `and`, `or`, `not`) is `truth`.
fn leaf(flow: &dyn Places, cond: &Expression, state: &State, truth: bool) -> State {
    match cond {
        // `while true do`: never false.
        Expression::Symbol(token) => {
            let value = match token.token().to_string().as_str() {
                "true" => true,
                "false" | "nil" => false,
                _ => return state.clone(),
            };
            if value == truth {
                state.clone()
            } else {
                State::default()
            }
        }
        Expression::BinaryOperator { lhs, binop, rhs } => match binop {
            BinOp::TwoEqual(_) => equality(flow, lhs, rhs, state, truth),
            BinOp::TildeEqual(_) => equality(flow, lhs, rhs, state, !truth),
            BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_) => ordering(flow, lhs, binop, rhs, state, truth),
            _ => state.clone(),
        },
        _ => {
            // `r.err` false: `r` is not the error table of `redis.pcall`.
            if !truth
                && let Expression::Var(Var::Expression(var)) = unparenthesized(cond)
                && let Prefix::Name(name) = var.prefix()
                && let Some(local) = flow.resolve(name)
                && flow.follows(local)
                && let [Suffix::Index(index)] = var.suffixes().collect::<Vec<_>>().as_slice()
                && index_key(index) == Some(super::Key::Name("err".to_string()))
            {
                let state = update(flow, state, &Place::Var(local), |ty| ty.minus(Ty::ERROR));
                return match place(flow, cond) {
                    Some(field) => update(flow, &state, &field, |ty| ty.intersection(Ty::FALSY)),
                    None => state,
                };
            }
            if let Some(place) = place(flow, cond) {
                return update(flow, state, &place, |ty| {
                    if truth {
                        ty.minus(Ty::FALSY)
                    } else {
                        ty.intersection(Ty::FALSY)
                    }
                });
            }
            // `tonumber(v)` true: `v` is a number or a numeric string.
            if truth
                && let Some(arg) = global_call_arg(flow, cond, "tonumber")
                && let Some(place) = place(flow, arg)
            {
                return update(flow, state, &place, |ty| ty.minus(Ty::FALSY));
            }
            state.clone()
        }
    }
}

/// `lhs == rhs` is `equal`.
fn equality(
    flow: &dyn Places,
    lhs: &Expression,
    rhs: &Expression,
    state: &State,
    equal: bool,
) -> State {
    // `type(v) == 'string'`.
    for (call, other) in [(lhs, rhs), (rhs, lhs)] {
        if let Some(arg) = global_call_arg(flow, call, "type")
            && let Some(place) = place(flow, arg)
            && let Some(name) = string_literal(other)
        {
            let Some(types) = type_named(&name) else {
                return state.clone();
            };
            return update(flow, state, &place, |ty| {
                if equal {
                    ty.intersection(types)
                } else {
                    ty.minus(types)
                }
            });
        }
    }
    for (side, other) in [(lhs, rhs), (rhs, lhs)] {
        let Some(place) = place(flow, side) else {
            continue;
        };
        let literal = match unparenthesized(other) {
            Expression::Symbol(token) => match token.token().to_string().as_str() {
                "nil" => Some((Ty::NIL, true)),
                "false" => Some((Ty::FALSE, true)),
                "true" => Some((Ty::TRUE, true)),
                _ => None,
            },
            // Equal to a string: a string; unequal: anything still.
            Expression::String(_) => Some((Ty::STRING, false)),
            Expression::Number(_) => Some((Ty::NUMBER, false)),
            _ => None,
        };
        let Some((types, exact)) = literal else {
            continue;
        };
        // An integer equal (or not) to an integer literal: its range.
        if let Expression::Number(token) = unparenthesized(other)
            && let Some(n) = number(token)
            && let Some(value) = current(flow, state, &place)
            && value.ty.within(Ty::INT)
            && n.fract() == 0.0
        {
            let range = value.range;
            let (lo, hi) = if equal {
                (n, n)
            } else if range.lo == n {
                (n + 1.0, range.hi)
            } else if range.hi == n {
                (range.lo, n - 1.0)
            } else {
                (range.lo, range.hi)
            };
            if lo < range.lo || hi > range.hi || lo > hi {
                // Outside what it may be: the branch is never taken.
                if lo > hi || (equal && (n < range.lo || n > range.hi)) {
                    return State::default();
                }
            }
            let mut state = state.clone();
            let range = Range::new(lo.max(range.lo), hi.min(range.hi));
            set(&mut state, &place, Inferred { range, ..value });
            return state;
        }
        return update(flow, state, &place, |ty| {
            if equal {
                ty.intersection(types)
            } else if exact {
                ty.minus(types)
            } else {
                ty
            }
        });
    }
    state.clone()
}

/// `lhs op rhs` is `truth`: both sides were numbers or strings (an
/// ordering raises otherwise), and a number compared with a literal is on
/// the literal's side of it.
fn ordering(
    flow: &dyn Places,
    lhs: &Expression,
    binop: &BinOp,
    rhs: &Expression,
    state: &State,
    truth: bool,
) -> State {
    let mut state = state.clone();
    for side in [lhs, rhs] {
        if let Some(place) = place(flow, side) {
            state = update(flow, &state, &place, |ty| ty.minus(Ty::FALSY));
        }
    }
    let literal = |e: &Expression| match unparenthesized(e) {
        Expression::Number(token) => number(token),
        _ => None,
    };
    // The relation that holds, written `place R n`: (above, strict).
    let relation = |binop: &BinOp| match binop {
        BinOp::GreaterThan(_) => (true, true),
        BinOp::GreaterThanEqual(_) => (true, false),
        BinOp::LessThan(_) => (false, true),
        _ => (false, false),
    };
    let (place_expr, n, (above, strict)) = match (literal(lhs), literal(rhs)) {
        (None, Some(n)) => (lhs, n, relation(binop)),
        (Some(n), None) => {
            let (above, strict) = relation(binop);
            (rhs, n, (!above, strict))
        }
        _ => return state,
    };
    // False: the opposite relation.
    let (above, strict) = if truth {
        (above, strict)
    } else {
        (!above, !strict)
    };
    let Some(place) = place(flow, place_expr) else {
        return state;
    };
    let Some(value) = current(flow, &state, &place) else {
        return state;
    };
    // Only numbers: a string compared with a number raises.
    if !value.ty.within(Ty::NUMBER) {
        return state;
    }
    // Past a strict bound by the least step a number can take there.
    let step = if strict {
        n.abs().max(1.0) * f64::EPSILON
    } else {
        0.0
    };
    let (lo, hi) = if above {
        (value.range.lo.max(n + step), value.range.hi)
    } else {
        (value.range.lo, value.range.hi.min(n - step))
    };
    if lo > hi {
        // No number is on both sides: the branch is never taken.
        return State::default();
    }
    let range = Range::new(lo, hi);
    set(&mut state, &place, Inferred { range, ..value });
    state
}

/// The place `expr` names: a followed local, or a followed field of one.
fn place(flow: &dyn Places, expr: &Expression) -> Option<Place> {
    match unparenthesized(expr) {
        Expression::Var(Var::Name(token)) => {
            let var = flow.resolve(token)?;
            flow.follows(var).then_some(Place::Var(var))
        }
        Expression::Var(Var::Expression(var)) => {
            let Prefix::Name(name) = var.prefix() else {
                return None;
            };
            let table = flow.resolve(name)?;
            let suffixes: Vec<&Suffix> = var.suffixes().collect();
            let [Suffix::Index(index)] = suffixes.as_slice() else {
                return None;
            };
            let key = index_key(index)?;
            let key = FieldKey::of(&key)?;
            flow.follows_fields(table)
                .then_some(Place::Field(table, key))
        }
        // `#t`: the length of a followed table; `#t.name`, of the list
        // held in its field.
        Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            expression,
        } => match unparenthesized(expression) {
            Expression::Var(Var::Name(token)) => {
                let table = flow.resolve(token)?;
                flow.follows_fields(table)
                    .then_some(Place::Field(table, FieldKey::Len))
            }
            Expression::Var(Var::Expression(var)) => {
                let Prefix::Name(name) = var.prefix() else {
                    return None;
                };
                let suffixes: Vec<&Suffix> = var.suffixes().collect();
                let [Suffix::Index(index)] = suffixes.as_slice() else {
                    return None;
                };
                let Some(super::Key::Name(field)) = index_key(index) else {
                    return None;
                };
                let table = flow.resolve(name)?;
                flow.follows_fields(table)
                    .then_some(Place::Field(table, FieldKey::LenOf(field)))
            }
            _ => None,
        },
        _ => None,
    }
}

fn current(flow: &dyn Places, state: &State, place: &Place) -> Option<Inferred> {
    match place {
        Place::Var(var) => Some(flow.local(state, *var)),
        Place::Field(table, key) => flow
            .field(state, *table, key)
            .or_else(|| flow.element(state, *table, key)),
    }
}

fn set(state: &mut State, place: &Place, value: Inferred) {
    match place {
        Place::Var(var) => {
            state.vars.insert(*var, value);
        }
        Place::Field(table, key) => {
            state.fields.insert((*table, key.clone()), value);
        }
    }
}

/// `state` with the types of `place` passed through `f`.
fn update(flow: &dyn Places, state: &State, place: &Place, f: impl Fn(Ty) -> Ty) -> State {
    let mut state = state.clone();
    let value = current(flow, &state, place).unwrap_or_else(Inferred::any);
    let ty = f(value.ty);
    set(&mut state, place, Inferred { ty, ..value });
    state
}

/// The one argument of a call of the global function `name`.
fn global_call_arg<'e>(
    flow: &dyn Places,
    expr: &'e Expression,
    name: &str,
) -> Option<&'e Expression> {
    let Expression::FunctionCall(call) = unparenthesized(expr) else {
        return None;
    };
    let Prefix::Name(function) = call.prefix() else {
        return None;
    };
    if function.token().to_string() != name || flow.resolve(function).is_some() {
        return None;
    }
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let [Suffix::Call(Call::AnonymousCall(args))] = suffixes.as_slice() else {
        return None;
    };
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return None;
    };
    let mut arguments = arguments.iter();
    let first = arguments.next()?;
    arguments.next().is_none().then_some(first)
}

fn string_literal(expr: &Expression) -> Option<String> {
    match unparenthesized(expr) {
        Expression::String(token) => match token.token_type() {
            TokenType::StringLiteral { literal, .. } => Some(literal.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// The types `type(v)` names.
fn type_named(name: &str) -> Option<Ty> {
    Some(match name {
        "nil" => Ty::NIL,
        "boolean" => Ty::BOOL,
        "number" => Ty::NUMBER,
        "string" => Ty::STRING,
        "function" => Ty::FUNCTION,
        "userdata" => Ty::OTHER,
        "table" => Ty::TABLES,
        _ => return None,
    })
}
