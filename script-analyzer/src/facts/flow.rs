//! The flow walk: the statements in order, with what is known of each
//! local (and of the followed fields of local tables) at each point.
//!
//! Invariants:
//! - A [`State`] holds, for the locals of the function being walked, a
//!   superset of the values they may have at that point; a local it does
//!   not hold has its summary value. A field it does not hold is unknown,
//!   but for a table whose names are all held ([`FieldKey::NamesKnown`]):
//!   a name it does not hold is nil there (or a value stored at a key
//!   computed as a string, [`FieldKey::Anywhere`]), and a join keeps a
//!   name set on one path only, as maybe nil.
//! - Branches are joined; a branch that ends in `return`, `error(...)` or
//!   `break` adds nothing to what follows it (`break` adds to the loop's
//!   exit).
//! - A loop is walked until its entry state stops growing (numeric ranges
//!   widened from the second round); past [`LOOP_ROUNDS`] its locals fall
//!   back on their summary values.
//! - The walk visits at most [`BUDGET`] statements; past that it gives up
//!   and every value comes from the summary.
//! - Every value recorded for a node is the join of every evaluation of
//!   it, so a loop's early rounds only add what later rounds include.
//! - A followed table that grows inside a loop over a command's reply
//!   (`for _, id in ipairs(reply)`, `for i = 1, #reply`) has that reply as
//!   the origin of its length: it may be as long as the reply.

mod effects;
mod loops;
mod tables;

use super::eval::{Env, NodeKey, expr_key};
use super::narrow::{Places, narrow};
use super::state::State;
use super::value::{Inferred, Origin, Range, Ty};
use super::{FieldKey, Key, Types, unparenthesized};
use full_moon::ast::{
    Ast, BinOp, Block, Expression, Field, FunctionBody, LastStmt, Parameter, Prefix, Stmt, Suffix,
    TableConstructor, UnOp, Var,
};
use full_moon::tokenizer::TokenReference;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// Statements the walk may visit before giving up.
const BUDGET: usize = 20_000;

/// The longest `and` / `or` chain whose left side narrows its right side.
const MAX_CHAIN: usize = 32;

/// How many `and` / `or` / `not` links lead down the left of `cond`, up to
/// one past [`MAX_CHAIN`].
fn chain_length(mut cond: &Expression) -> usize {
    let mut length = 0;
    while length <= MAX_CHAIN {
        cond = match cond {
            Expression::Parentheses { expression, .. } => expression,
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => expression,
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_) | BinOp::Or(_),
                ..
            } => lhs,
            _ => return length,
        };
        length += 1;
    }
    length
}

/// Rounds of a loop before its locals fall back on their summary values.
const LOOP_ROUNDS: usize = 6;

/// The walk.
pub(super) struct Flow<'t, 'a> {
    pub types: &'t Types<'a>,
    at: RefCell<HashMap<NodeKey, Inferred>>,
    /// The followed fields of local tables where they are read as a whole.
    fields_at: RefCell<HashMap<NodeKey, HashMap<FieldKey, Inferred>>>,
    /// The function being walked (its body's address; 0: the main chunk).
    function: Cell<usize>,
    budget: Cell<usize>,
    /// For each loop being walked, innermost last: the join of the states
    /// at its `break`s.
    breaks: RefCell<Vec<State>>,
    /// For each loop being walked, innermost last: the command reply it
    /// goes over, if it goes over one.
    over: RefCell<Vec<Option<Origin>>>,
    /// What each function walked returns (its first value), by body.
    returns: RefCell<HashMap<usize, Inferred>>,
    /// When each function's walk started first and ended last, by body,
    /// counting the starts and ends of every function's walk.
    times: RefCell<HashMap<usize, (usize, usize)>>,
    clock: Cell<usize>,
}

impl<'t, 'a> Flow<'t, 'a> {
    fn new(types: &'t Types<'a>, returns: HashMap<usize, Inferred>) -> Flow<'t, 'a> {
        Flow {
            types,
            at: RefCell::new(HashMap::new()),
            fields_at: RefCell::new(HashMap::new()),
            function: Cell::new(0),
            budget: Cell::new(BUDGET),
            breaks: RefCell::new(Vec::new()),
            over: RefCell::new(Vec::new()),
            returns: RefCell::new(returns),
            times: RefCell::new(HashMap::new()),
            clock: Cell::new(0),
        }
    }

    fn tick(&self) -> usize {
        let now = self.clock.get();
        self.clock.set(now + 1);
        now
    }
}

