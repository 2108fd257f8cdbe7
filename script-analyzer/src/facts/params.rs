//! What the parameters of the script's own functions receive: the values
//! of the arguments at every call, as a first flow walk recorded them
//! (narrowed where they are passed: `if v then f(v) end` passes no
//! `false`).
//!
//! Invariants: a function gets parameter values only when the local that
//! holds it (`local function f`, `local f = function`, assigned nothing
//! else) is used only to call it, with a parenthesized argument list, so
//! that every call is seen. An argument list that ends in a call or `...`
//! gives any number of values: the call's value (its first, or nil when it
//! gives none, as the engine values calls) to its own place, and unknown
//! values to the parameters after it; `...` unknown values from its place
//! on. A parameter no call passes is nil. A local handed over keeps its
//! types but not an origin that explains a `false` (a nil reply): the
//! caller is taken to know it is there, as lints take a local handed to
//! one of the script's functions. The values come from a walk in which
//! every parameter was unknown, so they include what a walk with these
//! values would pass: a second walk with them stays sound.

use super::Types;
use super::eval::{NodeKey, expr_key};
use super::summary::is_multi;
use super::value::{Inferred, Origin, Ty};
use full_moon::ast::{Ast, Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix, Var};
use full_moon::visitors::Visitor;
use std::collections::HashMap;

/// For each function body (its address) whose every call is seen, the
/// values of its named parameters, in order.
pub(super) fn of_calls(
    types: &Types<'_>,
    ast: &Ast,
    at: &HashMap<NodeKey, Inferred>,
) -> HashMap<usize, Vec<Inferred>> {
    if types.bodies.is_empty() {
        return HashMap::new();
    }
    let mut calls = Calls {
        types,
        at,
        found: HashMap::new(),
        counts: HashMap::new(),
    };
    calls.visit_ast(ast);
    let Calls { found, counts, .. } = calls;
    received(types, found, &counts)
}

/// The calls of functions held by locals in `stmt` (a statement of the
/// main chunk), as a walk that recorded `at` saw them: by local, the
/// argument values of each call and whether the list ends open; and how
/// many calls name each local.
pub(super) fn calls_in(
    types: &Types<'_>,
    stmt: &full_moon::ast::Stmt,
    at: &HashMap<NodeKey, Inferred>,
) -> (Found, HashMap<usize, usize>) {
    let mut calls = Calls {
        types,
        at,
        found: HashMap::new(),
        counts: HashMap::new(),
    };
    full_moon::visitors::Visit::visit(stmt, &mut calls);
    (calls.found, calls.counts)
}

/// By local: the argument values of each call, and whether the list ends
/// in a call or `...`.
pub(super) type Found = HashMap<usize, Vec<(Vec<Inferred>, bool)>>;

/// What the parameters of the functions whose every call is in `found`
/// (`counts` of them) receive, by body.
pub(super) fn received(
    types: &Types<'_>,
    found: Found,
    counts: &HashMap<usize, usize>,
) -> HashMap<usize, Vec<Inferred>> {
    found
        .into_iter()
        .filter(|(var, _)| counts.get(var).copied() == Some(types.uses(*var).len()))
        .filter_map(|(var, args)| {
            let body = *types.bodies.get(&var)?;
            let names = *types.parameter_counts.get(&body)?;
            let params = (0..names)
                .map(|i| {
                    args.iter()
                        .map(|(values, open)| match values.get(i) {
                            Some(value) => value.clone(),
                            None if *open => Inferred::any(),
                            None => Inferred::of(Ty::NIL),
                        })
                        .reduce(Inferred::merge)
                        .unwrap_or_else(Inferred::any)
                })
                .collect();
            Some((body, params))
        })
        // Unknown parameters are what a walk assumes anyway.
        .filter(|(_, params): &(usize, Vec<Inferred>)| {
            params
                .iter()
                .any(|p| !p.ty.is_any() || p.origin.is_some() || !p.range.is_any())
        })
        .collect()
}

/// Collects the calls of functions held by locals.
struct Calls<'t, 'a> {
    types: &'t Types<'a>,
    at: &'t HashMap<NodeKey, Inferred>,
    /// By local: the argument values of each call (a call not reached by
    /// the walk passes nothing), and whether the list ends in a call or
    /// `...` (then the last one and those after it are unknown).
    found: HashMap<usize, Vec<(Vec<Inferred>, bool)>>,
    /// By local: how many calls name it.
    counts: HashMap<usize, usize>,
}

impl Visitor for Calls<'_, '_> {
    fn visit_function_call(&mut self, call: &FunctionCall) {
        let Prefix::Name(name) = call.prefix() else {
            return;
        };
        let Some(var) = self.types.local(name) else {
            return;
        };
        if !self.types.bodies.contains_key(&var) {
            return;
        }
        let Some(Suffix::Call(Call::AnonymousCall(args))) = call.suffixes().next() else {
            return;
        };
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return;
        };
        *self.counts.entry(var).or_default() += 1;
        let mut values = Vec::new();
        let mut open = false;
        let count = arguments.len();
        for (i, arg) in arguments.iter().enumerate() {
            let Some(value) = self.at.get(&expr_key(arg)) else {
                // Never reached: this call passes nothing.
                return;
            };
            // A local handed over: the caller is taken to know it is
            // there (as lints take a local handed to a function), so
            // its nil reply does not explain a `false` inside.
            let value = match arg {
                Expression::Var(Var::Name(local)) if self.types.local(local).is_some() => {
                    let mut value = value.clone();
                    if value.origin.as_ref().is_some_and(Origin::explains_false) {
                        value.origin = None;
                    }
                    value
                }
                _ => value.clone(),
            };
            let value = &value;
            if i + 1 == count && is_multi(arg) {
                // A call's first value, then any number more (none for
                // `...`, which may give none at all).
                open = true;
                if matches!(arg, Expression::FunctionCall(_)) {
                    values.push(value.clone());
                }
            } else {
                values.push(value.clone());
            }
        }
        self.found.entry(var).or_default().push((values, open));
    }
}
