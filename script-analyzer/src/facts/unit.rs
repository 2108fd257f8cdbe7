//! The values of one function statement of the main chunk, worked out
//! against the rest of its script's facts: how an editor's analysis
//! (the `incremental` module) replaces the facts of a function it changed
//! without inferring the whole script again.
//!
//! Invariants:
//! - The statement is `local function NAME(...)` or `function NAME(...)`
//!   in the main chunk, and names no local declared outside it but the
//!   script's own functions it calls (`f(...)`, with parentheses);
//!   [`Types::closed`] checks it. Such a statement takes from the rest of
//!   the script only the values the walk gives those calls (what the
//!   functions walked before it return), what its parameters receive
//!   (from calls elsewhere), and facts of the whole script (the
//!   protocol, the keys it seeds, the declared inputs).
//! - What it gives the rest: the uses of the functions it calls, the
//!   values it passes them, what it returns, and the `redis.call` sites
//!   whose replies those values are ([`Interface`]); the same interface
//!   for the old and the new statement leaves every other fact of the
//!   script as it was.
//! - Every value of the statement is the one [`Types::build`] gives on
//!   the whole script: its locals' summary is worked out as the whole
//!   script's is, round by round (the locals of the rest that it reads
//!   are functions, settled from the first round); its body is walked as
//!   the walks of the script walk it, once without and once with what the
//!   parameters receive.

use super::eval::{NodeKey, expr_key, suffix_key, token_key};
use super::flow::{self, Walked};
use super::summary::{Def, Walker};
use super::{
    Inferred, Origin, Ty, Types, Use, UseKind, WalkRecord, made_as_a_table, only_read_as_a_table,
    params, summary_values,
};
use crate::calls::RedisCall;
use crate::scope::Resolution;
use full_moon::ast::{
    Call, Expression, FunctionArgs, FunctionBody, FunctionCall, Prefix, Stmt, Suffix, Var,
};
use full_moon::tokenizer::Token;
use full_moon::visitors::{Visit, Visitor};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// A function statement of the main chunk, in its script.
#[derive(Clone)]
pub(crate) struct Unit<'s> {
    /// The statement.
    pub stmt: &'s Stmt,
    /// Its function's body.
    pub body: &'s FunctionBody,
    /// The local `local function NAME` declares (`None` for `function
    /// NAME`).
    pub own: Option<usize>,
    /// The locals declared inside it.
    pub inner: Range<usize>,
}

impl<'s> Unit<'s> {
    /// The unit of `stmt`, when it is a function statement of one name.
    pub fn of(stmt: &'s Stmt, own: Option<usize>, inner: Range<usize>) -> Option<Unit<'s>> {
        let body = match stmt {
            Stmt::LocalFunction(local) => local.body(),
            Stmt::FunctionDeclaration(decl)
                if decl.name().names().len() == 1 && decl.name().method_name().is_none() =>
            {
                decl.body()
            }
            _ => return None,
        };
        Some(Unit {
            stmt,
            body,
            own,
            inner,
        })
    }

    fn is_inner(&self, var: usize) -> bool {
        self.inner.contains(&var)
    }

    fn body_key(&self) -> usize {
        std::ptr::from_ref(self.body) as usize
    }
}

/// What a unit gives the rest of its script (see the module's
/// documentation): the same for two versions of a statement, the rest of
/// the script keeps its facts.
#[derive(Debug)]
pub(crate) struct Interface {
    /// The uses of locals declared outside it, in order.
    uses: Vec<(usize, UseKind)>,
    /// For each walk made: what the function returns, the calls it makes
    /// of functions declared outside it (by local: the values passed at
    /// each call), and how many calls name each.
    walks: Vec<Face>,
    /// The `redis.call` sites (as parsed) whose replies those values come
    /// from, by place: the rest of the script reads them where it reads
    /// the values (the arguments of the call that made a reply).
    sites: Vec<((usize, usize), Option<RedisCall>)>,
    /// Its share of each walk's budget.
    spent: Vec<usize>,
}

/// What one walk of a unit gives the rest of the script: what its
/// function returns, the arguments of its calls of other functions (by
/// local), and how many calls name each.
type Face = (Option<Inferred>, Vec<(usize, Calls)>, Vec<(usize, usize)>);

/// The values passed at each call of one function, and whether the list
/// ends open (a call or `...` last).
type Calls = Vec<(Vec<Inferred>, bool)>;

impl Interface {
    /// Whether the rest of the script gets the same from both.
    pub fn same(&self, other: &Interface) -> bool {
        self.uses == other.uses && self.walks == other.walks && self.sites == other.sites
    }
}

/// What the summary walker found in a unit.
pub(crate) struct Contributions<'s> {
    defs: HashMap<usize, Vec<Def<'s>>>,
    uses: HashMap<usize, Vec<Use>>,
    inputs_assigned: bool,
    declared_in: HashMap<usize, usize>,
    escaping: HashSet<usize>,
    foreign: HashSet<usize>,
    bodies: HashMap<usize, usize>,
    field_functions: HashMap<(usize, String), Vec<usize>>,
    parameter_counts: HashMap<usize, usize>,
    nested_changed: HashSet<(usize, String)>,
}