/// Walks `ast`; `None` when the walk gave up.
pub(super) fn walk(types: &Types<'_>, ast: &Ast) -> Option<Walked> {
    let flow = Flow::new(types, HashMap::new());
    flow.block(ast.nodes(), State::start());
    let spent = BUDGET - flow.budget.get();
    (flow.budget.get() > 0).then(|| Walked {
        at: flow.at.into_inner(),
        fields_at: flow.fields_at.into_inner(),
        returns: flow.returns.into_inner(),
        times: flow.times.into_inner(),
        spent,
    })
}

/// Walks the function `body`, written in the main chunk, as the walk of
/// its script does when it gets there: `returns` holds what the functions
/// walked before it return. What it found; its `spent` is its share of
/// the budget (`None`: it alone used it up).
pub(super) fn walk_function(
    types: &Types<'_>,
    body: &FunctionBody,
    returns: HashMap<usize, Inferred>,
) -> Option<Walked> {
    let flow = Flow::new(types, returns);
    flow.function(body);
    let spent = BUDGET - flow.budget.get();
    (flow.budget.get() > 0).then(|| Walked {
        at: flow.at.into_inner(),
        fields_at: flow.fields_at.into_inner(),
        returns: flow.returns.into_inner(),
        times: flow.times.into_inner(),
        spent,
    })
}

/// The budget of a walk.
pub(super) const WALK_BUDGET: usize = BUDGET;

/// What the walk found.
pub(crate) struct Walked {
    /// The value of each node where it is evaluated.
    pub at: HashMap<NodeKey, Inferred>,
    /// The followed fields of local tables where they are read as a whole.
    pub fields_at: HashMap<NodeKey, HashMap<FieldKey, Inferred>>,
    /// What each function walked returns (its first value), by body.
    pub returns: HashMap<usize, Inferred>,
    /// When each function's walk started first and ended last, by body.
    pub times: HashMap<usize, (usize, usize)>,
    /// The statements the walk visited (its budget spent).
    pub spent: usize,
}

/// The evaluation environment at one point.
struct FlowEnv<'f, 't, 'a> {
    flow: &'f Flow<'t, 'a>,
    state: Cow<'f, State>,
}

impl Env for FlowEnv<'_, '_, '_> {
    fn local(&self, _types: &Types<'_>, token: &TokenReference, var: usize) -> Inferred {
        // A point no run reaches (`x and y` where `x` is never true): no value.
        let value = if self.state.live {
            self.flow.local(&self.state, var)
        } else {
            Inferred::of(Ty::EMPTY)
        };
        self.record(super::eval::token_key(token), &value);
        if self.flow.follows_fields(var) && self.state.live {
            self.flow.record_fields(token, var, &self.state);
        }
        value
    }

    fn field(&self, var: usize, key: &FieldKey) -> Option<Inferred> {
        self.flow.field(&self.state, var, key)
    }

    fn record(&self, at: NodeKey, value: &Inferred) {
        match self.flow.at.borrow_mut().entry(at) {
            Entry::Occupied(mut e) => {
                let slot = e.get_mut();
                let old = std::mem::replace(slot, Inferred::of(Ty::EMPTY));
                *slot = old.merge(value.clone());
            }
            Entry::Vacant(e) => {
                e.insert(value.clone());
            }
        }
    }

    fn assume(&self, cond: &Expression, truth: bool) -> Option<Box<dyn Env + '_>> {
        // A long chain (`a and b and c ...`) would be narrowed again at
        // each link: past a few, the right side is evaluated unnarrowed.
        if chain_length(cond) > MAX_CHAIN {
            return None;
        }
        Some(Box::new(FlowEnv {
            flow: self.flow,
            state: Cow::Owned(narrow(self.flow, cond, &self.state, truth)),
        }))
    }

    fn function(&self, body: &FunctionBody) {
        self.flow.function(body);
    }

    fn returned(&self, body: usize) -> Option<Inferred> {
        self.flow.returns.borrow().get(&body).cloned()
    }
}

impl Places for Flow<'_, '_> {
    fn resolve(&self, token: &TokenReference) -> Option<usize> {
        self.types.local(token)
    }

    fn follows(&self, var: usize) -> bool {
        Flow::follows(self, var)
    }

    fn follows_fields(&self, var: usize) -> bool {
        Flow::follows_fields(self, var)
    }

    fn local(&self, state: &State, var: usize) -> Inferred {
        Flow::local(self, state, var)
    }

