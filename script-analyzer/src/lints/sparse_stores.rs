//! Stores that leave holes in an array: `t[k] = v` where `k` is the
//! control variable of a loop around the store, and the store sits in a
//! branch of that loop's body, so that some rounds skip their index.
//!
//! `for i, v in ipairs(items) do if keep(v) then out[i] = v end end`
//! copies the kept values at their old positions: `out[2]` is nil when the
//! second item is dropped, and whatever reads `out` as an array (Redis
//! converting a returned table, `unpack`, `#`) stops at the first hole.
//! A store made on every round (no branch between it and the loop, or one
//! in every branch of an `if` that has an `else`) fills every index, and
//! so does a local table that the same loop also stores at `k` outside a
//! branch.
//!
//! Invariants: the loops and branches are those of the function the store
//! is in (a function written inside a loop runs at other times); only
//! plain names are followed (`t` and `k` are locals, `k` the loop's own).
//!
//! The same walk tells which local tables are only ever stored at string
//! keys ([`Stores::string_keyed`]): `t[field] = value` with a key the value facts
//! say is a string (an element of HGETALL, an input, `'x:' .. id`), and no
//! store at a number, no `table.insert`.

use super::Context;
use crate::Span;
use crate::facts::Ty;
use full_moon::ast::{
    Assignment, Block, Call, Expression, FunctionArgs, FunctionBody, FunctionCall, GenericFor, If,
    Index, NumericFor, Prefix, Repeat, Stmt, Suffix, Var, While,
};
use full_moon::tokenizer::TokenReference;
use full_moon::visitors::Visitor;
use std::collections::{HashMap, HashSet};

/// What the walk found.
pub(crate) struct Stores {
    /// The first store of each local table that may leave holes.
    pub sparse: HashMap<usize, Span>,
    /// The first store of each local table stored at string keys only.
    pub string_keyed: HashMap<usize, Span>,
}

/// The stores into the script's local tables.
pub(crate) fn stores(cx: &Context<'_>) -> Stores {
    let mut finder = Finder {
        cx,
        frames: Vec::new(),
        sparse: HashMap::new(),
        dense: HashSet::new(),
        keyed: HashMap::new(),
        positional: HashSet::new(),
    };
    finder.visit_ast(cx.ast);
    let Finder {
        sparse,
        mut dense,
        keyed,
        positional,
        ..
    } = finder;
    // Stores in a branch may still be made on every round.
    if !sparse.is_empty() {
        Rounds {
            cx,
            candidates: sparse.keys().copied().collect(),
            dense: &mut dense,
        }
        .block(cx.ast.nodes());
    }
    Stores {
        sparse: sparse
            .into_iter()
            .filter(|(table, _)| !dense.contains(table))
            .collect(),
        string_keyed: keyed
            .into_iter()
            .filter(|(table, _)| !positional.contains(table))
            .collect(),
    }
}

/// The second walk: the loops whose every round stores a candidate table
/// at the loop's index.
struct Rounds<'c, 'a, 'd> {
    cx: &'c Context<'a>,
    candidates: Vec<usize>,
    dense: &'d mut HashSet<usize>,
}

impl Rounds<'_, '_, '_> {
    fn local(&self, token: &TokenReference) -> Option<usize> {
        self.cx.types.local(token)
    }

    fn block(&mut self, block: &Block) {
        for stmt in block.stmts() {
            match stmt {
                Stmt::NumericFor(node) => {
                    let vars: Vec<usize> = self.local(node.index_variable()).into_iter().collect();
                    self.round(&vars, node.block());
                    self.block(node.block());
                }
                Stmt::GenericFor(node) => {
                    let vars: Vec<usize> =
                        node.names().iter().filter_map(|n| self.local(n)).collect();
                    self.round(&vars, node.block());
                    self.block(node.block());
                }
                Stmt::While(node) => self.block(node.block()),
                Stmt::Repeat(node) => self.block(node.block()),
                Stmt::Do(node) => self.block(node.block()),
                Stmt::If(node) => {
                    self.block(node.block());
                    for else_if in node.else_if().into_iter().flatten() {
                        self.block(else_if.block());
                    }
                    if let Some(block) = node.else_block() {
                        self.block(block);
                    }
                }
                Stmt::LocalFunction(node) => self.block(node.body().block()),
                Stmt::FunctionDeclaration(node) => self.block(node.body().block()),
                _ => {}
            }
        }
    }

    /// Marks dense the candidates that every round of a loop over `vars`
    /// (its body `body`) stores at one of them.
    fn round(&mut self, vars: &[usize], body: &Block) {
        for i in 0..self.candidates.len() {
            let table = self.candidates[i];
            if vars
                .iter()
                .any(|&key| always_stores(self.cx, body, table, key))
            {
                self.dense.insert(table);
            }
        }
    }
}

/// Whether every run of `block` stores `table[key]`.
fn always_stores(cx: &Context<'_>, block: &Block, table: usize, key: usize) -> bool {
    block.stmts().any(|stmt| match stmt {
        Stmt::Assignment(assignment) => assignment
            .variables()
            .iter()
            .any(|target| indexed_by(cx, target) == Some((table, key))),
        Stmt::Do(node) => always_stores(cx, node.block(), table, key),
        Stmt::If(node) => {
            node.else_block()
                .is_some_and(|block| always_stores(cx, block, table, key))
                && always_stores(cx, node.block(), table, key)
                && node
                    .else_if()
                    .into_iter()
                    .flatten()
                    .all(|e| always_stores(cx, e.block(), table, key))
        }
        _ => false,
    })
}

