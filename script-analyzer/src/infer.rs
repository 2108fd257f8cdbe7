//! Type inference: what Lua type each expression may have, on top of the
//! reply table ([`replies`]).
//!
//! The inference is small and sound rather than clever:
//!
//! - A [`Ty`] is a set of the shapes a value may take. Anything the
//!   inference does not understand is [`Ty::ANY`], every shape at once, so a
//!   lint that asks "can this value be nil?" gets "maybe" for it.
//! - A local variable has the union of every value assigned to it anywhere
//!   (its initializer, each later assignment, in any function), computed as
//!   a fixed point. There is no narrowing: after `if not v then return end`,
//!   `v` still has the type of all its assignments. Lints that would need
//!   narrowing (a value that "may be false" used in arithmetic) only look at
//!   locals that are never tested, through [`Types::uses`].
//! - Literals, `tonumber`, `tostring`, the `string`/`math` libraries,
//!   `and`/`or`, comparisons and arithmetic have their Lua 5.1 result types;
//!   `redis.call` and `redis.pcall` have their reply (and under `pcall`, the
//!   error table).
//! - Replies are RESP2's, or RESP3's ([`Protocol::Resp3`]) when the script
//!   switches with `redis.setresp(3)`. That is decided for the whole script,
//!   not statement by statement: RESP3 when every mention of `setresp` is a
//!   `redis.setresp(3)` statement of the main chunk and the first of them
//!   comes before every `redis.call` in the text. Any other use of
//!   `setresp` (`setresp(2)`, a computed protocol, a switch inside a
//!   function or after a call, even a comment naming it) leaves replies
//!   untyped.
//!
//! Each inferred value also keeps, where there is one, its [`Origin`]: the
//! command whose reply it is, the `tonumber` that made it, the division that
//! made it fractional. Lints name it in their messages.

