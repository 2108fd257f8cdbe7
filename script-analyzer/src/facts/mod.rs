//! The value-fact engine: what each expression of a script may be, where
//! it is evaluated, on top of the reply table ([`replies`](crate::replies)).
//!
//! The engine is sound rather than clever: what it claims holds on every
//! run, and what it does not know is [`Ty::ANY`], so that a lint that asks
//! "can this value be `false` here?" gets "maybe".
//!
//! - An abstract value ([`Inferred`]) is a set of Lua types ([`Ty`]: nil,
//!   false, integer, fraction, string, reply tables...), the numeric range
//!   it lies in once converted to a number ([`Range`]), and where it comes
//!   from ([`Origin`]: the command whose reply it is, the input it is built
//!   from, the division that made it fractional). Lints name the origin in
//!   their messages.
//! - The flow walk follows the statements in order: locals and
//!   their reassignments, the fields of local tables that never escape
//!   (`t.x = redis.call(...)`, `t[1]`, and every value stored at a
//!   position, which `ipairs(t)` and `t[i]` give back; a name set on one
//!   path only of a table whose names are all known is kept where paths
//!   join, as maybe nil; a name such a table does not hold is nil or a
//!   value stored at a key computed as a string, `t[raw[i]] = raw[i + 1]`;
//!   the length of a command's list reply held in a field, `#t.items`),
//!   `if` branches and
//!   `and` / `or`
//!   with narrowing (`if v then` removes `false` and nil from `v`, and
//!   nothing else: a string stays a string), early exits (`return`,
//!   `error`, `break`), and loops to a fixed point (with widening of the
//!   numeric ranges). Each expression's value is recorded where it is
//!   evaluated; [`Types::of`] reads it.
//! - A call of the script's own function (`local function f`, `local f =
//!   function`, a local assigned nothing else; `function T.f` or `function
//!   T:f` of a local table, its field set nowhere else) gives what the
//!   function returns, walked with unknown parameters: the types and the
//!   reply they come from (not as the reason they may be `false`: the
//!   script is taken to reason about what its functions give, so that
//!   reply is [`Origin::Trusted`]), not number hazards computed over the
//!   parameters. A
//!   function that may end without `return` gives nil too. When every
//!   call of such a function is seen, its parameters receive what the
//!   calls pass (`params`), and the script is walked again with them.
//! - Keys the script writes with literal numbers give their range to what
//!   reading them back replies (`seeds`).
//! - What the order of events cannot tell is taken from the summary:
//!   every value assigned to a local anywhere. An upvalue
//!   read inside a function has its summary value (the function may run at
//!   any time), and so has a local that a nested function assigns.
//! - Replies are RESP2's, or RESP3's ([`Protocol::Resp3`]) when the script
//!   switches with `redis.setresp(3)`. That is decided for the whole script,
//!   not statement by statement: RESP3 when every mention of `setresp` is a
//!   `redis.setresp(3)` statement of the main chunk and the first of them
//!   comes before every `redis.call` in the text. Any other use of
//!   `setresp` (`setresp(2)`, a computed protocol, a switch inside a
//!   function or after a call, even a comment naming it) leaves replies
//!   untyped.
//! - `KEYS[n]` and `ARGV[n]` are strings, or nil past the declared counts
//!   (when the caller declares them and the script does not assign into
//!   `KEYS` / `ARGV`).
//! - A boolean made by a comparison, `not` or a literal carries that as
//!   its origin ([`Origin::Boolean`]) through locals, fields, loops and
//!   branches; a call of the script's own function does not pass it on.
//! - Elements of array replies have the type Redis gives them under RESP2:
//!   `redis.call('TIME')[1]` is a string of the seconds, each element of
//!   HGETALL, WITHSCORES or LRANGE is a string, and MGET's may be `false`.
//!
//! The engine imports nothing from the lints: they are queries over it.

mod eval;
mod flow;
mod narrow;
mod params;
mod protocol;
mod seeds;
mod state;
mod summary;
mod syntax;
pub(crate) mod unit;
mod value;

