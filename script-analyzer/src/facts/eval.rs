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
use super::{FieldKey, Types, index_key, number};
use crate::scope::Resolution;
use full_moon::ast::{BinOp, Expression, Field, FunctionBody, Suffix, TableConstructor, UnOp, Var};
use full_moon::tokenizer::TokenReference;

mod chains;
mod elements;

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
}
