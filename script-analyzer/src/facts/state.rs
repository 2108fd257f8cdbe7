//! What the flow walk knows at one point of a function ([`State`]), and
//! how states meet where branches join and loops come round.
//!
//! Invariants: a state holds, for the locals of the function being walked,
//! a superset of the values they may have at that point (a local it does
//! not hold has its summary value), and for the followed fields of local
//! tables the fields known at that point (a field it does not hold is
//! unknown, unless [`FieldKey::NamesKnown`] says the table's names are all
//! held). A state that is not `live` is a point no run reaches.
//!
//! The walk copies a state at every branch, and a long function has many
//! locals: the locals are a [`Vars`], a shared map and the few values set
//! since, so that a copy, a join of two branches and the comparison of a
//! loop's rounds cost what changed, not every local of the function.

use super::FieldKey;
use super::value::{Inferred, Ty};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::rc::Rc;

/// What is known at one point of a function.
#[derive(Clone, Debug, Default)]
pub(super) struct State {
    /// The point can be reached.
    pub live: bool,
    /// The locals of the function, by variable.
    pub vars: Vars,
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
        let vars = self.vars.join(other.vars);
        // A field held on one side only is kept when the other side holds
        // a marker of its table: nothing is, when a side holds nothing.
        if self.fields.is_empty() || other.fields.is_empty() {
            return State {
                live: true,
                vars,
                fields: HashMap::new(),
            };
        }
        let mut fields = HashMap::with_capacity(self.fields.len());
        let known = |fields: &HashMap<(usize, FieldKey), Inferred>| -> Vec<usize> {
            fields
                .keys()
                .filter(|(_, key)| *key == FieldKey::NamesKnown)
                .map(|(table, _)| *table)
                .collect()
        };
        let (mine_known, theirs_known) = (known(&self.fields), known(&other.fields));
        // A name held on one side only is nil on the other when that side
        // knows every name of the table, or one of the values it stored at
        // keys it computed; those are nothing on a side that stored none.
        let one_sided = |(table, key): &(usize, FieldKey), other_known: &[usize]| {
            matches!(key, FieldKey::Name(_) | FieldKey::Anywhere) && other_known.contains(table)
        };
        let anywhere = |fields: &HashMap<(usize, FieldKey), Inferred>| -> HashMap<usize, Inferred> {
            fields
                .iter()
                .filter(|((_, key), _)| *key == FieldKey::Anywhere)
                .map(|((table, _), value)| (*table, value.clone()))
                .collect()
        };
        let (mine_anywhere, theirs_anywhere) = (anywhere(&self.fields), anywhere(&other.fields));
        // What a field held on one side only is on the other side.
        let absent = |(table, key): &(usize, FieldKey), other: &HashMap<usize, Inferred>| {
            if *key == FieldKey::Anywhere {
                return Inferred::of(Ty::EMPTY);
            }
            let nil = Inferred::of(Ty::NIL);
            match other.get(table) {
                Some(stored) => nil.merge(stored.clone()),
                None => nil,
            }
        };
        let mut theirs = other.fields;
        for (key, value) in self.fields {
            match theirs.remove(&key) {
                Some(other) => {
                    fields.insert(key, value.merge(other));
                }
                None if one_sided(&key, &theirs_known) => {
                    let other = absent(&key, &theirs_anywhere);
                    fields.insert(key, value.merge(other));
                }
                None => {}
            }
        }
        for (key, value) in theirs {
            if one_sided(&key, &mine_known) {
                let other = absent(&key, &mine_anywhere);
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
        next.vars.widen_from(&self.vars);
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
            && self.fields.len() == other.fields.len()
            && self.vars.same(&other.vars)
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

/// The values of a function's locals: a map shared between the copies of
/// a state (`base`) and the values set since the copy (`delta`, which
/// overrides `base`). A local is in the map when it is in either.
///
/// Invariants: `delta` stays small (it is folded into `base` when it
/// grows past [`Vars::folded_at`]); two maps with the same `base` (the
/// same allocation) hold the same values for every local outside both
/// deltas.
#[derive(Clone, Debug, Default)]
pub(super) struct Vars {
    base: Rc<HashMap<usize, Inferred>>,
    delta: HashMap<usize, Inferred>,
}

impl Vars {
    /// The value of `var`, if held.
    pub fn get(&self, var: &usize) -> Option<&Inferred> {
        self.delta.get(var).or_else(|| self.base.get(var))
    }

    /// `var` holds `value`.
    pub fn insert(&mut self, var: usize, value: Inferred) {
        self.delta.insert(var, value);
        if self.delta.len() > self.folded_at() {
            self.fold();
        }
    }

    /// Every value, to change in place.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&usize, &mut Inferred)> {
        self.fold();
        Rc::make_mut(&mut self.base).iter_mut()
    }

    /// The size of `delta` past which it is folded into `base`: folding
    /// copies `base` when other states share it, so it waits for a number
    /// of changes that grows with `base`.
    fn folded_at(&self) -> usize {
        32.max(self.base.len() / 16)
    }

    /// Moves `delta` into `base` (a copy of it when shared).
    fn fold(&mut self) {
        if !self.delta.is_empty() {
            Rc::make_mut(&mut self.base).extend(self.delta.drain());
        }
    }

    /// Every local in either map, with its values in each: those of
    /// `delta`s only when both share a `base` (where the rest is equal).
    fn pairs<'s>(
        &'s self,
        other: &'s Vars,
    ) -> Box<dyn Iterator<Item = (usize, Option<&'s Inferred>, Option<&'s Inferred>)> + 's> {
        let keys: Box<dyn Iterator<Item = &usize>> = if Rc::ptr_eq(&self.base, &other.base) {
            Box::new(self.delta.keys().chain(other.delta.keys()))
        } else {
            Box::new(
                self.delta
                    .keys()
                    .chain(self.base.keys())
                    .chain(other.delta.keys())
                    .chain(other.base.keys()),
            )
        };
        let mut seen = std::collections::HashSet::new();
        Box::new(
            keys.filter(move |var| seen.insert(**var))
                .map(|&var| (var, self.get(&var), other.get(&var))),
        )
    }