pub use protocol::{EXPIRE_QUERIES, display_name};
pub use summary::{Use, UseKind};
pub use syntax::{Key, index_key, number, unparenthesized};
pub use value::{Inferred, Origin, Range, Ty};

use crate::Span;
use crate::calls::RedisCall;
use crate::replies::Protocol;
use crate::scope::{Model, Resolution};
use eval::{Env, NodeKey, suffix_key};
use full_moon::ast::{Ast, Expression, Prefix, Suffix};
use full_moon::node::Node;
use full_moon::tokenizer::TokenReference;
use protocol::{protocol, reply_of};
use std::collections::{HashMap, HashSet};
use summary::{Def, Walker};
use syntax::call_end;

/// The values of a script's expressions and locals.
#[derive(Default)]
pub struct Types<'a> {
    source: &'a str,
    model: Option<&'a Model>,
    /// What was inferred (read through `Deref`).
    facts: Saved,
}

/// The facts of [`Types`] without the text and names they were inferred
/// from: what an editor's analysis keeps of a version of its script for
/// the next (the `incremental` module). Keys that are node addresses stay
/// valid while the trees are kept unmoved. Its fields are the analyzer's
/// own: [`Types`] reads them, nothing else does.
#[derive(Default)]
pub struct Saved {
    calls: HashMap<(usize, usize), RedisCall>,
    /// Every value each local takes anywhere (the summary).
    vars: HashMap<usize, Inferred>,
    defs_count: HashMap<usize, usize>,
    uses: HashMap<usize, Vec<Use>>,
    /// The value of each expression, local read and suffix where the flow
    /// walk evaluated it, joined over every time it did.
    at: HashMap<NodeKey, Inferred>,
    /// The followed fields of local tables where they are read as a whole,
    /// by name token.
    fields_at: HashMap<NodeKey, HashMap<FieldKey, Inferred>>,
    /// The function each local is declared in (the address of its body; 0
    /// for the main chunk).
    declared_in: HashMap<usize, usize>,
    /// Locals that a function other than their own assigns.
    escaping: HashSet<usize>,
    /// Local tables whose fields the flow walk follows: made by a
    /// constructor or returned by a call (a reply, a decoded document), or
    /// declared without a value and set so later,
    /// and only read, written and passed to library functions, in their
    /// own function.
    tracked: HashSet<usize>,
    /// The protocol of the replies, `None` when the script switches in a
    /// way the inference does not follow: replies are then not typed.
    protocol: Option<Protocol>,
    /// The script assigns into `KEYS` or `ARGV` (`ARGV[1] = tonumber(...)`):
    /// their elements are then not surely strings.
    inputs_assigned: bool,
    /// The keys and arguments the caller passes, if declared: the others
    /// are nil.
    declared: Option<crate::Declared>,
    /// Keys the script writes with literal numbers.
    seeds: seeds::Seeds,
    /// The body (its address) of the one function each local holds, for
    /// locals assigned only that function.
    bodies: HashMap<usize, usize>,
    /// The function each field of a local table always holds (`function
    /// T.name(...)`, `function T:name(...)`, set once and never stored
    /// into otherwise), by table and name: the body's address.
    field_bodies: HashMap<(usize, String), usize>,
    /// The number of named parameters of each function, by body.
    parameter_counts: HashMap<usize, usize>,
    /// What the parameters of a function whose every call is seen
    /// receive, by body ([`params`]).
    params: HashMap<usize, Vec<Inferred>>,
    /// Tables held in a named field of a local that may change where the
    /// walk does not see it (their length is not followed).
    nested_changed: HashSet<(usize, String)>,
    /// How the values were found, for an editor's analysis of a change
    /// (the `incremental` module).
    walks: Walks,
}

impl std::ops::Deref for Types<'_> {
    type Target = Saved;

    fn deref(&self) -> &Saved {
        &self.facts
    }
}

impl std::ops::DerefMut for Types<'_> {
    fn deref_mut(&mut self) -> &mut Saved {
        &mut self.facts
    }
}

impl<'a> Types<'a> {
    /// The facts, without the text and names.
    pub(crate) fn save(self) -> Saved {
        self.facts
    }

