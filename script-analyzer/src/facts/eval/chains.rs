//! The value of a call chain (`a.b(c)[d]:e()`): each suffix after the
//! prefix, `redis.call` / `redis.pcall` with their replies, and the Lua
//! libraries' functions and string methods.

use super::{Env, suffix_key};
use crate::facts::value::{Inferred, Origin, Range, Ty};
use crate::facts::{FieldKey, Key, Types, call_end, index_key, reply_of};
use crate::scope::Resolution;
use full_moon::ast::{Call, Expression, FunctionArgs, Index, Prefix, Suffix};
use full_moon::node::Node;

/// Float counters: their reply is a number that may have a fraction, as
/// text. (Scores are left out: scripts often keep integer timestamps in
/// them.)
const FLOAT_REPLIES: &[&str] = &["INCRBYFLOAT", "HINCRBYFLOAT"];

impl Types<'_> {
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
    pub(super) fn suffix(
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

    pub(super) fn builtin(
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
