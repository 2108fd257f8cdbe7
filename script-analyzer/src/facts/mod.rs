//! The value-fact engine: what each expression of a script may be, where
//! it is evaluated, on top of the reply table ([`replies`]).
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
//!   (`t.x = redis.call(...)`, `t[1]`), `if` branches and `and` / `or`
//!   with narrowing (`if v then` removes `false` and nil from `v`, and
//!   nothing else: a string stays a string), early exits (`return`,
//!   `error`, `break`), and loops to a fixed point (with widening of the
//!   numeric ranges). Each expression's value is recorded where it is
//!   evaluated; [`Types::of`] reads it.
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
//! - Elements of array replies have the type Redis gives them under RESP2:
//!   `redis.call('TIME')[1]` is a string of the seconds, each element of
//!   HGETALL, WITHSCORES or LRANGE is a string, and MGET's may be `false`.
//!
//! The engine imports nothing from the lints: they are queries over it.

mod eval;
mod flow;
mod narrow;
mod state;
mod summary;
mod value;

pub use summary::{Use, UseKind};
pub use value::{Inferred, Origin, Range, Ty};

use crate::Span;
use crate::calls::{CallArg, RedisCall};
use crate::commands::ArgShape;
use crate::replies::{self, Protocol};
use crate::scope::{Model, Resolution};
use eval::{Env, NodeKey, suffix_key};
use full_moon::ast::{
    Ast, Call, Expression, FunctionArgs, FunctionCall, Index, Prefix, Stmt, Suffix,
};
use full_moon::node::Node;
use full_moon::tokenizer::{TokenReference, TokenType};
use std::collections::{HashMap, HashSet};
use summary::{Def, Walker};

/// The values of a script's expressions and locals.
#[derive(Default)]
pub struct Types<'a> {
    source: &'a str,
    model: Option<&'a Model>,
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
    /// constructor or returned by a call (a reply, a decoded document),
    /// and only read, written and passed to library functions, in their
    /// own function.
    tracked: HashSet<usize>,
    /// The protocol of the replies, `None` when the script switches in a
    /// way the inference does not follow: replies are then not typed.
    protocol: Option<Protocol>,
    /// The script assigns into `KEYS` or `ARGV` (`ARGV[1] = tonumber(...)`):
    /// their elements are then not surely strings.
    inputs_assigned: bool,
}

/// What is known of a local table where it is read ([`Types::table_fields`]).
#[derive(Clone, Debug, Default)]
pub struct TableFields {
    /// The named fields set on every path (`t.count = n`), sorted.
    pub names: Vec<String>,
    /// The same, with their values.
    pub names_with_values: Vec<(String, Inferred)>,
    /// The elements known, by index.
    pub elements: Vec<(i64, Inferred)>,
    /// The length of the array part, if known.
    pub len: Option<Range>,
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

/// The summary's view of the locals.
struct SummaryEnv<'m>(&'m HashMap<usize, Inferred>);

impl Env for SummaryEnv<'_> {
    fn local(&self, _types: &Types<'_>, _token: &TokenReference, var: usize) -> Inferred {
        self.0.get(&var).cloned().unwrap_or_else(Inferred::any)
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
    /// Infers the values of `ast`.
    pub fn build(
        source: &'a str,
        ast: &'a Ast,
        model: &'a Model,
        calls: &[RedisCall],
    ) -> Types<'a> {
        let mut types = Types {
            source,
            model: Some(model),
            calls: calls
                .iter()
                .map(|c| ((c.span.start.offset, c.span.end.offset), c.clone()))
                .collect(),
            protocol: protocol(source, ast, calls),
            ..Types::default()
        };
        let mut walker = Walker {
            types: &types,
            defs: HashMap::new(),
            uses: HashMap::new(),
            inputs_assigned: false,
            declared_in: HashMap::new(),
            escaping: HashSet::new(),
            foreign: HashSet::new(),
            functions: Vec::new(),
        };
        walker.block(ast.nodes());
        let Walker {
            defs,
            uses,
            inputs_assigned,
            declared_in,
            escaping,
            foreign,
            ..
        } = walker;
        types.inputs_assigned = inputs_assigned;
        types.vars = summary_values(&types, &defs);
        types.defs_count = defs.iter().map(|(var, d)| (*var, d.len())).collect();
        types.tracked = uses
            .iter()
            .filter(|(var, uses)| {
                !foreign.contains(var)
                    && uses.iter().all(|u| {
                        matches!(
                            u.kind,
                            UseKind::Index(_)
                                | UseKind::Library(_)
                                | UseKind::Returned
                                | UseKind::CommandArg
                                | UseKind::Tested
                        )
                    })
            })
            .map(|(var, _)| *var)
            .chain(defs.keys().filter(|v| !uses.contains_key(v)).copied())
            .filter(|var| {
                defs.get(var).is_some_and(|defs| {
                    defs.iter().all(|d| {
                        matches!(d, Def::Expr(e) if matches!(
                            unparenthesized(e),
                            Expression::TableConstructor(_) | Expression::FunctionCall(_)
                        ))
                    })
                })
            })
            .collect();
        types.uses = uses;
        types.declared_in = declared_in;
        types.escaping = escaping;
        if let Some(walked) = flow::walk(&types, ast) {
            types.at = walked.at;
            types.fields_at = walked.fields_at;
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
                FieldKey::Len => table.len = Some(value.range),
            }
        }
        table.names.sort();
        table.names_with_values.sort_by(|a, b| a.0.cmp(&b.0));
        table.elements.sort_by_key(|(i, _)| *i);
        Some(table)
    }

    /// The protocol of the script's replies, if the engine follows it.
    pub fn protocol(&self) -> Option<Protocol> {
        self.protocol
    }

    fn span(&self, node: &impl Node) -> Span {
        crate::node_range::node_span(self.source, node)
    }
}