/// The unit's walks: the first (parameters unknown), and the second
/// (with what they receive) when the script's walks made one.
pub(crate) struct Walks {
    first: Walked,
    second: Option<Walked>,
}

/// What the functions walked before `old_body` return in a walk of the
/// script (`record`); `None` when one was under way then.
fn visible(record: &WalkRecord, old_body: usize) -> Option<HashMap<usize, Inferred>> {
    let (at, _) = *record.times.get(&old_body)?;
    let mut returns = HashMap::new();
    for (body, (start, end)) in &record.times {
        if *end < at {
            if let Some(value) = record.returns.get(body) {
                returns.insert(*body, value.clone());
            }
        } else if *start < at {
            // Under way when the function was walked: what it had
            // returned by then is not kept.
            return None;
        }
    }
    Some(returns)
}

impl<'a> Types<'a> {
    /// Whether the unit names no local declared outside it but the
    /// script's own functions it calls with parentheses (not its own
    /// name), and assigns no input (see the module's documentation).
    pub(crate) fn closed(&self, unit: &Unit<'_>) -> bool {
        struct Check<'c, 'a, 'u> {
            types: &'c Types<'a>,
            unit: &'c Unit<'u>,
            /// The starts of the name tokens that call a function of the
            /// script.
            calls: HashSet<usize>,
            closed: bool,
        }
        impl Visitor for Check<'_, '_, '_> {
            fn visit_function_call(&mut self, call: &FunctionCall) {
                let Prefix::Name(name) = call.prefix() else {
                    return;
                };
                let Some(Suffix::Call(Call::AnonymousCall(args))) = call.suffixes().next() else {
                    return;
                };
                if !matches!(&**args, FunctionArgs::Parentheses { .. }) {
                    return;
                }
                if let Some(var) = self.types.local(name)
                    && !self.unit.is_inner(var)
                    && Some(var) != self.unit.own
                    && self.types.bodies.contains_key(&var)
                    && self.types.assignments(var) == 1
                {
                    self.calls.insert(name.token().start_position().bytes());
                }
            }