/// `t[k] = ...` with `t` and `k` locals: `(t, k)`.
fn indexed_by(cx: &Context<'_>, var: &Var) -> Option<(usize, usize)> {
    let Var::Expression(var) = var else {
        return None;
    };
    let Prefix::Name(table) = var.prefix() else {
        return None;
    };
    let suffixes: Vec<&Suffix> = var.suffixes().collect();
    let [Suffix::Index(Index::Brackets { expression, .. })] = suffixes.as_slice() else {
        return None;
    };
    let Expression::Var(Var::Name(key)) = &**expression else {
        return None;
    };
    Some((cx.types.local(table)?, cx.types.local(key)?))
}

/// What encloses the point being visited, innermost last.
enum Frame {
    /// A loop, with its control variables.
    Loop(Vec<usize>),
    /// A branch (`if`).
    Branch,
    /// A function body: what encloses it runs at another time.
    Function,
}

struct Finder<'c, 'a> {
    cx: &'c Context<'a>,
    frames: Vec<Frame>,
    /// Tables stored at a loop's index in a branch of the loop.
    sparse: HashMap<usize, Span>,
    /// Tables stored at a loop's index on every round.
    dense: HashSet<usize>,
    /// Tables stored at a computed string key.
    keyed: HashMap<usize, Span>,
    /// Tables stored at a number, or at a key that may be one, or appended to.
    positional: HashSet<usize>,
}

impl Finder<'_, '_> {
    fn local(&self, token: &full_moon::tokenizer::TokenReference) -> Option<usize> {
        self.cx.types.local(token)
    }

    /// `t[k] = ...` with `t` and `k` locals: `(t, k)`.
    fn indexed_store(&self, var: &Var) -> Option<(usize, usize)> {
        indexed_by(self.cx, var)
    }

    /// `t[key] = ...` with `t` a local: `(t, key)`.
    fn keyed_store<'v>(&self, var: &'v Var) -> Option<(usize, &'v Expression)> {
        let Var::Expression(var) = var else {
            return None;
        };
        let Prefix::Name(table) = var.prefix() else {
            return None;
        };
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        let [Suffix::Index(Index::Brackets { expression, .. })] = suffixes.as_slice() else {
            return None;
        };
        Some((self.local(table)?, &**expression))
    }

    /// Whether a branch lies between the point and the loop whose control
    /// variable `key` is: `None` when no loop of the function has it.
    fn branch_since_loop(&self, key: usize) -> Option<bool> {
        let mut branch = false;
        for frame in self.frames.iter().rev() {
            match frame {
                Frame::Loop(vars) if vars.contains(&key) => return Some(branch),
                Frame::Loop(_) => {}
                Frame::Branch => branch = true,
                Frame::Function => return None,
            }
        }
        None
    }
}

impl Visitor for Finder<'_, '_> {
    fn visit_numeric_for(&mut self, node: &NumericFor) {
        let vars = self.local(node.index_variable()).into_iter().collect();
        self.frames.push(Frame::Loop(vars));
    }

    fn visit_numeric_for_end(&mut self, _node: &NumericFor) {
        self.frames.pop();
    }

    fn visit_generic_for(&mut self, node: &GenericFor) {
        let vars = node.names().iter().filter_map(|n| self.local(n)).collect();
        self.frames.push(Frame::Loop(vars));
    }

    fn visit_generic_for_end(&mut self, _node: &GenericFor) {
        self.frames.pop();
    }

    fn visit_while(&mut self, _node: &While) {
        self.frames.push(Frame::Loop(Vec::new()));
    }

    fn visit_while_end(&mut self, _node: &While) {
        self.frames.pop();
    }

    fn visit_repeat(&mut self, _node: &Repeat) {
        self.frames.push(Frame::Loop(Vec::new()));
    }

    fn visit_repeat_end(&mut self, _node: &Repeat) {
        self.frames.pop();
    }

    fn visit_if(&mut self, _node: &If) {
        self.frames.push(Frame::Branch);
    }

    fn visit_if_end(&mut self, _node: &If) {
        self.frames.pop();
    }

    fn visit_function_body(&mut self, _node: &FunctionBody) {
        self.frames.push(Frame::Function);
    }

    fn visit_function_body_end(&mut self, _node: &FunctionBody) {
        self.frames.pop();
    }

    fn visit_function_call(&mut self, call: &FunctionCall) {
        // `table.insert(t, ...)`: appended to.
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let (
            Prefix::Name(library),
            [
                Suffix::Index(Index::Dot { name, .. }),
                Suffix::Call(Call::AnonymousCall(args)),
            ],
        ) = (call.prefix(), suffixes.as_slice())
        else {
            return;
        };
        if library.token().to_string() != "table" || name.token().to_string() != "insert" {
            return;
        }
        if let FunctionArgs::Parentheses { arguments, .. } = &**args
            && let Some(Expression::Var(Var::Name(table))) = arguments.iter().next()
            && let Some(table) = self.local(table)
        {
            self.positional.insert(table);
        }
    }

    fn visit_assignment(&mut self, assignment: &Assignment) {
        for target in assignment.variables() {
            if let Some((table, key)) = self.keyed_store(target) {
                let value = self.cx.types.of(key);
                let string =
                    value.ty.intersects(Ty::STRING) && value.ty.subset(Ty::STRING.union(Ty::NIL));
                if string {
                    let span = self.cx.span_of(assignment);
                    self.keyed.entry(table).or_insert(span);
                } else {
                    self.positional.insert(table);
                }
            }
            let Some((table, key)) = self.indexed_store(target) else {
                continue;
            };
            match self.branch_since_loop(key) {
                Some(true) => {
                    let span = self.cx.span_of(assignment);
                    self.sparse.entry(table).or_insert(span);
                }
                Some(false) => {
                    self.dense.insert(table);
                }
                None => {}
            }
        }
    }
}