    fn field(&self, state: &State, var: usize, key: &FieldKey) -> Option<Inferred> {
        Flow::field(self, state, var, key)
    }

    fn element(&self, state: &State, var: usize, key: &FieldKey) -> Option<Inferred> {
        let key = match key {
            FieldKey::Name(name) => Key::Name(name.clone()),
            FieldKey::Index(i) => Key::Number(*i as f64),
            FieldKey::Len
            | FieldKey::Elements
            | FieldKey::NamesKnown
            | FieldKey::Anywhere
            | FieldKey::LenOf(_) => {
                return None;
            }
        };
        let value = Flow::local(self, state, var);
        Some(self.types.index(&value, Some(&key)))
    }
}

impl Flow<'_, '_> {
    /// Whether the walk follows `var` in the function being walked.
    pub fn follows(&self, var: usize) -> bool {
        !self.types.escaping.contains(&var)
            && self.types.declared_in.get(&var).copied().unwrap_or(0) == self.function.get()
    }

    /// Whether the walk follows the fields of the local table `var`.
    pub fn follows_fields(&self, var: usize) -> bool {
        self.follows(var) && self.types.tracked.contains(&var)
    }

    /// The value of `var` in `state`.
    pub fn local(&self, state: &State, var: usize) -> Inferred {
        if !self.follows(var) {
            return self.types.var(var);
        }
        state
            .vars
            .get(&var)
            .cloned()
            .unwrap_or_else(|| self.types.var(var))
    }

    /// The value of `var.key` in `state`, if followed.
    pub fn field(&self, state: &State, var: usize, key: &FieldKey) -> Option<Inferred> {
        if !self.follows_fields(var) {
            return None;
        }
        let held = state.fields.get(&(var, key.clone())).cloned();
        if held.is_some() || !matches!(key, FieldKey::Name(_)) {
            return held;
        }
        // A name not held, of a table whose names are known: nil, or what
        // was stored at a key computed as a string.
        state.fields.get(&(var, FieldKey::NamesKnown))?;
        let stored = state.fields.get(&(var, FieldKey::Anywhere))?;
        Some(stored.clone().merge(Inferred::of(Ty::NIL)))
    }

    fn eval(&self, expr: &Expression, state: &State) -> Inferred {
        let env = FlowEnv {
            flow: self,
            state: Cow::Borrowed(state),
        };
        self.types.eval(expr, &env)
    }

    fn eval_chain(&self, prefix: &Prefix, suffixes: &[&Suffix], state: &State) -> Vec<Inferred> {
        let env = FlowEnv {
            flow: self,
            state: Cow::Borrowed(state),
        };
        self.types.chain_steps(prefix, suffixes, &env)
    }

    fn spend(&self) -> bool {
        let left = self.budget.get();
        if left == 0 {
            return false;
        }
        self.budget.set(left - 1);
        true
    }

    fn block(&self, block: &Block, mut state: State) -> State {
        for stmt in block.stmts() {
            if !state.live || !self.spend() {
                return State::dead();
            }
            state = self.stmt(stmt, state);
        }
        if !state.live {
            return state;
        }
        match block.last_stmt() {
            Some(LastStmt::Return(ret)) => {
                let values: Vec<Inferred> =
                    ret.returns().iter().map(|e| self.eval(e, &state)).collect();
                let first = match ret.returns().iter().next() {
                    Some(Expression::Symbol(t)) if t.token().to_string() == "..." => {
                        Inferred::any()
                    }
                    Some(_) => values.into_iter().next().unwrap_or_else(Inferred::any),
                    None => Inferred::of(Ty::NIL),
                };
                self.returning(first);
                State::dead()
            }
            Some(LastStmt::Break(_)) => {
                if let Some(breaks) = self.breaks.borrow_mut().last_mut() {
                    *breaks = std::mem::take(breaks).join(state);
                }
                State::dead()
            }
            _ => state,
        }
    }

    /// The followed fields of the local table `table` read at `token`,
    /// joined over every time the walk reads it there.
    fn record_fields(&self, token: &TokenReference, table: usize, state: &State) {
        let fields: HashMap<FieldKey, Inferred> = state
            .fields
            .iter()
            .filter(|((t, _), _)| *t == table)
            .map(|((_, key), value)| (key.clone(), value.clone()))
            .collect();
        match self
            .fields_at
            .borrow_mut()
            .entry(super::eval::token_key(token))
        {
            Entry::Occupied(mut e) => {
                let old = std::mem::take(e.get_mut());
                let mut theirs = fields;
                let joined = old
                    .into_iter()
                    .filter_map(|(key, value)| {
                        Some((key.clone(), value.merge(theirs.remove(&key)?)))
                    })
                    .collect();
                e.insert(joined);
            }
            Entry::Vacant(e) => {
                e.insert(fields);
            }
        }
    }