            fn visit_token(&mut self, token: &Token) {
                let at = token.start_position().bytes();
                let Some(Resolution::Local(var)) =
                    self.types.model.and_then(|m| m.resolve_offset(at))
                else {
                    return;
                };
                if self.unit.is_inner(var) {
                    return;
                }
                let declaration = match self.unit.stmt {
                    Stmt::LocalFunction(local) => {
                        local.name().token().start_position().bytes() == at
                    }
                    _ => false,
                };
                if !declaration && !self.calls.contains(&at) {
                    self.closed = false;
                }
            }
        }
        // `function NAME` must name a global.
        if let Stmt::FunctionDeclaration(decl) = unit.stmt
            && let Some(name) = decl.name().names().iter().next()
            && self.local(name).is_some()
        {
            return false;
        }
        let mut check = Check {
            types: self,
            unit,
            calls: HashSet::new(),
            closed: true,
        };
        // A call is visited before the tokens it holds.
        unit.stmt.visit(&mut check);
        check.closed
    }

    /// What the summary walker finds in the unit.
    pub(crate) fn contributions<'s>(&self, unit: &Unit<'s>) -> Contributions<'s> {
        let mut walker = Walker::new(self);
        walker.stmt(unit.stmt);
        let Walker {
            defs,
            uses,
            inputs_assigned,
            declared_in,
            escaping,
            foreign,
            bodies,
            field_functions,
            parameter_counts,
            nested_changed,
            ..
        } = walker;
        Contributions {
            defs,
            uses,
            inputs_assigned,
            declared_in,
            escaping,
            foreign,
            bodies,
            field_functions,
            parameter_counts,
            nested_changed,
        }
    }

    /// Walks the unit's function as the script's walks do (see
    /// [`Walks`]), in place of the function whose body is `old_body` (the
    /// unit itself, or the statement it replaces): `None` when a walk of
    /// it alone used up the budget, or it was walked while another
    /// function's walk was under way.
    pub(crate) fn walk_unit(&mut self, unit: &Unit<'_>, old_body: usize) -> Option<Walks> {
        let first = self.walk_first(unit, old_body)?;
        self.walk_second(unit, old_body, first)
    }

    /// The first of [`Types::walk_unit`]'s walks: no parameter is known.
    pub(crate) fn walk_first(&mut self, unit: &Unit<'_>, old_body: usize) -> Option<Walked> {
        let returns = visible(self.walks.first.as_ref()?, old_body)?;
        let params = std::mem::take(&mut self.params);
        let first = flow::walk_function(self, unit.body, returns);
        self.params = params;
        first
    }

    /// The second of [`Types::walk_unit`]'s walks, after the `first`.
    pub(crate) fn walk_second(
        &mut self,
        unit: &Unit<'_>,
        old_body: usize,
        first: Walked,
    ) -> Option<Walks> {
        let second = match &self.walks.second {
            Some(record) => {
                let returns = visible(record, old_body)?;
                Some(flow::walk_function(self, unit.body, returns)?)
            }
            None => None,
        };
        Some(Walks { first, second })
    }

    /// What the unit gives the rest of the script.
    pub(crate) fn interface(
        &self,
        unit: &Unit<'_>,
        contributions: &Contributions<'_>,
        walks: &Walks,
    ) -> Interface {
        let uses = self.outer_uses(unit, contributions);
        self.face(unit, uses, walks)
    }

    /// The unit's uses of locals declared outside it, in order.
    pub(crate) fn outer_uses(
        &self,
        unit: &Unit<'_>,
        contributions: &Contributions<'_>,
    ) -> Vec<(usize, UseKind)> {
        let mut uses: Vec<(usize, &Use)> = contributions
            .uses
            .iter()
            .filter(|(var, _)| !unit.is_inner(**var))
            .flat_map(|(var, uses)| uses.iter().map(move |u| (*var, u)))
            .collect();
        uses.sort_by_key(|(var, u)| (u.span.start.offset, *var));
        uses.into_iter()
            .map(|(var, u)| (var, u.kind.clone()))
            .collect()
    }

    /// [`Types::interface`], from the unit's `uses` of outer locals and
    /// its walks.
    pub(crate) fn face(
        &self,
        unit: &Unit<'_>,
        uses: Vec<(usize, UseKind)>,
        walks: &Walks,
    ) -> Interface {
        let body = unit.body_key();
        let face = |walked: &Walked| -> Face {
            let (found, counts) = params::calls_in(self, unit.stmt, &walked.at);
            let mut found: Vec<(usize, Calls)> = found
                .into_iter()
                .filter(|(var, _)| !unit.is_inner(*var))
                .collect();
            found.sort_by_key(|(var, _)| *var);
            let mut counts: Vec<(usize, usize)> = counts
                .into_iter()
                .filter(|(var, _)| !unit.is_inner(*var))
                .collect();
            counts.sort_unstable();
            (walked.returns.get(&body).cloned(), found, counts)
        };
        let mut faces = vec![face(&walks.first)];
        let mut spent = vec![walks.first.spent];
        if let Some(second) = &walks.second {
            faces.push(face(second));
            spent.push(second.spent);
        }
        // The calls behind the replies the values given come from.
        let mut places = Vec::new();
        for (returned, calls, _) in &faces {
            let values = returned.iter().chain(
                calls
                    .iter()
                    .flat_map(|(_, calls)| calls.iter().flat_map(|(values, _)| values)),
            );
            for value in values {
                if let Some(origin) = &value.origin {
                    reply_places(origin, &mut places);
                }
            }
        }
        places.sort_unstable();
        places.dedup();
        let sites = places
            .into_iter()
            .map(|place| (place, self.calls.get(&place).cloned()))
            .collect();
        Interface {
            uses,
            walks: faces,
            sites,
            spent,
        }
    }

    /// Whether the unit assigns `KEYS` or `ARGV`, defines a local declared
    /// outside it (but its own name, as its statement does), or keeps a
    /// function in a field of one: then [`Interface`] does not tell all
    /// it gives the rest.
    pub(crate) fn reaches_out(&self, unit: &Unit<'_>, contributions: &Contributions<'_>) -> bool {
        contributions.inputs_assigned
            || contributions.defs.iter().any(|(var, defs)| {
                let own_statement = Some(*var) == unit.own
                    && matches!(defs[..], [Def::Value(ty)] if ty == Ty::FUNCTION);
                !unit.is_inner(*var) && !own_statement
            })
            || contributions
                .field_functions
                .keys()
                .any(|(table, _)| !unit.is_inner(*table))
            || contributions
                .nested_changed
                .iter()
                .any(|(table, _)| !unit.is_inner(*table))
    }

    /// Removes the facts of the unit `old` (whose statement's node keys
    /// are `nodes`, and whose uses of other locals lie in `start..end`).
    pub(crate) fn forget(
        &mut self,
        old: &Unit<'_>,
        nodes: &UnitNodes,
        (start, end): (usize, usize),
    ) {
        for var in old.inner.clone() {
            self.vars.remove(&var);
            self.defs_count.remove(&var);
            self.uses.remove(&var);
            self.declared_in.remove(&var);
            self.escaping.remove(&var);
            self.tracked.remove(&var);
            self.bodies.remove(&var);
        }
        self.field_bodies
            .retain(|(table, _), _| !old.is_inner(*table));
        self.nested_changed
            .retain(|(table, _)| !old.is_inner(*table));
        for body in &nodes.bodies {
            self.parameter_counts.remove(body);
            self.params.remove(body);
        }
        for key in &nodes.keys {
            self.at.remove(key);
            self.fields_at.remove(key);
        }
        for uses in self.uses.values_mut() {
            uses.retain(|u| !(start <= u.span.start.offset && u.span.start.offset < end));
        }
    }

    /// Adds the facts [`Types::contributions`] found in the unit `new`
    /// (after [`Types::forget`] of the statement it replaces, whose
    /// function's parameters received `params`): its locals, their uses
    /// and summary, the uses of the rest's. `false` when its locals'
    /// summary does not settle (the script's would not either: its facts
    /// are then to be worked out again).
    pub(crate) fn learn(
        &mut self,
        new: &Unit<'_>,
        contributions: Contributions<'_>,
        params: Option<Vec<Inferred>>,
    ) -> bool {
        let Contributions {
            defs,
            uses,
            declared_in,
            escaping,
            foreign,
            bodies,
            field_functions,
            parameter_counts,
            nested_changed,
            ..
        } = contributions;
        // Uses: the outer locals' in the order of the text.
        for (var, mut found) in uses {
            let list = self.uses.entry(var).or_default();
            if new.is_inner(var) {
                *list = found;
                continue;
            }
            let Some(first) = found.first() else {
                continue;
            };
            let at = list.partition_point(|u| u.span.start.offset < first.span.start.offset);
            let tail = list.split_off(at);
            list.append(&mut found);
            list.extend(tail);
        }
        for (var, defs) in &defs {
            if new.is_inner(*var) {
                self.defs_count.insert(*var, defs.len());
            }
        }
        for (var, function) in declared_in {
            if new.is_inner(var) {
                self.declared_in.insert(var, function);
            }
        }
        self.escaping
            .extend(escaping.into_iter().filter(|v| new.is_inner(*v)));
        // A function a local always holds (its own name's, unless
        // assigned elsewhere too).
        for (var, body) in bodies {
            if (new.is_inner(var) || Some(var) == new.own) && self.defs_count.get(&var) == Some(&1)
            {
                self.bodies.insert(var, body);
            }
        }
        for ((table, name), found) in field_functions {
            if let [body] = found[..]
                && body != 0
                && new.is_inner(table)
                && self.defs_count.get(&table) == Some(&1)
            {
                self.field_bodies.insert((table, name), body);
            }
        }
        self.parameter_counts.extend(parameter_counts);
        self.nested_changed.extend(nested_changed);
        // Followed tables, as `Types::build` picks them.
        let inner_uses: Vec<(usize, Vec<Use>)> = new
            .inner
            .clone()
            .filter_map(|var| Some((var, self.uses.get(&var)?.clone())))
            .collect();
        let tracked: Vec<usize> = inner_uses
            .iter()
            .filter(|(var, uses)| !foreign.contains(var) && only_read_as_a_table(uses))
            .map(|(var, _)| *var)
            .chain(
                defs.keys()
                    .filter(|v| new.is_inner(**v) && !self.uses.contains_key(v))
                    .copied(),
            )
            .filter(|var| defs.get(var).is_some_and(|defs| made_as_a_table(defs)))
            .collect();
        self.tracked.extend(tracked);
        // The summary of its locals: the rest is settled, and what it
        // reads of the rest (functions) is from the first round.
        let inner_defs: HashMap<usize, Vec<Def<'_>>> = defs
            .into_iter()
            .filter(|(var, _)| new.is_inner(*var))
            .collect();
        let (vars, settled) = summary_values(self, &inner_defs, &self.vars);
        if !settled {
            return false;
        }
        self.vars.extend(vars);
        if let Some(params) = params {
            self.params.insert(new.body_key(), params);
        }
        true
    }

    /// The parameters of the functions declared inside the unit whose
    /// every call is inside it, from its `first` walk.
    pub(crate) fn inner_params(&mut self, unit: &Unit<'_>, first: &Walked) {
        let (found, counts) = params::calls_in(self, unit.stmt, &first.at);
        let found = found
            .into_iter()
            .filter(|(var, _)| unit.is_inner(*var))
            .collect();
        let received = params::received(self, found, &counts);
        self.params.extend(received);
    }

    /// Takes the values the unit's walks found (the second's when made),
    /// and their records in place of those of the statement it replaces
    /// (whose function bodies are `old_bodies`, its own first).
    pub(crate) fn take_walks(&mut self, unit: &Unit<'_>, old_bodies: &[usize], walks: Walks) {
        let Walks { first, second } = walks;
        let body = unit.body_key();
        let kept = &mut self.walks;
        let records = [
            (Some(&first), kept.first.as_mut()),
            (second.as_ref(), kept.second.as_mut()),
        ];
        for (walked, record) in records {
            let (Some(walked), Some(record)) = (walked, record) else {
                continue;
            };
            let times = old_bodies
                .first()
                .and_then(|old| record.times.get(old).copied());
            for old in old_bodies {
                record.times.remove(old);
                record.returns.remove(old);
            }
            if let Some(value) = walked.returns.get(&body) {
                record.returns.insert(body, value.clone());
            }
            if let Some(times) = times {
                record.times.insert(body, times);
            }
        }
        let values = second.unwrap_or(first);
        self.at.extend(values.at);
        self.fields_at.extend(values.fields_at);
    }

    /// Counts the budget of the script's walks with the unit `new` in
    /// place of `old` (their interfaces hold their shares): whether each
    /// walk stays within it.
    pub(crate) fn respend(&mut self, old: &Interface, new: &Interface) -> bool {
        let walks = &mut self.walks;
        let records = [walks.first.as_mut(), walks.second.as_mut()];
        for (i, record) in records.into_iter().enumerate() {
            let Some(record) = record else {
                continue;
            };
            let (Some(old), Some(new)) = (old.spent.get(i), new.spent.get(i)) else {
                return false;
            };
            let spent = record.spent - old + new;
            if spent >= flow::WALK_BUDGET {
                return false;
            }
            record.spent = spent;
        }
        true
    }

    /// Whether the facts can be worked out unit by unit: the summary
    /// settled, the first walk was made, and a second one too when the
    /// parameters of some function are known.
    pub(crate) fn incremental(&self) -> bool {
        self.walks.settled
            && self.walks.first.is_some()
            && !self.walks.second_gave_up
            && self.walks.second.is_some() != self.params.is_empty()
    }

    /// What the parameters of the unit's function receive.
    pub(crate) fn params_of(&self, unit: &Unit<'_>) -> Option<Vec<Inferred>> {
        self.params.get(&unit.body_key()).cloned()
    }

    /// Whether some function's parameters are known.
    pub(crate) fn has_params(&self) -> bool {
        !self.params.is_empty()
    }
}

