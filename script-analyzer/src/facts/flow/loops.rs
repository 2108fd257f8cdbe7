//! Loops in the flow walk: a loop's body walked to a fixed point, and
//! what a loop over a command's reply tells the tables it fills.

use crate::facts::eval::expr_key;
use crate::facts::state::State;
use crate::facts::value::{Inferred, Origin, Range, Ty};
use crate::facts::{FieldKey, unparenthesized};
use full_moon::ast::{Call, Expression, FunctionArgs, Prefix, Suffix, UnOp, Var};

/// Statements the walk may visit before giving up.
use super::{Flow, LOOP_ROUNDS};

impl Flow<'_, '_> {
    /// Walks a loop until its entry state settles. `round` walks the body
    /// once from the entry state and gives the state at the end of the
    /// body (what the next round starts from) and the state where the
    /// loop ends without a `break`.
    pub(super) fn fixed_point(
        &self,
        entry: State,
        round: impl Fn(&State) -> (State, State),
    ) -> State {
        let mut head = entry;
        for i in 0..=LOOP_ROUNDS {
            self.breaks.borrow_mut().push(State::dead());
            let (again, done) = round(&head);
            let breaks = self.breaks.borrow_mut().pop().unwrap_or_default();
            let exit = done.join(breaks);
            let next = head.clone().join(again);
            if next.same(&head) || self.budget.get() == 0 {
                return exit;
            }
            head = if i == 0 { next } else { head.widen(next) };
            if i + 1 == LOOP_ROUNDS {
                // Does not settle: the loop's locals take every value.
                for (var, value) in head.vars.iter_mut() {
                    *value = self.types.var(*var);
                }
                head.fields.clear();
            }
        }
        State::dead()
    }

    /// Walks a loop (`walk`) that goes over the reply `over`, if any.
    pub(super) fn looping(&self, over: Option<Origin>, walk: impl FnOnce() -> State) -> State {
        self.over.borrow_mut().push(over);
        let state = walk();
        self.over.borrow_mut().pop();
        state
    }

    /// The reply the innermost loop over one goes over.
    pub(super) fn looped_over(&self) -> Option<Origin> {
        self.over.borrow().iter().rev().find_map(Clone::clone)
    }

    /// The reply `#reply` (a numeric `for`'s end) is the length of.
    pub(super) fn length_of_reply(&self, end: &Expression) -> Option<Origin> {
        let Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            expression,
        } = unparenthesized(end)
        else {
            return None;
        };
        let value = self.at.borrow().get(&expr_key(expression)).cloned()?;
        value.origin.filter(|o| {
            matches!(o, Origin::Reply { .. }) && value.ty.intersects(Ty::ARRAY.union(Ty::PAIRS))
        })
    }

    /// What a generic `for` gives its first two names, and the reply it
    /// goes over.
    pub(super) fn iteration(
        &self,
        exprs: &[&Expression],
        state: &State,
    ) -> (Inferred, Inferred, Option<Origin>) {
        let unknown = (Inferred::any(), Inferred::any(), None);
        let [Expression::FunctionCall(call)] = exprs else {
            return unknown;
        };
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))]) =
            (call.prefix(), suffixes.as_slice())
        else {
            return unknown;
        };
        let function = name.token().to_string();
        if self.types.local(name).is_some() || !matches!(function.as_str(), "ipairs" | "pairs") {
            return unknown;
        }
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return unknown;
        };
        let Some(table_expr) = arguments.iter().next() else {
            return unknown;
        };
        let table = self
            .at
            .borrow()
            .get(&expr_key(table_expr))
            .cloned()
            .unwrap_or_else(Inferred::any);
        // The values stored at the positions of a followed local table.
        let stored = match unparenthesized(table_expr) {
            // `KEYS` and `ARGV` hold strings (unless the script stores into them).
            Expression::Var(Var::Name(token))
                if self.types.local(token).is_none()
                    && matches!(token.token().to_string().as_str(), "KEYS" | "ARGV")
                    && !self.types.inputs_assigned =>
            {
                Some(Inferred::of(Ty::STRING))
            }
            Expression::Var(Var::Name(token)) if function == "ipairs" => self
                .types
                .local(token)
                .and_then(|var| self.field(state, var, &FieldKey::Elements)),
            _ => None,
        };
        let value = match stored {
            Some(stored) => Inferred {
                ty: stored.ty.minus(Ty::NIL),
                ..stored
            },
            None => self.types.iterated(&table),
        };
        let key = if function == "ipairs" {
            Inferred::of(Ty::INT).within(Range::new(1.0, f64::INFINITY))
        } else {
            Inferred::any()
        };
        let over = table.origin.filter(|o| {
            matches!(o, Origin::Reply { .. }) && table.ty.intersects(Ty::ARRAY.union(Ty::PAIRS))
        });
        (key, value, over)
    }
}