    /// The facts `saved`, of `source` with the names `model`.
    pub(crate) fn restore(facts: Saved, source: &'a str, model: &'a Model) -> Types<'a> {
        Types {
            source,
            model: Some(model),
            facts,
        }
    }

    /// Replaces the `redis.call` sites in bytes `start..end` with `new`,
    /// all the sites being then `all`, and the main chunk `ast`: whether
    /// the protocol of the replies and the keys seeded stay as they were.
    pub(crate) fn replace_calls(
        &mut self,
        (start, end): (usize, usize),
        new: &[RedisCall],
        all: &[RedisCall],
        ast: &Ast,
    ) -> bool {
        self.calls.retain(|(s, _), _| !(start <= *s && *s < end));
        self.calls.extend(
            new.iter()
                .map(|c| ((c.span.start.offset, c.span.end.offset), c.clone())),
        );
        let protocol = protocol(self.source, ast, all);
        let seeds = seeds::Seeds::of(self.source, all);
        protocol == self.protocol && seeds == self.seeds
    }
}

/// How [`Types::build`] went.
#[derive(Default)]
pub(crate) struct Walks {
    /// The summary's fixed point was reached (otherwise every local is
    /// unknown).
    pub settled: bool,
    /// The first flow walk (the script's own functions' parameters
    /// unknown), unless it gave up.
    pub first: Option<WalkRecord>,
    /// The second one (with what the parameters receive), when made and
    /// it did not give up.
    pub second: Option<WalkRecord>,
    /// A second walk was made and gave up.
    pub second_gave_up: bool,
}

/// What a flow walk found besides the values.
pub(crate) struct WalkRecord {
    /// What each function returns (its first value), by body.
    pub returns: HashMap<usize, Inferred>,
    /// When each function's walk started first and ended last, by body.
    pub times: HashMap<usize, (usize, usize)>,
    /// The statements it visited.
    pub spent: usize,
}

impl WalkRecord {
    fn of(walked: &mut flow::Walked) -> WalkRecord {
        WalkRecord {
            returns: std::mem::take(&mut walked.returns),
            times: std::mem::take(&mut walked.times),
            spent: walked.spent,
        }
    }
}

/// What is known of a local table where it is read ([`Types::table_fields`]).
#[derive(Clone, Debug, Default)]
pub struct TableFields {
    /// The named fields set on some path (`t.count = n`), sorted. A name
    /// set on some paths only has a value that may be nil.
    pub names: Vec<String>,
    /// The same, with their values.
    pub names_with_values: Vec<(String, Inferred)>,
    /// The elements known, by index.
    pub elements: Vec<(i64, Inferred)>,
    /// The length of the array part, if known.
    pub len: Option<Range>,
    /// The command reply the table was filled from, one element per round
    /// of a loop over it: the table may be as long as that reply.
    pub filled_from: Option<Origin>,
    /// The lengths of the command list replies held in named fields
    /// (`t.items = redis.call('LRANGE', ...)`), by name.
    pub list_lengths: Vec<(String, Range)>,
}

/// A field of a local table, as the flow walk follows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FieldKey {
    /// `t.name`, `t['name']`.
    Name(String),
    /// `t[3]`.
    Index(i64),
    /// `#t`, the length of the array part.
    Len,
    /// Every value stored at a position (`t[i]`, `table.insert(t, v)`,
    /// a constructor's list), joined: what `ipairs(t)` and `t[i]` give.
    Elements,
    /// The length of the list held at `t.name` (a command's list reply
    /// stored there), when nothing but a store changes that list.
    LenOf(String),
    /// A marker: the table's named fields are all held (it was made by a
    /// constructor with literal keys, and stored into at literal names
    /// only since), so a name not held is nil. Where paths join, a name
    /// set on one path only is kept, as maybe nil, when the other path
    /// holds this marker.
    NamesKnown,
    /// Every value stored at a key surely a string but not written in the
    /// script (`t[reply[i]] = reply[i + 1]`), joined: with
    /// [`FieldKey::NamesKnown`], what a name the table does not hold may
    /// be, besides nil.
    Anywhere,
}