    /// What holds after either `self` or `other`: a local held by both
    /// takes either value, one held by one only keeps its value.
    fn join(self, other: Vars) -> Vars {
        if Rc::ptr_eq(&self.base, &other.base) {
            let mut delta = HashMap::with_capacity(self.delta.len() + other.delta.len());
            for (var, a, b) in self.pairs(&other) {
                let value = match (a, b) {
                    (Some(a), Some(b)) => a.clone().merge(b.clone()),
                    (Some(v), None) | (None, Some(v)) => v.clone(),
                    (None, None) => continue,
                };
                delta.insert(var, value);
            }
            let mut vars = Vars {
                base: self.base,
                delta,
            };
            if vars.delta.len() > vars.folded_at() {
                vars.fold();
            }
            return vars;
        }
        let (mut mine, mut theirs) = (self, other);
        mine.fold();
        theirs.fold();
        let mut vars = Rc::unwrap_or_clone(mine.base);
        for (var, value) in Rc::unwrap_or_clone(theirs.base) {
            match vars.entry(var) {
                Entry::Occupied(mut e) => {
                    let slot = e.get_mut();
                    let old = std::mem::replace(slot, Inferred::of(Ty::EMPTY));
                    *slot = old.merge(value);
                }
                Entry::Vacant(e) => {
                    e.insert(value);
                }
            }
        }
        Vars {
            base: Rc::new(vars),
            delta: HashMap::new(),
        }
    }

    /// Widens the ranges of `self` (which includes `old`) that grew since
    /// `old`.
    fn widen_from(&mut self, old: &Vars) {
        let widened: Vec<(usize, Inferred)> = self
            .pairs(old)
            .filter_map(|(var, value, old)| {
                let (value, old) = (value?, old?);
                if old.ty == Ty::EMPTY {
                    return None;
                }
                let range = old.range.widen(value.range);
                (range != value.range).then(|| {
                    let mut value = value.clone();
                    value.range = range;
                    (var, value)
                })
            })
            .collect();
        for (var, value) in widened {
            self.insert(var, value);
        }
    }

    /// Whether `self` and `other` hold the same locals with the same types
    /// and ranges.
    fn same(&self, other: &Vars) -> bool {
        self.pairs(other).all(|(_, a, b)| match (a, b) {
            (Some(a), Some(b)) => a.ty == b.ty && a.range == b.range,
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::value::Range;

    fn int(lo: f64, hi: f64) -> Inferred {
        Inferred::of(Ty::INT).within(Range::new(lo, hi))
    }

    /// The locals of `vars`, as a plain map.
    fn plain(vars: &Vars) -> Vec<(usize, Ty, Range)> {
        let mut out: Vec<_> = (0..200)
            .filter_map(|var| vars.get(&var).map(|v| (var, v.ty, v.range)))
            .collect();
        out.sort_by_key(|(var, ..)| *var);
        out
    }

    #[test]
    fn copies_of_a_state_join_widen_and_compare_as_whole_maps_do() {
        let mut start = Vars::default();
        for var in 0..100 {
            start.insert(var, int(0.0, 1.0));
        }
        // Two branches of the same state (sharing its map), and one made
        // apart (its own map, with the same values).
        let mut a = start.clone();
        let mut b = start.clone();
        a.insert(5, int(0.0, 9.0));
        a.insert(150, int(3.0, 3.0));
        b.insert(5, int(-1.0, 0.0));
        b.insert(7, Inferred::of(Ty::STRING));
        let mut apart = Vars::default();
        for (var, ty, range) in plain(&b) {
            apart.insert(var, Inferred::of(ty).within(range));
        }
        assert!(b.same(&apart) && apart.same(&b) && !a.same(&b));
        let shared = a.clone().join(b.clone());
        let unshared = a.clone().join(apart);
        assert_eq!(plain(&shared), plain(&unshared));
        let joined = plain(&shared);
        assert_eq!(joined.len(), 101);
        assert!(joined.contains(&(5, Ty::INT, Range::new(-1.0, 9.0))));
        assert!(joined.contains(&(7, Ty::INT.union(Ty::STRING), Range::ANY)));
        assert!(joined.contains(&(150, Ty::INT, Range::new(3.0, 3.0))));
        assert!(joined.contains(&(99, Ty::INT, Range::new(0.0, 1.0))));
        // Widening: the range of 5 grew both ways since `start`.
        let mut widened = shared.clone();
        widened.widen_from(&start);
        assert!(plain(&widened).contains(&(5, Ty::INT, Range::ANY)));
        assert!(plain(&widened).contains(&(99, Ty::INT, Range::new(0.0, 1.0))));
        assert!(!widened.same(&shared));
    }
}