/// The places of the `redis.call` sites whose replies `origin` names.
fn reply_places(origin: &Origin, places: &mut Vec<(usize, usize)>) {
    match origin {
        Origin::Reply { span, .. } => places.push((span.start.offset, span.end.offset)),
        Origin::Tonumber { of: Some(of) } | Origin::Trusted { of } => reply_places(of, places),
        _ => {}
    }
}

/// The node keys and function bodies of a unit's statement.
#[derive(Default)]
pub(crate) struct UnitNodes {
    keys: Vec<NodeKey>,
    bodies: Vec<usize>,
}

impl UnitNodes {
    /// Those of `stmt`.
    pub fn of(stmt: &Stmt) -> UnitNodes {
        struct Collect(UnitNodes);
        impl Visitor for Collect {
            fn visit_expression(&mut self, node: &Expression) {
                self.0.keys.push(expr_key(node));
            }
            fn visit_var(&mut self, node: &Var) {
                if let Var::Name(token) = node {
                    self.0.keys.push(token_key(token));
                }
            }
            fn visit_prefix(&mut self, node: &Prefix) {
                if let Prefix::Name(token) = node {
                    self.0.keys.push(token_key(token));
                }
            }
            fn visit_suffix(&mut self, node: &Suffix) {
                self.0.keys.push(suffix_key(node));
            }
            fn visit_function_body(&mut self, node: &FunctionBody) {
                self.0.bodies.push(std::ptr::from_ref(node) as usize);
            }
        }
        let mut collect = Collect(UnitNodes::default());
        stmt.visit(&mut collect);
        collect.0
    }
}