impl FieldKey {
    /// The field a literal key names.
    fn of(key: &Key) -> Option<FieldKey> {
        match key {
            Key::Name(name) => Some(FieldKey::Name(name.clone())),
            Key::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
                Some(FieldKey::Index(*n as i64))
            }
            Key::Number(_) => None,
        }
    }
}

/// The SCAN family, whose reply starts with a cursor.
const SCANS: &[&str] = &["SCAN", "SSCAN", "HSCAN", "ZSCAN"];

/// Rounds of the summary's fixed point before giving up (then: unknown).
const MAX_ROUNDS: usize = 40;

/// The summary's view of the locals: those being worked out, then the
/// others, settled already.
struct SummaryEnv<'m>(&'m HashMap<usize, Inferred>, &'m HashMap<usize, Inferred>);

impl Env for SummaryEnv<'_> {
    fn local(&self, _types: &Types<'_>, _token: &TokenReference, var: usize) -> Inferred {
        self.0
            .get(&var)
            .or_else(|| self.1.get(&var))
            .cloned()
            .unwrap_or_else(Inferred::any)
    }
}

/// What the flow walk recorded, with the summary for what it did not.
struct Recorded;

impl Env for Recorded {
    fn local(&self, types: &Types<'_>, token: &TokenReference, var: usize) -> Inferred {
        types
            .at
            .get(&eval::token_key(token))
            .cloned()
            .unwrap_or_else(|| types.var(var))
    }
}

/// [`Recorded`], reading the recorded values of whole expressions too.
struct RecordedWith<'t, 'a>(&'t Types<'a>);

impl Env for RecordedWith<'_, '_> {
    fn local(&self, types: &Types<'_>, token: &TokenReference, var: usize) -> Inferred {
        Recorded.local(types, token, var)
    }

    fn known(&self, at: NodeKey) -> Option<Inferred> {
        self.0.at.get(&at).cloned()
    }
}

