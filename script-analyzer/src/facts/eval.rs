//! The value of an expression, given what is known of the locals at that
//! point ([`Env`]).
//!
//! The rules are Lua 5.1's: literals, `tonumber`, `tostring`, the
//! `string` / `math` libraries, `and` / `or`, comparisons and arithmetic
//! have their result types (and numeric ranges); `redis.call` and
//! `redis.pcall` have their reply (under `pcall`, the error table too); an
//! element of a reply has the type Redis gives it. What the rules do not
//! know is [`Ty::ANY`].

use super::value::{Inferred, Origin, Range, Ty};
use super::{FieldKey, Key, SCANS, Types, call_end, index_key, number, reply_of};
use crate::calls::CallArg;
use crate::commands::ArgShape;
use crate::replies::{self, LuaTypes, Protocol};
use crate::scope::Resolution;
use full_moon::ast::{
    BinOp, Call, Expression, Field, FunctionArgs, FunctionBody, Index, Prefix, Suffix,
    TableConstructor, UnOp, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::TokenReference;

/// What an evaluation knows about the locals at its point.
pub(crate) trait Env {
    /// The value of the local `var`, read at `token`.
    fn local(&self, types: &Types<'_>, token: &TokenReference, var: usize) -> Inferred;

    /// The value of the field `key` of the local table `var`, if followed.
    fn field(&self, _var: usize, _key: &FieldKey) -> Option<Inferred> {
        None
    }

    /// A value already known for the node at `at` ([`node_key`]).
    fn known(&self, _at: NodeKey) -> Option<Inferred> {
        None
    }

    /// Remembers `value` for the node at `at`.
    fn record(&self, _at: NodeKey, _value: &Inferred) {}

    /// The same point, knowing that `cond` is `truth` (for the right side
    /// of `and` / `or`); `None`: nothing more is known.
    fn assume(&self, _cond: &Expression, _truth: bool) -> Option<Box<dyn Env + '_>> {
        None
    }

    /// A function written at this point: its body runs later.
    fn function(&self, _body: &FunctionBody) {}

    /// What the function whose body is at `body` returns (its first
    /// value), once walked.
    fn returned(&self, _body: usize) -> Option<Inferred> {
        None
    }
}

/// A node of the tree: its address and its kind (an expression and its
/// first token may share an address).
pub(crate) type NodeKey = (usize, u8);

/// The key of an expression.
pub(crate) fn expr_key(expr: &Expression) -> NodeKey {
    (std::ptr::from_ref(expr) as usize, 0)
}

/// The key of a name token (a local read).
pub(crate) fn token_key(token: &TokenReference) -> NodeKey {
    (std::ptr::from_ref(token) as usize, 1)
}

/// The key of a suffix (the value after it).
pub(crate) fn suffix_key(suffix: &Suffix) -> NodeKey {
    (std::ptr::from_ref(suffix) as usize, 2)
}

/// Commands whose array reply holds strings (RESP2).
const STRING_ARRAYS: &[&str] = &[
    "LRANGE",
    "SMEMBERS",
    "KEYS",
    "ZRANGE",
    "ZREVRANGE",
    "ZRANGEBYSCORE",
    "ZREVRANGEBYSCORE",
    "ZRANGEBYLEX",
    "ZREVRANGEBYLEX",
    "HKEYS",
    "HVALS",
    "SINTER",
    "SUNION",
    "SDIFF",
    "SRANDMEMBER",
    "SPOP",
    "LPOP",
    "RPOP",
    "HRANDFIELD",
    "ZRANDMEMBER",
    "HGETALL",
    "CONFIG GET",
    "ZPOPMIN",
    "ZPOPMAX",
];

/// Commands whose array reply holds strings or `false` (nil replies).
const NULLABLE_ARRAYS: &[&str] = &["MGET", "HMGET"];

/// Float counters: their reply is a number that may have a fraction, as
/// text. (Scores are left out: scripts often keep integer timestamps in
/// them.)
const FLOAT_REPLIES: &[&str] = &["INCRBYFLOAT", "HINCRBYFLOAT"];

/// The earliest and latest Unix time `TIME` may give, in seconds.
const TIME_SECONDS: (f64, f64) = (1.0e9, 1.0e10);

impl Types<'_> {
    /// The value of `expr` at the point `env` describes.
    pub(crate) fn eval(&self, expr: &Expression, env: &dyn Env) -> Inferred {
        let key = expr_key(expr);
        if let Some(known) = env.known(key) {
            return known;
        }
        let value = self.eval_here(expr, env);
        env.record(key, &value);
        value
    }

    /// `nil`, `true`, `false`, `...`. (Apart from [`Types::eval_here`],
    /// whose frame deep nesting stacks.)
    #[inline(never)]
    fn symbol(&self, token: &TokenReference) -> Inferred {
        match token.token().to_string().as_str() {
            "nil" => Inferred::of(Ty::NIL),
            "true" => self.boolean(Ty::TRUE, token),
            "false" => self.boolean(Ty::FALSE, token),
            _ => Inferred::any(),
        }
    }

    /// A boolean `ty` made at `token`.
    #[inline(never)]
    fn boolean(&self, ty: Ty, token: &TokenReference) -> Inferred {
        Inferred::of(ty).with_origin(Origin::Boolean {
            span: self.span(token),
        })
    }

    fn eval_here(&self, expr: &Expression, env: &dyn Env) -> Inferred {
        match expr {
            Expression::Symbol(token) => self.symbol(token),
            Expression::Number(token) => match number(token) {
                Some(n) if n.fract() != 0.0 => Inferred::of(Ty::FLOAT)
                    .within(Range::exact(n))
                    .with_origin(Origin::Fraction {
                        why: format!("{} is not an integer", token.token()),
                        span: self.span(token),
                        infinite: false,
                    }),
                Some(n) if n.is_finite() => Inferred::of(Ty::INT).within(Range::exact(n)),
                _ => Inferred::of(Ty::NUMBER),
            },
            // Text that reads as a number is that number in arithmetic.
            Expression::String(token) => {
                let number = crate::calls::string_value(token)
                    .and_then(|text| text.trim().parse::<f64>().ok())
                    .filter(|n| n.is_finite());
                match number {
                    Some(n) => Inferred::of(Ty::STRING).within(Range::exact(n)),
                    None => Inferred::of(Ty::STRING),
                }
            }
            Expression::Function(function) => {
                env.function(function.body());
                Inferred::of(Ty::FUNCTION)
            }
            Expression::TableConstructor(table) => {
                self.table(table, env);
                Inferred::of(Ty::TABLE)
            }
            Expression::Parentheses { expression, .. } => self.eval(expression, env),
            Expression::UnaryOperator { unop, expression } => {
                let inner = self.eval(expression, env);
                match unop {
                    UnOp::Not(_) => self.boolean(Ty::BOOL, unop.token()),
                    UnOp::Hash(_) => Inferred::of(Ty::INT).within(Range::new(0.0, f64::INFINITY)),
                    UnOp::Minus(_) => {
                        let ty = if inner.ty.subset(Ty::INT) {
                            Ty::INT
                        } else {
                            Ty::NUMBER
                        };
                        let value = Inferred::of(ty).within(inner.range.negated());
                        match inner.origin {
                            Some(o @ Origin::Fraction { .. }) => value.with_origin(o),
                            _ => value,
                        }
                    }
                    #[allow(unreachable_patterns)]
                    _ => Inferred::any(),
                }
            }
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

    /// Evaluates the values and keys of a table constructor.
    fn table(&self, table: &TableConstructor, env: &dyn Env) {
        for field in table.fields() {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.eval(key, env);
                    self.eval(value, env);
                }
                Field::NameKey { value, .. } => {
                    self.eval(value, env);
                }
                Field::NoKey(value) => {
                    self.eval(value, env);
                }
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    fn name(&self, token: &TokenReference, env: &dyn Env) -> Inferred {
        match self.model.and_then(|m| m.resolve(token)) {
            Some(Resolution::Local(i)) => env.local(self, token, i),
            Some(Resolution::Global) => match token.token().to_string().as_str() {
                "KEYS" | "ARGV" => Inferred::of(Ty::TABLE),
                _ => Inferred::any(),
            },
            None => Inferred::any(),
        }
    }

    fn binary(&self, lhs: &Expression, binop: &BinOp, rhs: &Expression, env: &dyn Env) -> Inferred {
        let fraction =
            |l: &Inferred, r: &Inferred| -> Option<Origin> { Origin::fraction_of([l, r]) };
        match binop {
            BinOp::And(_) => {
                let l = self.eval(lhs, env);
                let r = match env.assume(lhs, true) {
                    Some(narrowed) => self.eval(rhs, &*narrowed),
                    None => self.eval(rhs, env),
                };
                if !l.ty.intersects(Ty::FALSY) {
                    return r;
                }
                if l.ty.within(Ty::FALSY) {
                    return l;
                }
                Inferred::of(l.ty.minus(Ty::ANY.minus(Ty::FALSY)).union(r.ty))
            }
            BinOp::Or(_) => {
                let l = self.eval(lhs, env);
                let r = match env.assume(lhs, false) {
                    Some(narrowed) => self.eval(rhs, &*narrowed),
                    None => self.eval(rhs, env),
                };
                self.or_values(l, r)
            }
            _ => {
                let (l, r) = (self.eval(lhs, env), self.eval(rhs, env));
                self.arithmetic(binop, l, r, fraction)
            }
        }
    }

    /// `l or r`, once both are evaluated. (Apart from [`Types::binary`],
    /// whose frame long `or` chains stack.)
    #[inline(never)]
    fn or_values(&self, l: Inferred, r: Inferred) -> Inferred {
        if !l.ty.intersects(Ty::FALSY) {
            return l;
        }
        let kept = Inferred {
            ty: l.ty.minus(Ty::FALSY),
            ..l
        };
        if kept.ty == Ty::EMPTY {
            return r;
        }
        // A reply with a default (`redis.call('GET', k) or 0`) is
        // still that reply where it is not the default: its
        // string stays a string. It is no longer `false` (nor nil,
        // unless the default is).
        let origin = kept.origin.clone().filter(|_| !r.ty.intersects(Ty::FALSY));
        let mut merged = kept.merge(r);
        merged.origin = match (merged.origin, origin) {
            (Some(o @ Origin::Fraction { .. }), _) => Some(o),
            (_, Some(o @ (Origin::Reply { .. } | Origin::Element { .. }))) => Some(o),
            _ => None,
        };
        merged
    }

    fn arithmetic(
        &self,
        binop: &BinOp,
        l: Inferred,
        r: Inferred,
        fraction: impl Fn(&Inferred, &Inferred) -> Option<Origin>,
    ) -> Inferred {
        match binop {
            BinOp::Plus(_) | BinOp::Minus(_) | BinOp::Star(_) | BinOp::Percent(_) => {
                let range = match binop {
                    BinOp::Plus(_) => l.range.plus(r.range),
                    BinOp::Minus(_) => l.range.minus(r.range),
                    BinOp::Star(_) => l.range.times(r.range),
                    _ if r.range.lo > 0.0 && r.range.hi.is_finite() => Range::new(0.0, r.range.hi),
                    _ => Range::ANY,
                };
                let integral = l.ty.subset(Ty::INT) && r.ty.subset(Ty::INT);
                // `x % 1` and the like: a fraction stays a fraction.
                let origin = if matches!(binop, BinOp::Percent(_)) {
                    None
                } else {
                    fraction(&l, &r)
                };
                let origin = match (origin, binop) {
                    (Some(o), _) => Some(o),
                    (None, BinOp::Minus(_)) if range.lo <= 0.0 => Some(Origin::Difference {
                        span: self.span(binop.token()),
                    }),
                    (None, _) => None,
                };
                let ty = if integral { Ty::INT } else { Ty::NUMBER };
                Inferred { ty, origin, range }
            }
            BinOp::Slash(_) | BinOp::Caret(_) => {
                let slash = matches!(binop, BinOp::Slash(_));
                // `x / 0` is infinite (or not a number), and so is
                // arithmetic on an infinite number.
                let by_zero = slash && r.range.lo <= 0.0 && r.range.hi >= 0.0;
                let infinite = by_zero
                    || [&l, &r].into_iter().any(|side| {
                        matches!(side.origin, Some(Origin::Fraction { infinite: true, .. }))
                    });
                let (why, range) = if by_zero {
                    (
                        "a division by a number that may be 0 gives a fractional or infinite number",
                        l.range.divided(r.range),
                    )
                } else if slash {
                    (
                        "a division gives a fractional number",
                        l.range.divided(r.range),
                    )
                } else {
                    ("`^` gives a fractional number", Range::ANY)
                };
                // The operator's span: a node's own may be slow to compute
                // on deep nesting.
                Inferred::of(Ty::NUMBER)
                    .within(range)
                    .with_origin(Origin::Fraction {
                        why: why.to_string(),
                        span: self.span(binop.token()),
                        infinite,
                    })
            }
            BinOp::TwoDots(_) => {
                let input = [&l, &r].into_iter().find_map(|side| match &side.origin {
                    Some(Origin::Input { name }) => Some(name.clone()),
                    Some(Origin::Concat { input }) => Some(input.clone()),
                    _ => None,
                });
                let value = Inferred::of(Ty::STRING);
                match input {
                    Some(input) => value.with_origin(Origin::Concat { input }),
                    None => value,
                }
            }
            BinOp::TwoEqual(_)
            | BinOp::TildeEqual(_)
            | BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_) => self.boolean(Ty::BOOL, binop.token()),
            #[allow(unreachable_patterns)]
            _ => Inferred::any(),
        }
    }

    /// The value after the prefix, then after each suffix.
    pub(crate) fn chain_steps(
        &self,
        prefix: &Prefix,
        suffixes: &[&Suffix],
        env: &dyn Env,
    ) -> Vec<Inferred> {
        let start = prefix.start_position().map_or(usize::MAX, |p| p.bytes());
        // The dotted name of a global library member, while it is one.
        let mut path: Option<String> = None;
        // The local table the chain starts with.
        let mut table: Option<usize> = None;
        let first = match prefix {
            Prefix::Name(token) => match self.model.and_then(|m| m.resolve(token)) {
                Some(Resolution::Global) => {
                    path = Some(token.token().to_string());
                    self.name(token, env)
                }
                Some(Resolution::Local(var)) => {
                    table = Some(var);
                    self.name(token, env)
                }
                None => Inferred::any(),
            },
            Prefix::Expression(expr) => self.eval(expr, env),
            #[allow(unreachable_patterns)]
            _ => Inferred::any(),
        };
        let mut steps = vec![first];
        for (i, suffix) in suffixes.iter().enumerate() {
            let current = steps.last().cloned().unwrap_or_else(Inferred::any);
            let key = suffix_key(suffix);
            if let Some(known) = env.known(key) {
                // Arguments and indices were evaluated with it.
                steps.push(known);
                path = None;
                continue;
            }
            // `T.name` before a call: the field whose function is called.
            let member = match (i, suffixes.first()) {
                (1, Some(Suffix::Index(index))) => match super::index_key(index) {
                    Some(Key::Name(name)) => Some(name),
                    _ => None,
                },
                _ => None,
            };
            let next = self.suffix(suffix, i, start, &current, &mut path, (table, member), env);
            env.record(key, &next);
            steps.push(next);
        }
        steps
    }

    #[allow(clippy::too_many_arguments)]
    fn suffix(
        &self,
        suffix: &Suffix,
        i: usize,
        start: usize,
        current: &Inferred,
        path: &mut Option<String>,
        (table, member): (Option<usize>, Option<String>),
        env: &dyn Env,
    ) -> Inferred {
        match suffix {
            Suffix::Index(index) => {
                let computed = match index {
                    Index::Brackets { expression, .. } => Some(self.eval(expression, env)),
                    _ => None,
                };
                // A computed key surely a number: a position.
                let position = computed.is_some_and(|k| k.ty.within(Ty::NUMBER));
                let key = index_key(index);
                match (path.take(), &key) {
                    (Some(p), Some(Key::Name(name))) => {
                        let member = format!("{p}.{name}");
                        let value = match member.as_str() {
                            "math.huge" => Inferred::of(Ty::FLOAT)
                                .within(Range::exact(f64::INFINITY))
                                .with_origin(Origin::Fraction {
                                    why: "`math.huge` is not an integer".to_string(),
                                    span: self.span(index),
                                    infinite: true,
                                }),
                            "math.pi" => Inferred::of(Ty::FLOAT),
                            _ => Inferred::any(),
                        };
                        *path = Some(member);
                        value
                    }
                    (Some(p), Some(Key::Number(n)))
                        if (p == "KEYS" || p == "ARGV") && !self.inputs_assigned =>
                    {
                        let name = format!("{p}[{n}]");
                        if self.passed(&p, *n) == Some(false) {
                            Inferred::of(Ty::NIL).with_origin(Origin::Missing { name })
                        } else {
                            Inferred::of(Ty::STRING).with_origin(Origin::Input { name })
                        }
                    }
                    _ => {
                        let field = match (i, table, key.as_ref().and_then(FieldKey::of)) {
                            (0, Some(var), Some(field)) => env.field(var, &field),
                            // A computed position: any value stored at one,
                            // or nil.
                            (0, Some(var), None) if key.is_none() && position => env
                                .field(var, &FieldKey::Elements)
                                .map(|e| e.merge(Inferred::of(Ty::NIL))),
                            _ => None,
                        };
                        field.unwrap_or_else(|| self.index(current, key.as_ref()))
                    }
                }
            }
            Suffix::Call(call) => {
                let name = path.take();
                let args = match call {
                    Call::AnonymousCall(args) => Some(&**args),
                    Call::MethodCall(method) => Some(method.args()),
                    #[allow(unreachable_patterns)]
                    _ => None,
                };
                let values: Vec<Inferred> = match args {
                    Some(FunctionArgs::Parentheses { arguments, .. }) => {
                        arguments.iter().map(|a| self.eval(a, env)).collect()
                    }
                    Some(FunctionArgs::TableConstructor(table)) => {
                        self.table(table, env);
                        vec![Inferred::of(Ty::TABLE)]
                    }
                    Some(FunctionArgs::String(_)) => vec![Inferred::of(Ty::STRING)],
                    _ => Vec::new(),
                };
                if let Some(call) = self.calls.get(&(start, call_end(call))) {
                    match self.protocol {
                        Some(protocol) => {
                            let reply = reply_of(call, protocol);
                            let seeded = reply.reply().and_then(|(command, _, _)| {
                                self.seeds.reply_range(self.source, call, command)
                            });
                            match seeded {
                                Some(range) => reply.within(range),
                                None => reply,
                            }
                        }
                        None => Inferred::any(),
                    }
                } else if let (Some(name), Call::AnonymousCall(args)) = (name, call) {
                    let direct = match &**args {
                        FunctionArgs::Parentheses { arguments, .. } => arguments
                            .iter()
                            .next()
                            .is_some_and(|e| matches!(e, Expression::FunctionCall(_))),
                        _ => false,
                    };
                    let literal = match &**args {
                        FunctionArgs::Parentheses { arguments, .. } => {
                            arguments.iter().next().and_then(|e| match e {
                                Expression::String(token) => {
                                    let text = crate::calls::string_value(token)?;
                                    Some((text.trim().parse::<f64>().ok()?, self.span(token)))
                                }
                                _ => None,
                            })
                        }
                        _ => None,
                    };
                    self.builtin(&name, &values, direct, literal)
                } else if let (0, Some(var), Call::AnonymousCall(_)) = (i, table, call)
                    && let Some(body) = self.bodies.get(&var)
                    && let Some(value) = env.returned(*body)
                {
                    own_result(value)
                } else if let Some(var) = table
                    && let Some(name) = match call {
                        Call::AnonymousCall(_) if i == 1 => member,
                        Call::MethodCall(method) if i == 0 => {
                            Some(method.name().token().to_string())
                        }
                        _ => None,
                    }
                    && let Some(body) = self.field_bodies.get(&(var, name))
                    && let Some(value) = env.returned(*body)
                {
                    // A function a table's field always holds.
                    own_result(value)
                } else if let Call::MethodCall(method) = call {
                    let name = method.name().token().to_string();
                    if current.ty.within(Ty::STRING) && STRING_RESULTS.contains(&name.as_str()) {
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
        }
    }

    fn builtin(
        &self,
        name: &str,
        args: &[Inferred],
        direct: bool,
        literal: Option<(f64, crate::Span)>,
    ) -> Inferred {
        let nil = Inferred::of(Ty::NIL);
        let arg = |i: usize| args.get(i).unwrap_or(&nil);
        let all_int = || args.iter().all(|a| a.ty.subset(Ty::INT)) && !args.is_empty();
        match name {
            "cjson.decode" => Inferred::any().with_origin(Origin::Decoded),
            // What `assert` lets through is its argument (it raises on
            // `false` and nil): a decoded document stays one.
            "assert" if matches!(arg(0).origin, Some(Origin::Decoded)) => arg(0).clone(),
            "tonumber" => {
                let x = arg(0);
                if args.len() == 1 && x.ty.within(Ty::NUMBER) {
                    return x.clone();
                }
                // `tonumber(nil)`, `tonumber(false)`: nil.
                if x.ty.within(Ty::FALSY) {
                    return Inferred::of(Ty::NIL).with_origin(Origin::Tonumber {
                        of: x.origin.clone().map(Box::new),
                    });
                }
                // `tonumber('1.5')`.
                if let Some((n, span)) = literal.filter(|(n, _)| n.fract() != 0.0 && n.is_finite())
                {
                    return Inferred::of(Ty::FLOAT).within(Range::exact(n)).with_origin(
                        Origin::Fraction {
                            why: format!("{n} is not an integer"),
                            span,
                            infinite: false,
                        },
                    );
                }
                // A float counter's reply.
                if let Some((command, _, false)) = x.reply()
                    && FLOAT_REPLIES.contains(&command)
                    && !x.ty.intersects(Ty::FALSY)
                    && let Some(Origin::Reply { span, .. }) = &x.origin
                {
                    // Redis writes it as a number Lua reads (`inf` too).
                    return Inferred::of(Ty::NUMBER).with_origin(Origin::Fraction {
                        why: format!("{command} replies a number that may have a fraction"),
                        span: *span,
                        infinite: false,
                    });
                }
                // nil for a nil reply: the argument may be `false`. An
                // element of a reply is nil only past its end (which
                // `ipairs` never reaches): it counts when it may be `false`.
                let falsy = match &x.origin {
                    Some(Origin::Element { .. }) => x.ty.intersects(Ty::FALSE),
                    // The caller's text: kept, for what its digits become.
                    Some(Origin::Input { .. }) => true,
                    _ => x.ty.intersects(Ty::FALSY),
                };
                let of = x.origin.clone().filter(|_| falsy || direct);
                Inferred::of(Ty::NUMBER.union(Ty::NIL))
                    .within(x.range)
                    .with_origin(Origin::Tonumber {
                        of: of.map(Box::new),
                    })
            }
            "tostring" | "type" | "string.format" | "string.rep" | "string.sub"
            | "string.lower" | "string.upper" | "string.char" | "string.reverse"
            | "table.concat" | "cjson.encode" | "cmsgpack.pack" | "redis.sha1hex" | "bit.tohex"
            | "struct.pack" => Inferred::of(Ty::STRING),
            "math.floor" | "math.ceil" => {
                let x = arg(0);
                let range = if name == "math.floor" {
                    x.range.floor()
                } else {
                    x.range.ceil()
                };
                let value = Inferred::of(Ty::INT).within(range);
                match &x.origin {
                    // Rounding keeps infinity: not an integer Redis takes.
                    Some(Origin::Fraction {
                        span,
                        infinite: true,
                        ..
                    }) => Inferred::of(Ty::NUMBER)
                        .within(range)
                        .with_origin(Origin::Fraction {
                            why: format!(
                                "it may be infinite (a division by a number that may be 0, or `math.huge`), and `{name}` keeps it infinite"
                            ),
                            span: *span,
                            infinite: true,
                        }),
                    Some(Origin::Fraction { why, span, .. })
                        if why.starts_with("a division") && range.lo <= 0.0 =>
                    {
                        value.with_origin(Origin::Rounded { span: *span })
                    }
                    _ => value,
                }
            }
            "string.len" | "table.getn" => {
                Inferred::of(Ty::INT).within(Range::new(0.0, f64::INFINITY))
            }
            "bit.band" | "bit.bor" | "bit.bxor" | "bit.bnot" | "bit.lshift" | "bit.rshift"
            | "bit.arshift" | "bit.tobit" => {
                Inferred::of(Ty::INT).within(Range::new(-2_147_483_648.0, 2_147_483_647.0))
            }
            "math.abs" | "math.max" | "math.min" => {
                let ty = if all_int() { Ty::INT } else { Ty::NUMBER };
                let ranges = args.iter().map(|a| a.range);
                let range = match name {
                    "math.max" => ranges
                        .reduce(|a, b| Range::new(a.lo.max(b.lo), a.hi.max(b.hi)))
                        .unwrap_or(Range::ANY),
                    "math.min" => ranges
                        .reduce(|a, b| Range::new(a.lo.min(b.lo), a.hi.min(b.hi)))
                        .unwrap_or(Range::ANY),
                    _ => {
                        let r = arg(0).range;
                        if r.lo >= 0.0 {
                            r
                        } else {
                            Range::new(0.0, r.hi.abs().max(r.lo.abs()))
                        }
                    }
                };
                let value = Inferred::of(ty).within(range);
                match Origin::fraction_of(args) {
                    Some(o) if ty != Ty::INT => value.with_origin(o),
                    _ => value,
                }
            }
            "math.random" if !args.is_empty() => Inferred::of(Ty::INT),
            "math.random" | "math.sqrt" | "math.fmod" | "math.log" | "math.log10" | "math.exp"
            | "math.pow" | "math.modf" | "math.frexp" | "math.ldexp" | "math.sin" | "math.cos"
            | "math.tan" | "math.deg" | "math.rad" => Inferred::of(Ty::NUMBER),
            "redis.error_reply" => Inferred::of(Ty::ERROR),
            "redis.status_reply" => Inferred::of(Ty::STATUS),
            _ => Inferred::any(),
        }
    }

    /// `value[key]`: a reply's element, a status's `ok`, the one field of
    /// a RESP3 reply table; otherwise not known.
    pub(crate) fn index(&self, value: &Inferred, key: Option<&Key>) -> Inferred {
        if let Some(element) = self.element(value, key) {
            return element;
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

    /// Whether the caller passes `KEYS[n]` / `ARGV[n]` (`table` names
    /// which), as the declared counts say; `None` when they do not say.
    fn passed(&self, table: &str, n: f64) -> Option<bool> {
        let declared = self.declared?;
        let (count, variadic) = if table == "KEYS" {
            (declared.keys, declared.keys_variadic)
        } else {
            (declared.args, declared.args_variadic)
        };
        if variadic || n.fract() != 0.0 || n < 1.0 {
            return None;
        }
        Some(n <= count as f64)
    }

    /// An element of an array reply: `key` is the literal index, `None`
    /// for a computed one.
    fn element(&self, value: &Inferred, key: Option<&Key>) -> Option<Inferred> {
        let (command, _, pcall) = value.reply()?;
        if pcall || value.ty.intersects(Ty::ERROR) {
            return None;
        }
        let number = match key {
            Some(Key::Number(n)) => Some(*n),
            Some(Key::Name(_)) => return None,
            None => None,
        };
        if SCANS.contains(&command) && value.ty.intersects(Ty::ARRAY) {
            return match number {
                Some(1.0) => Some(Inferred::of(Ty::STRING).with_origin(Origin::Cursor {
                    command: command.to_string(),
                })),
                Some(2.0) => Some(Inferred::of(Ty::ARRAY)),
                _ => None,
            };
        }
        if self.protocol == Some(Protocol::Resp3)
            && value.ty.within(Ty::ARRAY.union(Ty::NIL))
            && self.flat_under_resp2(value)
        {
            // Pairs come as `{member, score}` arrays under RESP3.
            let pair = Inferred::of(Ty::ARRAY).with_origin(Origin::Element {
                command: command.to_string(),
            });
            return Some(Inferred {
                ty: Ty::ARRAY.union(Ty::NIL),
                ..pair
            });
        }
        if self.protocol != Some(Protocol::Resp2)
            || !value.ty.within(Ty::ARRAY.union(Ty::PAIRS).union(Ty::FALSE))
        {
            return None;
        }
        let element = |ty: Ty| {
            Inferred::of(ty).with_origin(Origin::Element {
                command: command.to_string(),
            })
        };
        if command == "TIME" {
            return Some(match number {
                Some(1.0) => element(Ty::STRING).within(Range::new(TIME_SECONDS.0, TIME_SECONDS.1)),
                Some(2.0) => element(Ty::STRING).within(Range::new(0.0, 999_999.0)),
                _ => element(Ty::STRING.union(Ty::NIL)),
            });
        }
        // Past the end, any index gives nil.
        if STRING_ARRAYS.contains(&command) {
            return Some(element(Ty::STRING.union(Ty::NIL)));
        }
        if NULLABLE_ARRAYS.contains(&command) {
            // One element per key or field asked for.
            let asked = self.requested(value).unwrap_or(0);
            let inside = number.is_some_and(|n| n >= 1.0 && n <= asked as f64);
            let ty = Ty::STRING.union(Ty::FALSE);
            return Some(element(if inside { ty } else { ty.union(Ty::NIL) }));
        }
        None
    }

    /// Whether the call of the reply `value` gives a flat table of pairs
    /// under RESP2 (WITHSCORES, ZPOPMIN, HRANDFIELD ... WITHVALUES).
    fn flat_under_resp2(&self, value: &Inferred) -> bool {
        let Some(Origin::Reply { span, .. }) = &value.origin else {
            return false;
        };
        let Some(call) = self.calls.get(&(span.start.offset, span.end.offset)) else {
            return false;
        };
        let shapes: Vec<ArgShape<'_>> = call.args.iter().map(CallArg::shape).collect();
        replies::of_call_in(Protocol::Resp2, &shapes)
            .is_some_and(|lua| lua.contains(LuaTypes::PAIRS))
    }

    /// How many keys (MGET) or fields (HMGET) the call of the reply
    /// `value` asks for, when none of its arguments spreads.
    fn requested(&self, value: &Inferred) -> Option<usize> {
        let Some(Origin::Reply { command, span, .. }) = &value.origin else {
            return None;
        };
        let call = self.calls.get(&(span.start.offset, span.end.offset))?;
        if call.has_spread() {
            return None;
        }
        let fixed = if command == "HMGET" { 2 } else { 1 };
        call.args.len().checked_sub(fixed)
    }

    /// What iterating over `value` with `ipairs` / `pairs` gives as
    /// values: an element of a reply, never nil.
    pub(crate) fn iterated(&self, value: &Inferred) -> Inferred {
        match self.element(value, None) {
            Some(element) => Inferred {
                ty: element.ty.minus(Ty::NIL),
                ..element
            },
            None => Inferred::any(),
        }
    }
}

/// String methods (`s:sub(...)`) that give a string.
const STRING_RESULTS: &[&str] = &["sub", "lower", "upper", "rep", "reverse", "format"];

/// What a call of the script's own function gives, from what it returns.
fn own_result(value: Inferred) -> Inferred {
    // A call of the script's own function: the types it
    // returns and the reply they come from. Number hazards
    // (fractions, differences) were computed over unknown
    // parameters: they are not kept. Nor is a nil reply as
    // the reason it may be `false` or nil: the script is
    // taken to reason about what its function gives (a
    // test of one call, `if held() == nil then`, covers
    // the next), and a boolean it gives is meant as one.
    let falsy = value.ty.intersects(Ty::FALSY);
    let origin = value.origin.and_then(|o| {
        // A boolean it makes is its meant reply.
        let hazard = matches!(
            o,
            Origin::Fraction { .. }
                | Origin::Rounded { .. }
                | Origin::Difference { .. }
                | Origin::Boolean { .. }
        );
        let why_false = falsy && o.explains_false();
        match o {
            _ if hazard => None,
            // Still a reply: its types stay what Redis gives.
            Origin::Reply { .. } | Origin::Element { .. } if why_false => {
                Some(Origin::Trusted { of: Box::new(o) })
            }
            _ if why_false => None,
            o => Some(o),
        }
    });
    Inferred {
        ty: value.ty,
        origin,
        range: Range::ANY,
    }
}