use crate::Span;
use crate::commands::ArgShape;
use crate::calls::{CallArg, RedisCall};
use crate::replies::{self, LuaTypes, Protocol};
use crate::scope::{Model, Resolution};
use full_moon::ast::{
    Ast, BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody, FunctionCall, Index,
    LastStmt, Parameter, Prefix, Stmt, Suffix, TableConstructor, UnOp, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::{TokenReference, TokenType};
use std::collections::HashMap;

/// A set of Lua types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Ty(u32);

impl Ty {
    /// No value at all (not yet known, in the fixed point).
    pub const EMPTY: Ty = Ty(0);
    /// `nil`.
    pub const NIL: Ty = Ty(1);
    /// `false`.
    pub const FALSE: Ty = Ty(1 << 1);
    /// `true`.
    pub const TRUE: Ty = Ty(1 << 2);
    /// A number with an integral value.
    pub const INT: Ty = Ty(1 << 3);
    /// A number that may have a fraction.
    pub const FLOAT: Ty = Ty(1 << 4);
    /// A string.
    pub const STRING: Ty = Ty(1 << 5);
    /// A status reply, `{ok = ...}`.
    pub const STATUS: Ty = Ty(1 << 6);
    /// An error table, `{err = ...}` (from `redis.pcall`).
    pub const ERROR: Ty = Ty(1 << 7);
    /// An array reply.
    pub const ARRAY: Ty = Ty(1 << 8);
    /// A flat table of pairs (a map reply, `WITHSCORES`).
    pub const PAIRS: Ty = Ty(1 << 9);
    /// Any other table.
    pub const TABLE: Ty = Ty(1 << 10);
    /// A function.
    pub const FUNCTION: Ty = Ty(1 << 11);
    /// Userdata and the like (`cjson.null`).
    pub const OTHER: Ty = Ty(1 << 12);
    /// A RESP3 map reply, `{map = {...}}`.
    pub const MAP: Ty = Ty(1 << 13);
    /// A RESP3 set reply, `{set = {...}}`.
    pub const SET: Ty = Ty(1 << 14);
    /// A RESP3 double reply, `{double = n}`.
    pub const DOUBLE: Ty = Ty(1 << 15);
    /// A RESP3 big number reply, `{big_number = "..."}`.
    pub const BIG_NUMBER: Ty = Ty(1 << 16);
    /// A RESP3 verbatim string reply, `{verbatim_string = {...}}`.
    pub const VERBATIM: Ty = Ty(1 << 17);
    /// Anything: not known.
    pub const ANY: Ty = Ty((1 << 18) - 1);
    /// Any number.
    pub const NUMBER: Ty = Ty(Self::INT.0 | Self::FLOAT.0);
    /// A boolean.
    pub const BOOL: Ty = Ty(Self::TRUE.0 | Self::FALSE.0);
    /// The values Lua takes for false.
    pub const FALSY: Ty = Ty(Self::NIL.0 | Self::FALSE.0);

    /// Every type of `self` and of `other`.
    pub const fn union(self, other: Ty) -> Ty {
        Ty(self.0 | other.0)
    }

    /// The types of `self` that are not in `other`.
    pub const fn minus(self, other: Ty) -> Ty {
        Ty(self.0 & !other.0)
    }

    /// Whether `self` and `other` have a type in common.
    pub const fn intersects(self, other: Ty) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether every type of `self` is in `other` (and `self` is not empty).
    pub const fn within(self, other: Ty) -> bool {
        self.0 != 0 && self.0 & !other.0 == 0
    }

    /// Whether every type of `self` is in `other` (or `self` is empty).
    pub const fn subset(self, other: Ty) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether nothing is known.
    pub const fn is_any(self) -> bool {
        self.0 == Self::ANY.0
    }

    /// The Lua view of a reply, plus the error table under `pcall`.
    pub fn from_reply(lua: LuaTypes, pcall: bool) -> Ty {
        let mut ty = Ty::EMPTY;
        for (shape, t) in [
            (LuaTypes::NUMBER, Ty::INT),
            (LuaTypes::STRING, Ty::STRING),
            (LuaTypes::FALSE, Ty::FALSE),
            (LuaTypes::STATUS, Ty::STATUS),
            (LuaTypes::ARRAY, Ty::ARRAY),
            (LuaTypes::PAIRS, Ty::PAIRS),
            (LuaTypes::NIL, Ty::NIL),
            (LuaTypes::MAP, Ty::MAP),
            (LuaTypes::SET, Ty::SET),
            (LuaTypes::DOUBLE, Ty::DOUBLE),
            (LuaTypes::BOOLEAN, Ty::BOOL),
            (LuaTypes::BIG_NUMBER, Ty::BIG_NUMBER),
            (LuaTypes::VERBATIM, Ty::VERBATIM),
        ] {
            if lua.contains(shape) {
                ty = ty.union(t);
            }
        }
        if pcall { ty.union(Ty::ERROR) } else { ty }
    }
}

/// Where a value comes from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The reply of a `redis.call` / `redis.pcall`.
    Reply {
        /// The command as messages show it: `GET`, `CONFIG GET`.
        command: String,
        /// What the reply table says Lua receives (without the error table).
        shape: LuaTypes,
        /// `redis.pcall`.
        pcall: bool,
        /// The call.
        span: Span,
    },
    /// `tonumber(x)`, where `x` came from `of` (if known).
    Tonumber {
        /// The origin of the argument.
        of: Option<Box<Origin>>,
    },
    /// The cursor (first element) of a SCAN-family reply: a string.
    Cursor {
        /// `SCAN`, `HSCAN`, ...
        command: String,
    },
    /// An input: `KEYS[n]` or `ARGV[n]`, as written.
    Input {
        /// `ARGV[1]`.
        name: String,
    },
    /// A computation that may give a fraction.
    Fraction {
        /// Why: "a division gives a fractional number".
        why: String,
        /// Where.
        span: Span,
    },
}

/// What the inference says about an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inferred {
    /// The types it may have.
    pub ty: Ty,
    /// Where it comes from, when that is one thing.
    pub origin: Option<Origin>,
}

impl Inferred {
    fn of(ty: Ty) -> Inferred {
        Inferred { ty, origin: None }
    }

    fn any() -> Inferred {
        Inferred::of(Ty::ANY)
    }

    /// The command reply this is, if it is one.
    pub fn reply(&self) -> Option<(&str, LuaTypes, bool)> {
        match &self.origin {
            Some(Origin::Reply {
                command,
                shape,
                pcall,
                ..
            }) => Some((command, *shape, *pcall)),
            _ => None,
        }
    }

    /// Either this value or `other`.
    fn merge(self, other: Inferred) -> Inferred {
        let origin = match (self.origin, other.origin) {
            (Some(a), Some(b)) if a == b => Some(a),
            (Some(_), Some(_)) => None,
            (a, b) => a.or(b),
        };
        Inferred {
            ty: self.ty.union(other.ty),
            origin,
        }
    }
}