    /// Walks the body of a function written at this point.
    pub fn function(&self, body: &FunctionBody) {
        let key = std::ptr::from_ref(body) as usize;
        let started = self.tick();
        self.times
            .borrow_mut()
            .entry(key)
            .or_insert((started, started));
        let saved = self.function.replace(key);
        let saved_breaks = self.breaks.take();
        let mut state = State::start();
        let received = self.types.params.get(&(std::ptr::from_ref(body) as usize));
        let names = body.parameters().iter().filter_map(|p| match p {
            Parameter::Name(name) => Some(name),
            _ => None,
        });
        for (i, name) in names.enumerate() {
            if let Some(var) = self.types.local(name)
                && self.follows(var)
            {
                let value = received
                    .and_then(|values| values.get(i))
                    .cloned()
                    .unwrap_or_else(Inferred::any);
                state.vars.insert(var, value);
            }
        }
        let end = self.block(body.block(), state);
        // Falling off the end returns nothing: nil.
        if end.live {
            self.returning(Inferred::of(Ty::NIL));
        }
        self.breaks.replace(saved_breaks);
        self.function.set(saved);
        let ended = self.tick();
        if let Some(times) = self.times.borrow_mut().get_mut(&key) {
            times.1 = ended;
        }
    }

    /// The function being walked may return `value` (its first value).
    fn returning(&self, value: Inferred) {
        let function = self.function.get();
        if function == 0 {
            return;
        }
        match self.returns.borrow_mut().entry(function) {
            Entry::Occupied(mut e) => {
                let old = e.get().clone();
                e.insert(old.merge(value));
            }
            Entry::Vacant(e) => {
                e.insert(value);
            }
        }
    }

    /// Sets the local named by `token` to `value`, from `expr` if known.
    fn assign(
        &self,
        state: &mut State,
        token: &TokenReference,
        value: Inferred,
        expr: Option<&Expression>,
    ) {
        let Some(var) = self.types.local(token) else {
            return;
        };
        if !self.follows(var) {
            return;
        }
        let empty = may_be_empty_reply(&value);
        state.set(var, value);
        if !self.follows_fields(var) {
            return;
        }
        if let Some(Expression::TableConstructor(table)) = expr.map(unparenthesized) {
            let fields = self.constructor_fields(table);
            // No computed key: every name of the table is held.
            if !fields.is_empty() {
                state
                    .fields
                    .insert((var, FieldKey::NamesKnown), Inferred::of(Ty::TRUE));
            }
            for (key, value) in fields {
                state.fields.insert((var, key), value);
            }
            for field in table.fields() {
                if let Field::NameKey { key, value, .. } = field {
                    let name = key.token().to_string();
                    let inferred = self.at.borrow().get(&expr_key(value)).cloned();
                    if let Some(inferred) = inferred {
                        self.set_list_length(state, var, &name, &inferred, Some(value));
                    }
                }
            }
        } else if empty {
            // A list reply: its length, which a test (`#t == 0`) narrows.
            state.fields.insert(
                (var, FieldKey::Len),
                Inferred::of(Ty::INT).within(Range::new(0.0, f64::INFINITY)),
            );
        }
    }

