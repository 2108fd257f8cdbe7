//! What the flow walk knows at one point of a function ([`State`]), and
//! how states meet where branches join and loops come round.
//!
//! Invariants: a state holds, for the locals of the function being walked,
//! a superset of the values they may have at that point (a local it does
//! not hold has its summary value), and for the followed fields of local
//! tables the fields known at that point (a field it does not hold is
//! unknown). A state that is not `live` is a point no run reaches.

use super::FieldKey;
use super::value::{Inferred, Ty};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// What is known at one point of a function.
#[derive(Clone, Debug, Default)]
pub(super) struct State {
    /// The point can be reached.
    pub live: bool,
    /// The locals of the function, by variable.
    pub vars: HashMap<usize, Inferred>,
    /// Followed fields of local tables.
    pub fields: HashMap<(usize, FieldKey), Inferred>,
}

impl State {
    pub fn start() -> State {
        State {
            live: true,
            ..State::default()
        }
    }

    pub fn dead() -> State {
        State::default()
    }

    /// What holds after either `self` or `other`.
    pub fn join(self, other: State) -> State {
        if !self.live {
            return other;
        }
        if !other.live {
            return self;
        }
        let mut vars = self.vars;
        for (var, value) in other.vars {
            match vars.entry(var) {
                Entry::Occupied(mut e) => {
                    let old = e.get().clone();
                    e.insert(old.merge(value));
                }
                Entry::Vacant(e) => {
                    e.insert(value);
                }
            }
        }
        let mut fields = HashMap::new();
        let mut theirs = other.fields;
        for (key, value) in self.fields {
            if let Some(other) = theirs.remove(&key) {
                fields.insert(key, value.merge(other));
            }
        }
        State {
            live: true,
            vars,
            fields,
        }
    }

    /// `next` (which includes `self`), with the ranges that grew widened.
    pub fn widen(&self, next: State) -> State {
        let mut next = next;
        for (var, value) in next.vars.iter_mut() {
            if let Some(old) = self.vars.get(var)
                && old.ty != Ty::EMPTY
            {
                value.range = old.range.widen(value.range);
            }
        }
        for (key, value) in next.fields.iter_mut() {
            if let Some(old) = self.fields.get(key) {
                value.range = old.range.widen(value.range);
            }
        }
        next
    }

    /// Whether `self` and `other` say the same of every value.
    pub fn same(&self, other: &State) -> bool {
        let same = |a: &Inferred, b: &Inferred| a.ty == b.ty && a.range == b.range;
        self.live == other.live
            && self.vars.len() == other.vars.len()
            && self.fields.len() == other.fields.len()
            && self
                .vars
                .iter()
                .all(|(k, v)| other.vars.get(k).is_some_and(|o| same(v, o)))
            && self
                .fields
                .iter()
                .all(|(k, v)| other.fields.get(k).is_some_and(|o| same(v, o)))
    }

    /// `var` holds `value`; its fields are no longer known.
    pub fn set(&mut self, var: usize, value: Inferred) {
        self.vars.insert(var, value);
        self.fields.retain(|(v, _), _| *v != var);
    }
}