/// The summary: for each local, every value assigned to it anywhere, as a
/// fixed point (numeric ranges widened as they grow).
fn summary_values(
    types: &Types<'_>,
    defs: &HashMap<usize, Vec<Def<'_>>>,
) -> HashMap<usize, Inferred> {
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
                    Def::Expr(expr) => types.eval(expr, &SummaryEnv(&env)),
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
            return env;
        }
    }
    env.values_mut().for_each(|v| *v = Inferred::any());
    env
}

/// Where a call suffix ends (its closing parenthesis, string or brace).
fn call_end(call: &Call) -> usize {
    let args = match call {
        Call::AnonymousCall(args) => &**args,
        Call::MethodCall(method) => method.args(),
        #[allow(unreachable_patterns)]
        _ => return 0,
    };
    args.end_position().map_or(0, |p| p.bytes())
}

/// The protocol of a script's replies (see the module's documentation).
fn protocol(source: &str, ast: &Ast, calls: &[RedisCall]) -> Option<Protocol> {
    let mentions = source.matches("setresp").count();
    if mentions == 0 {
        return Some(Protocol::Resp2);
    }
    let mut switches = Vec::new();
    for stmt in ast.nodes().stmts() {
        if let Stmt::FunctionCall(call) = stmt
            && is_setresp_3(call)
            && let Some((start, end)) = call.range()
        {
            switches.push((start.bytes(), end.bytes()));
        }
    }
    let first_end = switches.first()?.1;
    let all_before = calls.iter().all(|c| c.span.start.offset >= first_end);
    (switches.len() == mentions && all_before).then_some(Protocol::Resp3)
}

/// `redis.setresp(3)`, exactly.
fn is_setresp_3(call: &FunctionCall) -> bool {
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let (
        Prefix::Name(redis),
        [
            Suffix::Index(index),
            Suffix::Call(Call::AnonymousCall(args)),
        ],
    ) = (call.prefix(), suffixes.as_slice())
    else {
        return false;
    };
    if redis.token().to_string() != "redis"
        || index_key(index) != Some(Key::Name("setresp".to_string()))
    {
        return false;
    }
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return false;
    };
    let arguments: Vec<&Expression> = arguments.iter().collect();
    matches!(arguments.as_slice(), [Expression::Number(n)] if number(n) == Some(3.0))
}

/// The value a `redis.call` gives.
fn reply_of(call: &RedisCall, protocol: Protocol) -> Inferred {
    let shapes: Vec<ArgShape<'_>> = call.args.iter().map(CallArg::shape).collect();
    let Some(lua) = replies::of_call_in(protocol, &shapes) else {
        return Inferred::any();
    };
    let Some(command) = display_name(call) else {
        return Inferred::any();
    };
    Inferred::of(Ty::from_reply(lua, call.pcall)).with_origin(Origin::Reply {
        command,
        shape: lua,
        pcall: call.pcall,
        span: call.span,
    })
}

