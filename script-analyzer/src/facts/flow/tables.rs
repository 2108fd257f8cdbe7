//! Tables in the flow walk: what is stored in a followed table's fields
//! and elements, its length, and values unpacked from a call.

use crate::facts::eval::expr_key;
use crate::facts::state::State;
use crate::facts::value::{Inferred, Origin, Range, Ty};
use crate::facts::{FieldKey, Key, index_key, unparenthesized};
use full_moon::ast::{BinOp, Call, Expression, FunctionArgs, Prefix, Suffix, UnOp, Var};

/// Statements the walk may visit before giving up.
use super::{Flow, may_be_empty_reply};

impl Flow<'_, '_> {
    /// `var = value` for a target with suffixes (`t.x`, `t[i]`).
    pub(super) fn store(
        &self,
        state: &mut State,
        var: &full_moon::ast::VarExpression,
        value: Inferred,
        expr: Option<&Expression>,
    ) {
        let Prefix::Name(name) = var.prefix() else {
            return;
        };
        let Some(table) = self.types.local(name) else {
            return;
        };
        if !self.follows_fields(table) {
            return;
        }
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        let [Suffix::Index(index)] = suffixes.as_slice() else {
            return;
        };
        let may_be_nil = value.ty.intersects(Ty::NIL);
        match index_key(index).as_ref().and_then(FieldKey::of) {
            Some(key) => {
                match &key {
                    FieldKey::Index(_) => {
                        self.grow(state, table, may_be_nil, false);
                        self.add_element(state, table, &value);
                    }
                    FieldKey::Name(name) => self.set_list_length(state, table, name, &value, expr),
                    _ => {}
                }
                state.fields.insert((table, key), value);
            }
            None => {
                let append = match index {
                    full_moon::ast::Index::Brackets { expression, .. } => {
                        self.is_append(expression, table)
                    }
                    _ => false,
                };
                // A key surely a string is never a position (`t['1']` is
                // not `t[1]`): it leaves the array part alone. (A nil key
                // raises: a key that is a string or nil is a string here.)
                let name = match index {
                    full_moon::ast::Index::Brackets { expression, .. } => self
                        .at
                        .borrow()
                        .get(&expr_key(expression))
                        .is_some_and(|k| {
                            let k = k.ty.minus(Ty::NIL);
                            k != Ty::EMPTY && k.within(Ty::STRING)
                        }),
                    _ => false,
                };
                // Any field (the elements too, unless the key is a name),
                // or a new name. A key surely a string keeps the names
                // known, the value being what a name not held may be.
                state.fields.retain(|(t, key), _| {
                    *t != table
                        || !matches!(key, FieldKey::LenOf(_))
                            && (name || *key != FieldKey::NamesKnown)
                });
                for ((t, key), field) in state.fields.iter_mut() {
                    let skip = matches!(
                        key,
                        FieldKey::Len | FieldKey::NamesKnown | FieldKey::Anywhere
                    ) || (name && *key == FieldKey::Elements);
                    if *t == table && !skip {
                        *field = field.clone().merge(value.clone());
                    }
                }
                if name && state.fields.contains_key(&(table, FieldKey::NamesKnown)) {
                    let anywhere = match state.fields.remove(&(table, FieldKey::Anywhere)) {
                        Some(old) => old.merge(value.clone()),
                        None => value.clone(),
                    };
                    state.fields.insert((table, FieldKey::Anywhere), anywhere);
                }
                if !name {
                    self.grow(state, table, may_be_nil, append);
                }
            }
        }
    }

    /// `value` is stored at `table.name`: the length of the list there is
    /// followed when it is a command's list reply that may be empty and
    /// nothing else changes it.
    pub(super) fn set_list_length(
        &self,
        state: &mut State,
        table: usize,
        name: &str,
        value: &Inferred,
        expr: Option<&Expression>,
    ) {
        let key = (table, FieldKey::LenOf(name.to_string()));
        let len = if self
            .types
            .nested_changed
            .contains(&(table, name.to_string()))
        {
            None
        } else if may_be_empty_reply(value) {
            let mut len = Inferred::of(Ty::INT).within(Range::new(0.0, f64::INFINITY));
            len.origin = value.origin.clone();
            Some(len)
        } else if let Some(Expression::TableConstructor(list)) = expr.map(unparenthesized) {
            // A list written in place: its length, when known.
            self.constructor_fields(list)
                .into_iter()
                .find_map(|(key, len)| (key == FieldKey::Len).then_some(len))
        } else {
            None
        };
        match len {
            Some(len) => {
                state.fields.insert(key, len);
            }
            None => {
                state.fields.remove(&key);
            }
        }
    }