    /// The fields a constructor sets, from the values recorded for it.
    fn constructor_fields(&self, table: &TableConstructor) -> Vec<(FieldKey, Inferred)> {
        let at = self.at.borrow();
        let value_of = |expr: &Expression| {
            at.get(&expr_key(expr))
                .cloned()
                .unwrap_or_else(Inferred::any)
        };
        let mut fields = Vec::new();
        let mut position = 0i64;
        let mut may_hole = false;
        let mut open_end = false;
        let count = table.fields().len();
        for (i, field) in table.fields().iter().enumerate() {
            match field {
                Field::NoKey(value) => {
                    position += 1;
                    // A call last gives any number of values, the first here.
                    open_end |= i + 1 == count && super::summary::is_multi(value);
                    let value = value_of(value);
                    may_hole |= value.ty.intersects(Ty::NIL);
                    fields.push((FieldKey::Index(position), value));
                }
                Field::NameKey { key, value, .. } => {
                    fields.push((FieldKey::Name(key.token().to_string()), value_of(value)));
                }
                Field::ExpressionKey { key, value, .. } => {
                    let key = match unparenthesized(key) {
                        Expression::String(token) => {
                            crate::calls::string_value(token).map(Key::Name)
                        }
                        Expression::Number(token) => super::number(token).map(Key::Number),
                        _ => None,
                    };
                    match key.as_ref().and_then(FieldKey::of) {
                        Some(key) => fields.push((key, value_of(value))),
                        // A computed key may be any field.
                        None => return Vec::new(),
                    }
                }
                #[allow(unreachable_patterns)]
                _ => return Vec::new(),
            }
        }
        // What `ipairs` gives: the list's values (a call last gives
        // unknown ones).
        let mut elements = Inferred::of(Ty::EMPTY);
        for (key, value) in &fields {
            if let FieldKey::Index(_) = key {
                elements = elements.merge(value.clone());
            }
        }
        if open_end {
            elements = elements.merge(Inferred::any());
        }
        let n = position as f64;
        let len = if open_end {
            Range::new((n - 1.0).max(0.0), f64::INFINITY)
        } else if may_hole {
            Range::new(0.0, n)
        } else {
            Range::exact(n)
        };
        // Keys that are numbers as well as positions: `#t` is not known.
        if !fields
            .iter()
            .any(|(k, _)| matches!(k, FieldKey::Index(i) if *i > position || *i < 1))
        {
            fields.push((FieldKey::Len, Inferred::of(Ty::INT).within(len)));
        }
        fields.push((FieldKey::Elements, elements));
        fields
    }