/// The command's name as messages show it: `EXISTS`, `OBJECT FREQ`.
pub fn display_name(call: &RedisCall) -> Option<String> {
    let name = call.command_name()?;
    let sub = call.args.get(1).and_then(CallArg::literal);
    Some(match sub {
        Some(sub) if replies::lookup(&format!("{name}|{sub}")).is_some() => {
            format!("{name} {sub}").to_ascii_uppercase()
        }
        _ => name.to_ascii_uppercase(),
    })
}

/// A literal index.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    /// `.name` or `['name']`.
    Name(String),
    /// `[3]`.
    Number(f64),
}

/// The literal key of an index, if it is one.
pub fn index_key(index: &Index) -> Option<Key> {
    match index {
        Index::Dot { name, .. } => Some(Key::Name(name.token().to_string())),
        Index::Brackets { expression, .. } => match &**expression {
            Expression::String(token) => match token.token_type() {
                TokenType::StringLiteral { literal, .. } => Some(Key::Name(literal.to_string())),
                _ => None,
            },
            Expression::Number(token) => number(token).map(Key::Number),
            _ => None,
        },
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A number literal's value.
pub fn number(token: &TokenReference) -> Option<f64> {
    let TokenType::Number { text } = token.token_type() else {
        return None;
    };
    let text = text.as_str();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    text.parse().ok()
}

/// `expr` without its parentheses.
pub fn unparenthesized(mut expr: &Expression) -> &Expression {
    while let Expression::Parentheses { expression, .. } = expr {
        expr = expression;
    }
    expr
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::{Tree, redis_calls};
    use crate::{parse, scope};
    use full_moon::ast::LastStmt;

    /// What the inference says about the main chunk's last `return`.
    fn returned(source: &str) -> Inferred {
        let ast = parse::parse(source).expect("parses");
        let model = scope::Model::build(&ast);
        let calls = redis_calls(&Tree {
            source,
            ast: &ast,
            model: &model,
        });
        let types = Types::build(source, &ast, &model, &calls);
        let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
            panic!("no return in {source}");
        };
        types.of(ret.returns().iter().next().expect("a value"))
    }

    fn ty(source: &str) -> Ty {
        returned(source).ty
    }

    #[test]
    fn literals_and_operators() {
        assert_eq!(ty("return 1"), Ty::INT);
        assert_eq!(ty("return 1.5"), Ty::FLOAT);
        assert_eq!(ty("return 'a' .. 1"), Ty::STRING);
        assert_eq!(ty("return 1 + 2 * 3 % 4"), Ty::INT);
        assert_eq!(ty("return 1 / 2"), Ty::NUMBER);
        assert_eq!(ty("return #KEYS"), Ty::INT);
        assert_eq!(ty("return 1 < 2"), Ty::BOOL);
        assert_eq!(ty("return not x"), Ty::BOOL);
        assert_eq!(ty("return nil"), Ty::NIL);
        assert_eq!(ty("return {}"), Ty::TABLE);
        assert_eq!(ty("return ARGV[1]"), Ty::STRING);
        assert_eq!(
            returned("local p = KEYS[2] return p").origin,
            Some(Origin::Input {
                name: "KEYS[2]".to_string()
            })
        );
        assert_eq!(ty("return x"), Ty::ANY);
        assert!(matches!(
            returned("return (ARGV[1] + 0) / 1000").origin,
            Some(Origin::Fraction { .. })
        ));
    }

    #[test]
    fn library_calls() {
        assert_eq!(ty("return tonumber(ARGV[1])"), Ty::NUMBER.union(Ty::NIL));
        assert_eq!(ty("return tonumber(ARGV[1]) or 0"), Ty::NUMBER);
        assert_eq!(ty("return tostring(1)"), Ty::STRING);
        assert_eq!(ty("return math.floor(1 / 2)"), Ty::INT);
        assert_eq!(ty("return math.max(1, 2)"), Ty::INT);
        assert_eq!(ty("return string.format('%d', 1)"), Ty::STRING);
        assert_eq!(ty("return ARGV[1]:sub(1, 2)"), Ty::STRING);
        assert_eq!(ty("return cjson.decode(ARGV[1])"), Ty::ANY);
    }

    #[test]
    fn replies_and_defaults() {
        let get = returned("return redis.call('GET', KEYS[1])");
        assert_eq!(get.ty, Ty::STRING.union(Ty::FALSE));
        assert_eq!(get.reply().map(|r| r.0), Some("GET"));
        assert_eq!(ty("return redis.call('GET', KEYS[1]) or '0'"), Ty::STRING);
        assert_eq!(
            ty("return redis.pcall('INCR', KEYS[1])"),
            Ty::INT.union(Ty::ERROR)
        );
        assert_eq!(ty("return redis.call('HGETALL', KEYS[1])"), Ty::PAIRS);
        assert_eq!(ty("return redis.call('SET', KEYS[1], 1).ok"), Ty::STRING);
        assert_eq!(ty("return redis.call('EVAL', 'return 1', 0)"), Ty::ANY);
        assert_eq!(
            ty("return redis.call('EXISTS', KEYS[1]) == 1 and 'a' or 'b'"),
            Ty::STRING
        );
        let cursor = returned("return redis.call('SCAN', 0)[1]");
        assert_eq!(cursor.ty, Ty::STRING);
        assert!(matches!(cursor.origin, Some(Origin::Cursor { .. })));
    }

    #[test]
    fn replies_after_setresp_3_have_resp3_shapes() {
        assert_eq!(
            ty("redis.setresp(3) return redis.call('GET', KEYS[1])"),
            Ty::STRING.union(Ty::NIL)
        );
        assert_eq!(
            ty("redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn h"),
            Ty::MAP
        );
        assert_eq!(
            ty("redis.setresp(3) return redis.call('ZSCORE', KEYS[1], 'm').double"),
            Ty::NUMBER
        );
        assert_eq!(
            ty("redis.setresp(3) return redis.call('SMEMBERS', KEYS[1]).set"),
            Ty::TABLE
        );
        assert_eq!(
            ty("redis.setresp(3) return redis.call('INFO').verbatim_string"),
            Ty::TABLE
        );
        assert_eq!(
            ty("redis.setresp(3) return redis.pcall('INCR', KEYS[1])"),
            Ty::INT.union(Ty::ERROR)
        );
        // Integers are integers under both protocols.
        assert_eq!(
            ty("redis.setresp(3) redis.setresp(3) return redis.call('EXISTS', KEYS[1])"),
            Ty::INT
        );
    }

    #[test]
    fn resp3_and_assigned_inputs_are_not_typed() {
        // Switched after a call, back to RESP2, inside a block, computed,
        // or only named: replies are not typed.
        for source in [
            "local a = redis.call('GET', KEYS[1]) redis.setresp(3) return redis.call('GET', KEYS[1])",
            "redis.setresp(3) redis.setresp(2) return redis.call('GET', KEYS[1])",
            "if ARGV[1] then redis.setresp(3) end return redis.call('GET', KEYS[1])",
            "redis.setresp(tonumber(ARGV[1])) return redis.call('GET', KEYS[1])",
            "-- redis.setresp(3) is not used\nreturn redis.call('GET', KEYS[1])",
            "local function f() return redis.call('GET', KEYS[1]) end redis.setresp(3) local v = redis.call('GET', KEYS[1]) return v",
        ] {
            assert_eq!(ty(source), Ty::ANY, "{source}");
        }
        assert_eq!(ty("ARGV[1] = tonumber(ARGV[1]) return ARGV[1]"), Ty::ANY);
        assert_eq!(
            ty("local ARGV = {1} ARGV[1] = 2 return KEYS[1]"),
            Ty::STRING
        );
    }

    #[test]
    fn locals_take_every_assigned_value() {
        assert_eq!(ty("local n = 1 return n"), Ty::INT);
        assert_eq!(ty("local n = 1 n = n + 1 return n"), Ty::INT);
        assert_eq!(
            ty("local n = 1 if x then n = 'a' end return n"),
            Ty::INT.union(Ty::STRING)
        );
        assert_eq!(ty("local n return n"), Ty::NIL);
        assert_eq!(ty("local a, b = 1 return b"), Ty::NIL);
        assert_eq!(ty("local a, b = f() return b"), Ty::ANY);
        // Reassigned: the later value replaces the earlier one.
        assert_eq!(
            ty("local v = redis.call('GET', KEYS[1]) v = v or '0' return v"),
            Ty::STRING
        );
        // Set inside a function: still one of the values.
        assert_eq!(
            ty("local n = 0 local function bump() n = 'x' end return n"),
            Ty::INT.union(Ty::STRING)
        );
        assert_eq!(
            ty("local function f(p) return p end return f"),
            Ty::FUNCTION
        );
        assert_eq!(
            ty("for i = 1, 3 do end local t = {} for _, v in ipairs(t) do return v end return 1"),
            Ty::INT
        );
        // A cycle through two locals settles.
        assert_eq!(
            ty("local a, b = 1, 2 for i = 1, 3 do a = b b = a .. '' end return a"),
            Ty::INT.union(Ty::STRING)
        );
    }

    /// The value of the argument of each `probe(...)` call, in source order.
    fn probes(source: &str) -> Vec<Inferred> {
        use full_moon::visitors::Visitor;
        struct Probes<'t, 'a> {
            types: &'t Types<'a>,
            found: Vec<(usize, Inferred)>,
        }
        impl Visitor for Probes<'_, '_> {
            fn visit_function_call(&mut self, call: &FunctionCall) {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                if let (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))]) =
                    (call.prefix(), suffixes.as_slice())
                    && name.token().to_string() == "probe"
                    && let FunctionArgs::Parentheses { arguments, .. } = &**args
                    && let Some(arg) = arguments.iter().next()
                {
                    let at = name.start_position().map_or(0, |p| p.bytes());
                    self.found.push((at, self.types.of(arg)));
                }
            }
        }
        let ast = parse::parse(source).expect("parses");
        let model = scope::Model::build(&ast);
        let calls = redis_calls(&Tree {
            source,
            ast: &ast,
            model: &model,
        });
        let types = Types::build(source, &ast, &model, &calls);
        let mut probes = Probes {
            types: &types,
            found: Vec::new(),
        };
        probes.visit_ast(&ast);
        probes.found.sort_by_key(|(at, _)| *at);
        probes.found.into_iter().map(|(_, v)| v).collect()
    }

    fn probe_types(source: &str) -> Vec<Ty> {
        probes(source).into_iter().map(|v| v.ty).collect()
    }

    const GET: &str = "local v = redis.call('GET', KEYS[1])\n";

    #[test]
    fn a_guard_removes_false_and_nothing_else() {
        let string = Ty::STRING;
        let maybe = Ty::STRING.union(Ty::FALSE);
        for (body, expected) in [
            ("probe(v)", vec![maybe]),
            ("if v then probe(v) end probe(v)", vec![string, maybe]),
            ("if not v then return 0 end probe(v)", vec![string]),
            ("if v == false then return 0 end probe(v)", vec![string]),
            (
                "if v ~= false then probe(v) else probe(v) end",
                vec![string, Ty::FALSE],
            ),
            ("if v and probe(v) then end", vec![string]),
            ("local w = v or probe(v)", vec![Ty::FALSE]),
            (
                "if type(v) ~= 'string' then return end probe(v)",
                vec![string],
            ),
            ("if not v or v == '' then return end probe(v)", vec![string]),
            ("assert(v) probe(v)", vec![string]),
            ("if not v then error('missing') end probe(v)", vec![string]),
            ("if not v then v = '0' end probe(v)", vec![string]),
            ("if x then v = 1 end probe(v)", vec![maybe.union(Ty::INT)]),
            ("if tonumber(v) then probe(v) end", vec![string]),
            ("if v > 'a' then end probe(v)", vec![string]),
        ] {
            let source = format!("{GET}{body}");
            assert_eq!(probe_types(&source), expected, "{source}");
        }
    }

    #[test]
    fn fields_of_local_tables_are_followed() {
        let maybe = Ty::STRING.union(Ty::FALSE);
        for (source, expected) in [
            (
                "local t = {} t.x = redis.call('GET', KEYS[1]) probe(t.x)",
                maybe,
            ),
            (
                "local t = {v = redis.call('GET', KEYS[1])} probe(t.v)",
                maybe,
            ),
            ("local t = {redis.call('GET', KEYS[1])} probe(t[1])", maybe),
            (
                "local t = {} t['x'] = redis.call('GET', KEYS[1]) if t.x then probe(t.x) end",
                Ty::STRING,
            ),
            // Passed to a function, or aliased: not followed.
            (
                "local t = {} t.x = redis.call('GET', KEYS[1]) f(t) probe(t.x)",
                Ty::ANY,
            ),
            ("local t = {} local u = t t.x = 1 probe(t.x)", Ty::ANY),
            // A computed key may be the field.
            (
                "local t = {x = 1} t[ARGV[1]] = 'a' probe(t.x)",
                Ty::INT.union(Ty::STRING),
            ),
            // Removed by a library call whose value is used.
            (
                "local t = {'a', 'b'} local last = table.remove(t) probe(t[2])",
                Ty::ANY,
            ),
        ] {
            assert_eq!(probe_types(source), vec![expected], "{source}");
        }
    }

    #[test]
    fn elements_of_array_replies_have_their_types() {
        let time = probes("probe(redis.call('TIME')[1])");
        assert_eq!(time[0].ty, Ty::STRING);
        assert!(time[0].range.lo >= 1e9, "{:?}", time[0].range);
        let scores = "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n";
        for (body, expected) in [
            (
                "for i, v in ipairs(r) do probe(v) probe(i) end",
                vec![Ty::STRING, Ty::INT],
            ),
            (
                "for i = 1, #r, 2 do probe(r[i + 1]) end",
                vec![Ty::STRING.union(Ty::NIL)],
            ),
            ("for _, v in pairs(r) do probe(v) end", vec![Ty::STRING]),
        ] {
            let source = format!("{scores}{body}");
            assert_eq!(probe_types(&source), expected, "{source}");
        }
        assert_eq!(
            probe_types("for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do probe(v) end"),
            vec![Ty::STRING.union(Ty::FALSE)]
        );
        // Not a reply: nothing known.
        assert_eq!(
            probe_types("for _, v in ipairs(ARGV) do probe(v) end"),
            vec![Ty::ANY]
        );
    }

    #[test]
    fn loops_settle_and_ranges_widen() {
        let n = probes("local n = 0 while redis.call('LPOP', KEYS[1]) do n = n + 1 end probe(n)");
        assert_eq!(n[0].ty, Ty::INT);
        assert_eq!(n[0].range, Range::new(0.0, f64::INFINITY));
        let v = probe_types(&format!(
            "{GET}for i = 1, 3 do probe(v) v = redis.call('GET', KEYS[i]) or 'x' end probe(v)"
        ));
        assert_eq!(
            v,
            vec![Ty::STRING.union(Ty::FALSE), Ty::STRING.union(Ty::FALSE)]
        );
        let i = probes("for i = 1, 10 do probe(i) end");
        assert_eq!(i[0].range, Range::new(1.0, 10.0));
        let broke = probe_types(&format!(
            "{GET}while true do if v then break end v = redis.call('GET', KEYS[2]) end probe(v)"
        ));
        assert_eq!(broke, vec![Ty::STRING]);
    }

    #[test]
    fn functions_see_every_value_of_their_upvalues() {
        let maybe = Ty::STRING.union(Ty::FALSE);
        assert_eq!(
            probe_types(&format!(
                "{GET}local function f() probe(v) end if not v then return end f()"
            )),
            vec![maybe]
        );
        assert_eq!(
            probe_types("local n = 0 local function set() n = 'x' end set() probe(n)"),
            vec![Ty::INT.union(Ty::STRING)]
        );
        assert_eq!(
            probe_types("local function f(v) if not v then return end probe(v) end"),
            vec![Ty::ANY.minus(Ty::FALSY)]
        );
    }

    #[test]
    fn numbers_keep_their_range() {
        let micros =
            probes("local t = redis.call('TIME') probe(tonumber(t[1]) * 1000000 + tonumber(t[2]))");
        assert!(micros[0].range.lo >= 1e15, "{:?}", micros[0].range);
        let seconds = probes("local s = math.floor(tonumber(ARGV[1]) / 1000) probe(s)");
        assert!(matches!(seconds[0].origin, Some(Origin::Rounded { .. })));
        let positive = probes("local n = tonumber(ARGV[1]) if n <= 0 then return end probe(n)");
        assert!(positive[0].range.lo > 0.0, "{:?}", positive[0].range);
        let huge = probes("probe(math.huge)");
        assert!(matches!(huge[0].origin, Some(Origin::Fraction { .. })));
    }

    #[test]
    fn long_conditions_cost_their_length() {
        let terms: Vec<String> = (0..400).map(|i| format!("v{} ~= ARGV[1]", i % 3)).collect();
        let source = format!(
            "local v0, v1, v2 = redis.call('GET', KEYS[1]), 1, 2\nif {} then probe(v0) end\nlocal w = {} or probe(v0)",
            terms.join(" and "),
            terms.join(" or ")
        );
        let started = std::time::Instant::now();
        assert_eq!(probe_types(&source).len(), 2);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