/// How a local variable is used at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UseKind {
    /// An operand of `+ - * / % ^` or unary `-`.
    Arithmetic,
    /// An operand of `< <= > >=`.
    Ordering,
    /// An operand of `..`.
    Concat,
    /// An argument of a `redis.call`.
    CommandArg,
    /// Tested: a condition, an operand of `not`, `and`, `or`, `==`, `~=`, or
    /// the argument of `type(...)`.
    Tested,
    /// Indexed: `v.name` / `v['name']` (`Some("name")`) or `v[i]` (`None`).
    Index(Option<String>),
    /// Returned.
    Returned,
    /// Anything else: passed to a function, stored, called...
    Other,
}

/// One use of a local variable.
#[derive(Clone, Debug)]
pub struct Use {
    /// The name token.
    pub span: Span,
    /// How it is used.
    pub kind: UseKind,
}

/// A value assigned to a local.
enum Def<'a> {
    Expr(&'a Expression),
    Value(Ty),
}

/// The types of a script's locals, and what is needed to infer any
/// expression's type.
#[derive(Default)]
pub struct Types<'a> {
    source: &'a str,
    model: Option<&'a Model>,
    calls: HashMap<(usize, usize), RedisCall>,
    vars: HashMap<usize, Inferred>,
    defs_count: HashMap<usize, usize>,
    uses: HashMap<usize, Vec<Use>>,
    /// The protocol of the replies, `None` when the script switches in a
    /// way the inference does not follow: replies are then not typed.
    protocol: Option<Protocol>,
    /// The script assigns into `KEYS` or `ARGV` (`ARGV[1] = tonumber(...)`):
    /// their elements are then not surely strings.
    inputs_assigned: bool,
}

/// The SCAN family, whose reply starts with a cursor.
const SCANS: &[&str] = &["SCAN", "SSCAN", "HSCAN", "ZSCAN"];

/// Rounds of the fixed point before giving up (then: unknown).
const MAX_ROUNDS: usize = 40;