impl<'a> Types<'a> {
    /// Infers the values of `ast`, for a caller that passes the keys and
    /// arguments `declared` counts (`None`: not known).
    pub fn build(
        source: &'a str,
        ast: &'a Ast,
        model: &'a Model,
        calls: &[RedisCall],
        declared: Option<crate::Declared>,
    ) -> Types<'a> {
        let mut types = Types::restore(
            Saved {
                declared,
                calls: calls
                    .iter()
                    .map(|c| ((c.span.start.offset, c.span.end.offset), c.clone()))
                    .collect(),
                protocol: protocol(source, ast, calls),
                seeds: seeds::Seeds::of(source, calls),
                ..Saved::default()
            },
            source,
            model,
        );
        let mut walker = Walker::new(&types);
        walker.block(ast.nodes());
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
        types.nested_changed = nested_changed;
        types.inputs_assigned = inputs_assigned;
        let (vars, settled) = summary_values(&types, &defs, &HashMap::new());
        types.vars = vars;
        types.walks.settled = settled;
        types.defs_count = defs.iter().map(|(var, d)| (*var, d.len())).collect();
        // A function a local always holds: its calls give what it returns.
        types.bodies = bodies
            .into_iter()
            .filter(|(var, _)| types.defs_count.get(var) == Some(&1))
            .collect();
        // A function a table's field always holds: set once, by a
        // declaration, in a table a local always holds.
        types.field_bodies = field_functions
            .into_iter()
            .filter_map(|((table, name), bodies)| match bodies[..] {
                [body] if body != 0 && types.defs_count.get(&table) == Some(&1) => {
                    Some(((table, name), body))
                }
                _ => None,
            })
            .collect();
        types.parameter_counts = parameter_counts;
        types.tracked = uses
            .iter()
            .filter(|(var, uses)| !foreign.contains(var) && only_read_as_a_table(uses))
            .map(|(var, _)| *var)
            .chain(defs.keys().filter(|v| !uses.contains_key(v)).copied())
            .filter(|var| defs.get(var).is_some_and(|defs| made_as_a_table(defs)))
            .collect();
        types.uses = uses;
        types.declared_in = declared_in;
        types.escaping = escaping;
        if let Some(mut walked) = flow::walk(&types, ast) {
            let params = params::of_calls(&types, ast, &walked.at);
            types.walks.first = Some(WalkRecord::of(&mut walked));
            types.at = walked.at;
            types.fields_at = walked.fields_at;
            // Again, with what the script's own functions receive.
            if !params.is_empty() {
                types.params = params;
                match flow::walk(&types, ast) {
                    Some(mut walked) => {
                        types.walks.second = Some(WalkRecord::of(&mut walked));
                        types.at = walked.at;
                        types.fields_at = walked.fields_at;
                    }
                    None => {
                        types.params.clear();
                        types.walks.second_gave_up = true;
                    }
                }
            }
        }
        types
    }

    /// What `expr` may be, where it is evaluated.
    pub fn of(&self, expr: &Expression) -> Inferred {
        self.eval(expr, &RecordedWith(self))
    }

    /// The value after the prefix, then after each suffix: `steps[0]` is the
    /// prefix's, `steps[i]` the value after `suffixes[i - 1]`.
    pub fn chain<'s>(
        &self,
        prefix: &Prefix,
        suffixes: impl IntoIterator<Item = &'s Suffix>,
    ) -> Vec<Inferred> {
        let suffixes: Vec<&Suffix> = suffixes.into_iter().collect();
        let mut steps = self.chain_steps(prefix, &suffixes, &RecordedWith(self));
        // Steps the walk recorded are where they were evaluated.
        for (i, suffix) in suffixes.iter().enumerate() {
            if let (Some(known), Some(step)) =
                (self.at.get(&suffix_key(suffix)), steps.get_mut(i + 1))
            {
                *step = known.clone();
            }
        }
        steps
    }

    /// The local variable `token` names, if it is one.
    pub fn local(&self, token: &TokenReference) -> Option<usize> {
        match self.model?.resolve(token)? {
            Resolution::Local(i) => Some(i),
            Resolution::Global => None,
        }
    }

    /// Every use of the local `var`.
    pub fn uses(&self, var: usize) -> &[Use] {
        self.uses.get(&var).map_or(&[], Vec::as_slice)
    }

    /// How many values are assigned to `var` (its initializer included).
    pub fn assignments(&self, var: usize) -> usize {
        self.defs_count.get(&var).copied().unwrap_or(0)
    }

    /// Every value the local `var` takes anywhere in the script.
    pub fn var(&self, var: usize) -> Inferred {
        self.vars.get(&var).cloned().unwrap_or_else(Inferred::any)
    }

    /// The `redis.call` at exactly `start..end`.
    pub fn call_at(&self, start: usize, end: usize) -> Option<&RedisCall> {
        self.calls.get(&(start, end))
    }

    /// What is known of the fields of the local table `expr` names, where
    /// it is read (`return t`, `cjson.encode(t)`): the named fields set on
    /// every path, the elements `t[1]`, `t[2]`..., and the length of the
    /// array part. `None` when the table is not followed.
    pub fn table_fields(&self, expr: &Expression) -> Option<TableFields> {
        let Expression::Var(full_moon::ast::Var::Name(token)) = unparenthesized(expr) else {
            return None;
        };
        let fields = self.fields_at.get(&eval::token_key(token))?;
        let mut table = TableFields::default();
        for (key, value) in fields {
            match key {
                FieldKey::Name(name) => {
                    table.names.push(name.clone());
                    table.names_with_values.push((name.clone(), value.clone()));
                }
                FieldKey::Index(i) => table.elements.push((*i, value.clone())),
                FieldKey::Len => {
                    table.len = Some(value.range);
                    table.filled_from = value.origin.clone();
                }
                FieldKey::LenOf(name) => table.list_lengths.push((name.clone(), value.range)),
                FieldKey::Elements | FieldKey::NamesKnown | FieldKey::Anywhere => {}
            }
        }
        table.names.sort();
        table.names_with_values.sort_by(|a, b| a.0.cmp(&b.0));
        table.elements.sort_by_key(|(i, _)| *i);
        Some(table)
    }

    /// The length of the command list reply held in the field `expr`
    /// names (`t.items`, of a followed local table), where it is read.
    /// `None` when it is not followed.
    pub fn list_length(&self, expr: &Expression) -> Option<Range> {
        let Expression::Var(full_moon::ast::Var::Expression(var)) = unparenthesized(expr) else {
            return None;
        };
        let Prefix::Name(token) = var.prefix() else {
            return None;
        };
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        let [Suffix::Index(index)] = suffixes.as_slice() else {
            return None;
        };
        let Some(Key::Name(name)) = index_key(index) else {
            return None;
        };
        self.fields_at
            .get(&eval::token_key(token))?
            .get(&FieldKey::LenOf(name))
            .map(|len| len.range)
    }

    /// The command whose list reply `expr` is, written in place
    /// (`redis.call('LRANGE', ...)`), when that reply may be empty.
    pub fn inline_list_reply(&self, expr: &Expression) -> Option<String> {
        let expr = unparenthesized(expr);
        if !matches!(expr, Expression::FunctionCall(_)) {
            return None;
        }
        let value = self.of(expr);
        match &value.origin {
            Some(Origin::Reply { command, span, .. })
                if (span.start.offset, span.end.offset) == {
                    let at = self.span(expr);
                    (at.start.offset, at.end.offset)
                } && flow::may_be_empty_reply(&value) =>
            {
                Some(command.clone())
            }
            _ => None,
        }
    }

    /// The protocol of the script's replies, if the engine follows it.
    pub fn protocol(&self) -> Option<Protocol> {
        self.protocol
    }

    fn span(&self, node: &impl Node) -> Span {
        crate::node_range::node_span(self.source, node)
    }
}