    fn stmt(&self, stmt: &Stmt, mut state: State) -> State {
        match stmt {
            Stmt::LocalAssignment(local) => {
                let exprs: Vec<&Expression> = local.expressions().iter().collect();
                let values: Vec<Inferred> = exprs.iter().map(|e| self.eval(e, &state)).collect();
                let mut state = self.assigned_effects(&exprs, state);
                let names: Vec<&TokenReference> = local.names().iter().collect();
                for (i, name) in names.iter().enumerate() {
                    let value = self
                        .unpacked(&exprs, &state, i)
                        .unwrap_or_else(|| adjusted(&exprs, &values, i));
                    self.assign(&mut state, name, value, exprs.get(i).copied());
                }
                state
            }
            Stmt::Assignment(assignment) => {
                let exprs: Vec<&Expression> = assignment.expressions().iter().collect();
                let values: Vec<Inferred> = exprs.iter().map(|e| self.eval(e, &state)).collect();
                let targets: Vec<&Var> = assignment.variables().iter().collect();
                for target in &targets {
                    if let Var::Expression(var) = target {
                        let suffixes: Vec<&Suffix> = var.suffixes().collect();
                        self.eval_chain(var.prefix(), &suffixes, &state);
                    }
                }
                let mut state = self.assigned_effects(&exprs, state);
                for (i, target) in targets.iter().enumerate() {
                    let value = self
                        .unpacked(&exprs, &state, i)
                        .unwrap_or_else(|| adjusted(&exprs, &values, i));
                    match target {
                        Var::Name(token) => {
                            self.assign(&mut state, token, value, exprs.get(i).copied())
                        }
                        Var::Expression(var) => {
                            self.store(&mut state, var, value, exprs.get(i).copied())
                        }
                        #[allow(unreachable_patterns)]
                        _ => {}
                    }
                }
                state
            }
            Stmt::FunctionCall(call) => self.call_statement(call, state),
            Stmt::Do(block) => self.block(block.block(), state),
            Stmt::If(if_stmt) => {
                let cond = if_stmt.condition();
                self.eval(cond, &state);
                let mut out = self.block(if_stmt.block(), narrow(self, cond, &state, true));
                let mut rest = narrow(self, cond, &state, false);
                for else_if in if_stmt.else_if().into_iter().flatten() {
                    let cond = else_if.condition();
                    self.eval(cond, &rest);
                    let branch = self.block(else_if.block(), narrow(self, cond, &rest, true));
                    out = out.join(branch);
                    rest = narrow(self, cond, &rest, false);
                }
                match if_stmt.else_block() {
                    Some(block) => out.join(self.block(block, rest)),
                    None => out.join(rest),
                }
            }
            Stmt::While(while_loop) => {
                let cond = while_loop.condition();
                self.fixed_point(state, |head| {
                    self.eval(cond, head);
                    let out = self.block(while_loop.block(), narrow(self, cond, head, true));
                    (out, narrow(self, cond, head, false))
                })
            }
            Stmt::Repeat(repeat) => {
                let cond = repeat.until();
                self.fixed_point(state, |head| {
                    let out = self.block(repeat.block(), head.clone());
                    if !out.live {
                        return (out, State::dead());
                    }
                    self.eval(cond, &out);
                    (
                        narrow(self, cond, &out, false),
                        narrow(self, cond, &out, true),
                    )
                })
            }
            Stmt::NumericFor(for_loop) => {
                let start = self.eval(for_loop.start(), &state);
                let end = self.eval(for_loop.end(), &state);
                let step = for_loop.step().map(|s| self.eval(s, &state));
                let integral =
                    start.ty.subset(Ty::INT) && step.as_ref().is_none_or(|s| s.ty.subset(Ty::INT));
                let ascending = step.as_ref().is_none_or(|s| s.range.lo > 0.0);
                let descending = step.as_ref().is_some_and(|s| s.range.hi < 0.0);
                let range = if ascending {
                    Range::new(start.range.lo, end.range.hi)
                } else if descending {
                    Range::new(end.range.lo, start.range.hi)
                } else {
                    Range::ANY
                };
                let index = Inferred::of(if integral { Ty::INT } else { Ty::NUMBER }).within(range);
                let name = for_loop.index_variable();
                let over = self.length_of_reply(for_loop.end());
                self.looping(over, || {
                    self.fixed_point(state, |head| {
                        let mut entry = head.clone();
                        self.assign(&mut entry, name, index.clone(), None);
                        (self.block(for_loop.block(), entry), head.clone())
                    })
                })
            }
            Stmt::GenericFor(for_loop) => {
                let exprs: Vec<&Expression> = for_loop.expressions().iter().collect();
                for expr in &exprs {
                    self.eval(expr, &state);
                }
                let (key, value, over) = self.iteration(&exprs, &state);
                let names: Vec<&TokenReference> = for_loop.names().iter().collect();
                self.looping(over, || {
                    self.fixed_point(state, |head| {
                        let mut entry = head.clone();
                        for (i, name) in names.iter().enumerate() {
                            let value = match i {
                                0 => key.clone(),
                                1 => value.clone(),
                                _ => Inferred::any(),
                            };
                            self.assign(&mut entry, name, value, None);
                        }
                        (self.block(for_loop.block(), entry), head.clone())
                    })
                })
            }
            Stmt::LocalFunction(local) => {
                self.assign(&mut state, local.name(), Inferred::of(Ty::FUNCTION), None);
                self.function(local.body());
                state
            }
            Stmt::FunctionDeclaration(decl) => {
                let name = decl.name();
                if name.names().len() == 1
                    && name.method_name().is_none()
                    && let Some(first) = name.names().iter().next()
                {
                    self.assign(&mut state, first, Inferred::of(Ty::FUNCTION), None);
                }
                self.function(decl.body());
                state
            }
            #[allow(unreachable_patterns)]
            _ => state,
        }
    }
}

/// The `i`-th value of an assignment of `exprs` (Lua's adjustment: a call
/// or `...` in last place gives any number of values, missing ones are nil).
fn adjusted(exprs: &[&Expression], values: &[Inferred], i: usize) -> Inferred {
    match values.get(i) {
        Some(value) => value.clone(),
        None if exprs.last().is_some_and(|e| super::summary::is_multi(e)) => Inferred::any(),
        None => Inferred::of(Ty::NIL),
    }
}

/// Commands whose list reply is never empty: TIME's two numbers, a SCAN
/// page's cursor and page, a value per key or field asked for.
const NEVER_EMPTY: &[&str] = &[
    "TIME",
    "SCAN",
    "HSCAN",
    "SSCAN",
    "ZSCAN",
    "MGET",
    "HMGET",
    "SMISMEMBER",
    "ZMSCORE",
];

/// Whether `value` is a command's list reply (an array, or a flat list of
/// pairs) that may be empty: a range, a set's members, a search.
pub(crate) fn may_be_empty_reply(value: &Inferred) -> bool {
    matches!(
        &value.origin,
        Some(Origin::Reply { command, pcall: false, .. }) if !NEVER_EMPTY.contains(&command.as_str())
    ) && value.ty.within(Ty::ARRAY.union(Ty::PAIRS))
}