impl<'a> Types<'a> {
    /// Infers the locals of `ast`.
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
        };
        walker.block(ast.nodes());
        let Walker {
            defs,
            uses,
            inputs_assigned,
            ..
        } = walker;
        types.inputs_assigned = inputs_assigned;
        let mut env: HashMap<usize, Inferred> = defs
            .keys()
            .map(|&var| (var, Inferred::of(Ty::EMPTY)))
            .collect();
        let mut order: Vec<usize> = defs.keys().copied().collect();
        order.sort_unstable();
        let mut converged = false;
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for var in &order {
                let mut acc: Option<Inferred> = None;
                for def in &defs[var] {
                    let value = match def {
                        Def::Expr(expr) => types.infer(expr, &env),
                        Def::Value(ty) => Inferred::of(*ty),
                    };
                    acc = Some(match acc {
                        None => value,
                        Some(acc) => acc.merge(value),
                    });
                }
                let acc = acc.unwrap_or_else(Inferred::any);
                if env.get(var).map(|v| v.ty) != Some(acc.ty) {
                    changed = true;
                }
                env.insert(*var, acc);
            }
            if !changed {
                converged = true;
                break;
            }
        }
        if !converged {
            for value in env.values_mut() {
                *value = Inferred::any();
            }
        }
        types.defs_count = defs.iter().map(|(var, d)| (*var, d.len())).collect();
        types.vars = env;
        types.uses = uses;
        types
    }

    /// What `expr` may be.
    pub fn of(&self, expr: &Expression) -> Inferred {
        self.infer(expr, &self.vars)
    }

    /// The value after the prefix, then after each suffix: `steps[0]` is the
    /// prefix's, `steps[i]` the value after `suffixes[i - 1]`.
    pub fn chain<'s>(
        &self,
        prefix: &Prefix,
        suffixes: impl IntoIterator<Item = &'s Suffix>,
    ) -> Vec<Inferred> {
        let suffixes: Vec<&Suffix> = suffixes.into_iter().collect();
        self.chain_steps(prefix, &suffixes, &self.vars)
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

    /// The type of the local `var`.
    pub fn var(&self, var: usize) -> Inferred {
        self.vars.get(&var).cloned().unwrap_or_else(Inferred::any)
    }

    /// The `redis.call` at exactly `start..end`.
    pub fn call_at(&self, start: usize, end: usize) -> Option<&RedisCall> {
        self.calls.get(&(start, end))
    }

    fn span(&self, node: &impl Node) -> Span {
        crate::node_range::node_span(self.source, node)
    }

    fn infer(&self, expr: &Expression, env: &HashMap<usize, Inferred>) -> Inferred {
        match expr {
            Expression::Symbol(token) => Inferred::of(match token.token().to_string().as_str() {
                "nil" => Ty::NIL,
                "true" => Ty::TRUE,
                "false" => Ty::FALSE,
                _ => Ty::ANY,
            }),
            Expression::Number(token) => match number(token) {
                Some(n) if n.fract() != 0.0 => Inferred {
                    ty: Ty::FLOAT,
                    origin: Some(Origin::Fraction {
                        why: format!("{} is not an integer", token.token()),
                        span: self.span(token),
                    }),
                },
                Some(n) if n.is_finite() => Inferred::of(Ty::INT),
                _ => Inferred::of(Ty::NUMBER),
            },
            Expression::String(_) => Inferred::of(Ty::STRING),
            Expression::Function(_) => Inferred::of(Ty::FUNCTION),
            Expression::TableConstructor(_) => Inferred::of(Ty::TABLE),
            Expression::Parentheses { expression, .. } => self.infer(expression, env),
            Expression::UnaryOperator { unop, expression } => match unop {
                UnOp::Not(_) => Inferred::of(Ty::BOOL),
                UnOp::Hash(_) => Inferred::of(Ty::INT),
                UnOp::Minus(_) => {
                    let inner = self.infer(expression, env);
                    let ty = if inner.ty.subset(Ty::INT) {
                        Ty::INT
                    } else {
                        Ty::NUMBER
                    };
                    let origin = match inner.origin {
                        Some(o @ Origin::Fraction { .. }) => Some(o),
                        _ => None,
                    };
                    Inferred { ty, origin }
                }
                #[allow(unreachable_patterns)]
                _ => Inferred::any(),
            },
            Expression::BinaryOperator { lhs, binop, rhs } => self.binary(lhs, binop, rhs, env),
            Expression::FunctionCall(call) => {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                self.chain_steps(call.prefix(), &suffixes, env)
                    .pop()
                    .unwrap_or_else(Inferred::any)
            }
            Expression::Var(Var::Name(token)) => self.name(token, env),
            Expression::Var(Var::Expression(var)) => {
                let suffixes: Vec<&Suffix> = var.suffixes().collect();
                self.chain_steps(var.prefix(), &suffixes, env)
                    .pop()
                    .unwrap_or_else(Inferred::any)
            }
            #[allow(unreachable_patterns)]
            _ => Inferred::any(),
        }
    }

    fn name(&self, token: &TokenReference, env: &HashMap<usize, Inferred>) -> Inferred {
        match self.model.and_then(|m| m.resolve(token)) {
            Some(Resolution::Local(i)) => env.get(&i).cloned().unwrap_or_else(Inferred::any),
            Some(Resolution::Global) => match token.token().to_string().as_str() {
                "KEYS" | "ARGV" => Inferred::of(Ty::TABLE),
                _ => Inferred::any(),
            },
            None => Inferred::any(),
        }
    }

    fn binary(
        &self,
        lhs: &Expression,
        binop: &BinOp,
        rhs: &Expression,
        env: &HashMap<usize, Inferred>,
    ) -> Inferred {
        let fraction = |l: &Inferred, r: &Inferred| -> Option<Origin> {
            [l, r].into_iter().find_map(|side| match &side.origin {
                Some(o @ Origin::Fraction { .. }) => Some(o.clone()),
                _ => None,
            })
        };
        match binop {
            BinOp::Plus(_) | BinOp::Minus(_) | BinOp::Star(_) | BinOp::Percent(_) => {
                let (l, r) = (self.infer(lhs, env), self.infer(rhs, env));
                let integral = l.ty.subset(Ty::INT) && r.ty.subset(Ty::INT);
                if integral {
                    return Inferred::of(Ty::INT);
                }
                // `x % 1` and the like: a fraction stays a fraction.
                let origin = if matches!(binop, BinOp::Percent(_)) {
                    None
                } else {
                    fraction(&l, &r)
                };
                Inferred {
                    ty: Ty::NUMBER,
                    origin,
                }
            }
            BinOp::Slash(_) | BinOp::Caret(_) => {
                let why = if matches!(binop, BinOp::Slash(_)) {
                    "a division gives a fractional number"
                } else {
                    "`^` gives a fractional number"
                };
                // The operator's span: a node's own may be slow to compute
                // on deep nesting.
                Inferred {
                    ty: Ty::NUMBER,
                    origin: Some(Origin::Fraction {
                        why: why.to_string(),
                        span: self.span(binop.token()),
                    }),
                }
            }
            BinOp::TwoDots(_) => Inferred::of(Ty::STRING),
            BinOp::TwoEqual(_)
            | BinOp::TildeEqual(_)
            | BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_) => Inferred::of(Ty::BOOL),
            BinOp::And(_) => {
                let l = self.infer(lhs, env);
                if !l.ty.intersects(Ty::FALSY) {
                    return self.infer(rhs, env);
                }
                let r = self.infer(rhs, env);
                if l.ty.within(Ty::FALSY) {
                    return l;
                }
                Inferred::of(l.ty.minus(Ty::ANY.minus(Ty::FALSY)).union(r.ty))
            }
            BinOp::Or(_) => {
                let l = self.infer(lhs, env);
                if !l.ty.intersects(Ty::FALSY) {
                    return l;
                }
                let r = self.infer(rhs, env);
                Inferred::of(l.ty.minus(Ty::FALSY).union(r.ty))
            }
            #[allow(unreachable_patterns)]
            _ => Inferred::any(),
        }
    }

    fn chain_steps(
        &self,
        prefix: &Prefix,
        suffixes: &[&Suffix],
        env: &HashMap<usize, Inferred>,
    ) -> Vec<Inferred> {
        let start = prefix.start_position().map_or(usize::MAX, |p| p.bytes());
        // The dotted name of a global library member, while it is one.
        let mut path: Option<String> = None;
        let first = match prefix {
            Prefix::Name(token) => {
                if self.model.and_then(|m| m.resolve(token)) == Some(Resolution::Global) {
                    path = Some(token.token().to_string());
                }
                self.name(token, env)
            }
            Prefix::Expression(expr) => self.infer(expr, env),
            #[allow(unreachable_patterns)]
            _ => Inferred::any(),
        };
        let mut steps = vec![first];
        for suffix in suffixes {
            let current = steps.last().cloned().unwrap_or_else(Inferred::any);
            let next = match suffix {
                Suffix::Index(index) => {
                    let key = index_key(index);
                    match (path.take(), &key) {
                        (Some(p), Some(Key::Name(name))) => {
                            path = Some(format!("{p}.{name}"));
                            Inferred::any()
                        }
                        (Some(p), Some(Key::Number(n)))
                            if (p == "KEYS" || p == "ARGV") && !self.inputs_assigned =>
                        {
                            Inferred {
                                ty: Ty::STRING,
                                origin: Some(Origin::Input {
                                    name: format!("{p}[{n}]"),
                                }),
                            }
                        }
                        _ => index_value(&current, key.as_ref()),
                    }
                }
                Suffix::Call(call) => {
                    let name = path.take();
                    if let Some(call) = self.calls.get(&(start, call_end(call))) {
                        match self.protocol {
                            Some(protocol) => reply_of(call, protocol),
                            None => Inferred::any(),
                        }
                    } else if let (Some(name), Call::AnonymousCall(args)) = (name, call) {
                        self.builtin(&name, args, env)
                    } else if let Call::MethodCall(method) = call {
                        let name = method.name().token().to_string();
                        if current.ty.within(Ty::STRING) && STRING_RESULTS.contains(&name.as_str())
                        {
                            Inferred::of(Ty::STRING)
                        } else {
                            Inferred::any()
                        }
                    } else {
                        Inferred::any()
                    }
                }
                #[allow(unreachable_patterns)]
                _ => Inferred::any(),
            };
            steps.push(next);
        }
        steps
    }

    fn builtin(&self, name: &str, args: &FunctionArgs, env: &HashMap<usize, Inferred>) -> Inferred {
        let values: Vec<&Expression> = match args {
            FunctionArgs::Parentheses { arguments, .. } => arguments.iter().collect(),
            _ => Vec::new(),
        };
        let arg = |i: usize| -> Inferred {
            match (args, values.get(i)) {
                (FunctionArgs::Parentheses { .. }, Some(expr)) => self.infer(expr, env),
                (FunctionArgs::Parentheses { .. }, None) => Inferred::of(Ty::NIL),
                (FunctionArgs::String(_), _) if i == 0 => Inferred::of(Ty::STRING),
                _ => Inferred::any(),
            }
        };
        let all_int = || (0..values.len().max(1)).all(|i| arg(i).ty.subset(Ty::INT));
        match name {
            "tonumber" => {
                let x = arg(0);
                if values.len() == 1 && x.ty.within(Ty::NUMBER) {
                    return x;
                }
                // The argument's origin counts only for a call written in
                // place: a local may have been tested before.
                let direct = values
                    .first()
                    .is_some_and(|e| matches!(unparenthesized(e), Expression::FunctionCall(_)));
                Inferred {
                    ty: Ty::NUMBER.union(Ty::NIL),
                    origin: Some(Origin::Tonumber {
                        of: x.origin.filter(|_| direct).map(Box::new),
                    }),
                }
            }
            "tostring" | "type" | "string.format" | "string.rep" | "string.sub"
            | "string.lower" | "string.upper" | "string.char" | "string.reverse"
            | "table.concat" | "cjson.encode" | "cmsgpack.pack" | "redis.sha1hex" | "bit.tohex"
            | "struct.pack" => Inferred::of(Ty::STRING),
            "math.floor" | "math.ceil" | "string.len" | "table.getn" | "bit.band" | "bit.bor"
            | "bit.bxor" | "bit.bnot" | "bit.lshift" | "bit.rshift" | "bit.arshift"
            | "bit.tobit" => Inferred::of(Ty::INT),
            "math.abs" | "math.max" | "math.min" => {
                Inferred::of(if all_int() { Ty::INT } else { Ty::NUMBER })
            }
            "math.random" if !values.is_empty() => Inferred::of(Ty::INT),
            "math.random" | "math.sqrt" | "math.fmod" | "math.log" | "math.log10" | "math.exp"
            | "math.pow" | "math.modf" | "math.frexp" | "math.ldexp" | "math.sin" | "math.cos"
            | "math.tan" | "math.deg" | "math.rad" => Inferred::of(Ty::NUMBER),
            "redis.error_reply" => Inferred::of(Ty::ERROR),
            "redis.status_reply" => Inferred::of(Ty::STATUS),
            _ => Inferred::any(),
        }
    }
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