    /// `value` is stored at a position of `table`: `ipairs` may give it.
    pub(super) fn add_element(&self, state: &mut State, table: usize, value: &Inferred) {
        if let Some(elements) = state.fields.get_mut(&(table, FieldKey::Elements)) {
            *elements = elements.clone().merge(value.clone());
        }
    }

    /// The array part of `table` may have grown by one (exactly one when
    /// `append`), or shrunk when the value stored may be nil.
    pub(super) fn grow(&self, state: &mut State, table: usize, may_be_nil: bool, append: bool) {
        let over = self.looped_over();
        let Some(len) = state.fields.get_mut(&(table, FieldKey::Len)) else {
            return;
        };
        if over.is_some() {
            len.origin = over;
        }
        len.range = if may_be_nil {
            Range::new(0.0, f64::INFINITY)
        } else if append {
            Range::new(len.range.lo + 1.0, len.range.hi + 1.0)
        } else {
            Range::new(len.range.lo, f64::INFINITY)
        };
    }

    /// The `i`-th value of `unpack(t)` (or `table.unpack(t)`), the last
    /// of the values `exprs` assigned, when it is known: an element of an
    /// array reply (without the nil reply as its origin), or the field at
    /// that position of a followed local table. Every value before the
    /// call gives one name.
    pub(super) fn unpacked(
        &self,
        exprs: &[&Expression],
        state: &State,
        i: usize,
    ) -> Option<Inferred> {
        let position = i.checked_sub(exprs.len().checked_sub(1)?)?;
        let Expression::FunctionCall(call) = unparenthesized(exprs.last()?) else {
            return None;
        };
        let Prefix::Name(name) = call.prefix() else {
            return None;
        };
        if self.types.local(name).is_some() {
            return None;
        }
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let args = match (name.token().to_string().as_str(), suffixes.as_slice()) {
            ("unpack", [Suffix::Call(Call::AnonymousCall(args))]) => args,
            (
                "table",
                [
                    Suffix::Index(index),
                    Suffix::Call(Call::AnonymousCall(args)),
                ],
            ) if index_key(index) == Some(Key::Name("unpack".to_string())) => args,
            _ => return None,
        };
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return None;
        };
        let [table] = arguments.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let key = FieldKey::Index(i64::try_from(position).ok()? + 1);
        if let Expression::Var(Var::Name(token)) = unparenthesized(table)
            && let Some(var) = self.types.local(token)
            && let Some(field) = self.field(state, var, &key)
        {
            return Some(field);
        }
        let value = self.at.borrow().get(&expr_key(table)).cloned()?;
        value.reply()?;
        let mut element = self
            .types
            .index(&value, Some(&Key::Number((position + 1) as f64)));
        // Named fields of a record (`local state, group = unpack(HMGET
        // ...)`): the script is taken to know they are there, so their
        // nil reply does not explain a `false`; the types stay, and so
        // does where they come from.
        if element.ty.intersects(Ty::FALSE) {
            element.origin = match element.origin {
                Some(o @ Origin::Element { .. }) => Some(Origin::Trusted { of: Box::new(o) }),
                _ => None,
            };
        }
        (!element.ty.is_any()).then_some(element)
    }

    /// `#t + 1`.
    pub(super) fn is_append(&self, expr: &Expression, table: usize) -> bool {
        let Expression::BinaryOperator {
            lhs,
            binop: BinOp::Plus(_),
            rhs,
        } = unparenthesized(expr)
        else {
            return false;
        };
        let one = matches!(unparenthesized(rhs), Expression::Number(n) if crate::facts::number(n) == Some(1.0));
        let length_of_table = matches!(
            unparenthesized(lhs),
            Expression::UnaryOperator { unop: UnOp::Hash(_), expression }
                if matches!(unparenthesized(expression), Expression::Var(Var::Name(t)) if self.types.local(t) == Some(table))
        );
        one && length_of_table
    }
}