/// Whether a local's uses let its table be followed: it is only indexed,
/// given to a library function or a command, returned or tested.
fn only_read_as_a_table(uses: &[Use]) -> bool {
    uses.iter().all(|u| {
        matches!(
            u.kind,
            UseKind::Index(_)
                | UseKind::Library(_)
                | UseKind::Returned
                | UseKind::CommandArg
                | UseKind::Tested
        )
    })
}

/// Whether every definition of a local makes a table that can be
/// followed: a constructor, a call's result, or `local t` (set on the
/// paths that follow).
fn made_as_a_table(defs: &[Def<'_>]) -> bool {
    defs.iter().all(|d| match d {
        Def::Expr(e) => matches!(
            unparenthesized(e),
            Expression::TableConstructor(_) | Expression::FunctionCall(_)
        ),
        Def::Value(ty) => *ty == Ty::NIL,
    })
}

/// The summary: for each local, every value assigned to it anywhere, as a
/// fixed point (numeric ranges widened as they grow).
fn summary_values(
    types: &Types<'_>,
    defs: &HashMap<usize, Vec<Def<'_>>>,
    others: &HashMap<usize, Inferred>,
) -> (HashMap<usize, Inferred>, bool) {
    let mut env: HashMap<usize, Inferred> = defs
        .keys()
        .map(|&var| (var, Inferred::of(Ty::EMPTY)))
        .collect();
    let mut order: Vec<usize> = defs.keys().copied().collect();
    order.sort_unstable();
    for round in 0..MAX_ROUNDS {
        let mut changed = false;
        for var in &order {
            let mut acc: Option<Inferred> = None;
            for def in &defs[var] {
                let value = match def {
                    Def::Expr(expr) => types.eval(expr, &SummaryEnv(&env, others)),
                    Def::Value(ty) => Inferred::of(*ty),
                };
                acc = Some(match acc {
                    None => value,
                    Some(acc) => acc.merge(value),
                });
            }
            let mut acc = acc.unwrap_or_else(Inferred::any);
            let old = env
                .get(var)
                .cloned()
                .unwrap_or_else(|| Inferred::of(Ty::EMPTY));
            if round > 0 && old.ty != Ty::EMPTY && old.range != acc.range {
                acc.range = old.range.widen(old.range.hull(acc.range));
            }
            if old.ty != acc.ty || old.range != acc.range {
                changed = true;
            }
            env.insert(*var, acc);
        }
        if !changed {
            return (env, true);
        }
    }
    env.values_mut().for_each(|v| *v = Inferred::any());
    (env, false)
}

#[cfg(test)]
mod tests;