/// String methods (`s:sub(...)`) that give a string.
const STRING_RESULTS: &[&str] = &["sub", "lower", "upper", "rep", "reverse", "format"];

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
    Inferred {
        ty: Ty::from_reply(lua, call.pcall),
        origin: Some(Origin::Reply {
            command,
            shape: lua,
            pcall: call.pcall,
            span: call.span,
        }),
    }
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

/// `value[key]`.
fn index_value(value: &Inferred, key: Option<&Key>) -> Inferred {
    if let Some((command, _, _)) = value.reply()
        && SCANS.contains(&command)
        && value.ty.intersects(Ty::ARRAY)
    {
        match key {
            Some(Key::Number(n)) if *n == 1.0 => {
                return Inferred {
                    ty: Ty::STRING,
                    origin: Some(Origin::Cursor {
                        command: command.to_string(),
                    }),
                };
            }
            Some(Key::Number(n)) if *n == 2.0 => return Inferred::of(Ty::ARRAY),
            _ => {}
        }
    }
    if value.ty == Ty::STATUS && key == Some(&Key::Name("ok".to_string())) {
        return Inferred::of(Ty::STRING);
    }
    // The one field of a RESP3 reply table: `redis.call('ZSCORE', k, m).double`.
    let table = value.ty.minus(Ty::FALSY.union(Ty::ERROR));
    for (shape, field, ty) in [
        (Ty::MAP, "map", Ty::TABLE),
        (Ty::SET, "set", Ty::TABLE),
        (Ty::DOUBLE, "double", Ty::NUMBER),
        (Ty::BIG_NUMBER, "big_number", Ty::STRING),
        (Ty::VERBATIM, "verbatim_string", Ty::TABLE),
    ] {
        if table == shape && key == Some(&Key::Name(field.to_string())) {
            return Inferred::of(ty);
        }
    }
    Inferred::any()
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

/// Collects the values assigned to each local and the uses of each.
struct Walker<'t, 'a> {
    types: &'t Types<'a>,
    defs: HashMap<usize, Vec<Def<'a>>>,
    uses: HashMap<usize, Vec<Use>>,
    inputs_assigned: bool,
}

impl<'a> Walker<'_, 'a> {
    fn local(&self, token: &TokenReference) -> Option<usize> {
        self.types.local(token)
    }

    fn def(&mut self, token: &TokenReference, def: Def<'a>) {
        if let Some(var) = self.local(token) {
            self.defs.entry(var).or_default().push(def);
        }
    }

    /// Assigns `exprs` to `names` with Lua's adjustment of value lists.
    fn assign(&mut self, names: &[&TokenReference], exprs: &[&'a Expression]) {
        let multi = exprs.last().is_some_and(|e| is_multi(e));
        for (i, name) in names.iter().enumerate() {
            let def = match exprs.get(i) {
                Some(expr) if i + 1 == exprs.len() && multi && names.len() > exprs.len() => {
                    // The first value of a call or `...`; the others follow.
                    Def::Expr(expr)
                }
                Some(expr) => Def::Expr(expr),
                None if multi => Def::Value(Ty::ANY),
                None => Def::Value(Ty::NIL),
            };
            self.def(name, def);
        }
    }

    fn use_(&mut self, token: &TokenReference, kind: UseKind) {
        if let Some(var) = self.local(token) {
            let span = self.types.span(token);
            self.uses.entry(var).or_default().push(Use { span, kind });
        }
    }

    fn block(&mut self, block: &'a Block) {
        for stmt in block.stmts() {
            self.stmt(stmt);
        }
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            for expr in ret.returns() {
                self.expr(expr, UseKind::Returned);
            }
        }
    }

    fn body(&mut self, body: &'a FunctionBody) {
        for parameter in body.parameters() {
            if let Parameter::Name(name) = parameter {
                self.def(name, Def::Value(Ty::ANY));
            }
        }
        self.block(body.block());
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::LocalAssignment(local) => {
                let exprs: Vec<&Expression> = local.expressions().iter().collect();
                for expr in &exprs {
                    self.expr(expr, UseKind::Other);
                }
                let names: Vec<&TokenReference> = local.names().iter().collect();
                self.assign(&names, &exprs);
            }
            Stmt::Assignment(assignment) => {
                let exprs: Vec<&Expression> = assignment.expressions().iter().collect();
                for expr in &exprs {
                    self.expr(expr, UseKind::Other);
                }
                let mut names = Vec::new();
                for var in assignment.variables() {
                    match var {
                        Var::Name(token) => names.push(Some(token)),
                        Var::Expression(var) => {
                            if let Prefix::Name(table) = var.prefix()
                                && matches!(table.token().to_string().as_str(), "KEYS" | "ARGV")
                                && self.local(table).is_none()
                            {
                                self.inputs_assigned = true;
                            }
                            let suffixes: Vec<&Suffix> = var.suffixes().collect();
                            self.chain(var.prefix(), &suffixes, UseKind::Other);
                            names.push(None);
                        }
                        #[allow(unreachable_patterns)]
                        _ => names.push(None),
                    }
                }
                let multi = exprs.last().is_some_and(|e| is_multi(e));
                for (i, name) in names.into_iter().enumerate() {
                    let Some(name) = name else { continue };
                    let def = match exprs.get(i) {
                        Some(expr) => Def::Expr(expr),
                        None if multi => Def::Value(Ty::ANY),
                        None => Def::Value(Ty::NIL),
                    };
                    self.def(name, def);
                }
            }
            Stmt::Do(block) => self.block(block.block()),
            Stmt::FunctionCall(call) => {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                self.chain(call.prefix(), &suffixes, UseKind::Other);
            }
            Stmt::FunctionDeclaration(decl) => {
                let name = decl.name();
                let mut names = name.names().iter();
                if let Some(first) = names.next() {
                    if name.names().len() == 1 && name.method_name().is_none() {
                        self.def(first, Def::Value(Ty::FUNCTION));
                    } else {
                        self.use_(first, UseKind::Other);
                    }
                }
                self.body(decl.body());
            }
            Stmt::GenericFor(for_loop) => {
                for expr in for_loop.expressions() {
                    self.expr(expr, UseKind::Other);
                }
                for name in for_loop.names() {
                    self.def(name, Def::Value(Ty::ANY));
                }
                self.block(for_loop.block());
            }
            Stmt::If(if_stmt) => {
                self.expr(if_stmt.condition(), UseKind::Tested);
                self.block(if_stmt.block());
                for else_if in if_stmt.else_if().into_iter().flatten() {
                    self.expr(else_if.condition(), UseKind::Tested);
                    self.block(else_if.block());
                }
                if let Some(block) = if_stmt.else_block() {
                    self.block(block);
                }
            }
            Stmt::LocalFunction(local) => {
                self.def(local.name(), Def::Value(Ty::FUNCTION));
                self.body(local.body());
            }
            Stmt::NumericFor(for_loop) => {
                self.expr(for_loop.start(), UseKind::Arithmetic);
                self.expr(for_loop.end(), UseKind::Arithmetic);
                if let Some(step) = for_loop.step() {
                    self.expr(step, UseKind::Arithmetic);
                }
                self.def(for_loop.index_variable(), Def::Value(Ty::NUMBER));
                self.block(for_loop.block());
            }
            Stmt::Repeat(repeat) => {
                self.block(repeat.block());
                self.expr(repeat.until(), UseKind::Tested);
            }
            Stmt::While(while_loop) => {
                self.expr(while_loop.condition(), UseKind::Tested);
                self.block(while_loop.block());
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn expr(&mut self, expr: &'a Expression, kind: UseKind) {
        match expr {
            Expression::BinaryOperator { lhs, binop, rhs } => {
                let kind = match binop {
                    BinOp::TwoDots(_) => UseKind::Concat,
                    BinOp::And(_) | BinOp::Or(_) | BinOp::TwoEqual(_) | BinOp::TildeEqual(_) => {
                        UseKind::Tested
                    }
                    BinOp::LessThan(_)
                    | BinOp::LessThanEqual(_)
                    | BinOp::GreaterThan(_)
                    | BinOp::GreaterThanEqual(_) => UseKind::Ordering,
                    _ => UseKind::Arithmetic,
                };
                self.expr(lhs, kind.clone());
                self.expr(rhs, kind);
            }
            Expression::UnaryOperator { unop, expression } => {
                let kind = match unop {
                    UnOp::Not(_) => UseKind::Tested,
                    UnOp::Minus(_) => UseKind::Arithmetic,
                    _ => UseKind::Other,
                };
                self.expr(expression, kind);
            }
            Expression::Parentheses { expression, .. } => self.expr(expression, kind),
            Expression::Function(function) => self.body(function.body()),
            Expression::FunctionCall(call) => {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                self.chain(call.prefix(), &suffixes, kind);
            }
            Expression::TableConstructor(table) => self.table(table),
            Expression::Var(Var::Name(token)) => self.use_(token, kind),
            Expression::Var(Var::Expression(var)) => {
                let suffixes: Vec<&Suffix> = var.suffixes().collect();
                self.chain(var.prefix(), &suffixes, kind);
            }
            _ => {}
        }
    }

    fn table(&mut self, table: &'a TableConstructor) {
        for field in table.fields() {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.expr(key, UseKind::Other);
                    self.expr(value, UseKind::Other);
                }
                Field::NameKey { value, .. } => self.expr(value, UseKind::Other),
                Field::NoKey(value) => self.expr(value, UseKind::Other),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    fn chain(&mut self, prefix: &'a Prefix, suffixes: &[&'a Suffix], kind: UseKind) {
        let start = prefix.start_position().map_or(usize::MAX, |p| p.bytes());
        let mut global = None;
        match prefix {
            Prefix::Name(token) => {
                let first = match suffixes.first() {
                    None => kind,
                    Some(Suffix::Index(index)) => UseKind::Index(match index_key(index) {
                        Some(Key::Name(name)) => Some(name),
                        _ => None,
                    }),
                    Some(_) => UseKind::Other,
                };
                if self.local(token).is_some() {
                    self.use_(token, first);
                } else {
                    global = Some(token.token().to_string());
                }
            }
            Prefix::Expression(expr) => {
                let kind = if suffixes.is_empty() {
                    kind
                } else {
                    UseKind::Other
                };
                self.expr(expr, kind);
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
        for (i, suffix) in suffixes.iter().enumerate() {
            let args = match suffix {
                Suffix::Index(Index::Brackets { expression, .. }) => {
                    self.expr(expression, UseKind::Other);
                    continue;
                }
                Suffix::Call(Call::AnonymousCall(args)) => &**args,
                Suffix::Call(Call::MethodCall(method)) => method.args(),
                _ => continue,
            };
            let end = args.end_position().map_or(0, |p| p.bytes());
            let kind = if self.types.calls.contains_key(&(start, end)) {
                UseKind::CommandArg
            } else if i == 0 && global.as_deref() == Some("type") {
                UseKind::Tested
            } else {
                UseKind::Other
            };
            if let FunctionArgs::Parentheses { arguments, .. } = args {
                for arg in arguments.iter() {
                    self.expr(arg, kind.clone());
                }
            } else if let FunctionArgs::TableConstructor(table) = args {
                self.table(table);
            }
        }
    }
}

/// A call or `...`: a list of values.
fn is_multi(expr: &Expression) -> bool {
    match expr {
        Expression::FunctionCall(_) => true,
        Expression::Symbol(token) => token.token().to_string() == "...",
        _ => false,
    }
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
        assert_eq!(
            ty("local v = redis.call('GET', KEYS[1]) v = v or '0' return v"),
            Ty::STRING.union(Ty::FALSE)
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
}
