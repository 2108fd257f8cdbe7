//! The flow-insensitive summary: every value assigned to each local, anywhere
//! in the script, and every use of each local.
//!
//! The summary is what a local may hold at any time. The flow walk uses
//! it where the order of events is not known: an
//! upvalue read inside a function (called at any time), and a local that a
//! nested function assigns.

use super::value::Ty;
use super::{Key, Types, index_key};
use crate::Span;
use full_moon::ast::{
    BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody, Index, LastStmt, Parameter,
    Prefix, Stmt, Suffix, TableConstructor, UnOp, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::TokenReference;
use std::collections::{HashMap, HashSet};

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
    /// An argument of a library function that neither keeps its
    /// arguments nor calls back into the script (`ipairs(t)`,
    /// `table.insert(t, v)`, `cjson.encode(t)`): its name; or of `#`.
    Library(&'static str),
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
pub(super) enum Def<'a> {
    Expr(&'a Expression),
    Value(Ty),
}

/// Collects the values assigned to each local and the uses of each.
pub(super) struct Walker<'t, 'a> {
    pub types: &'t Types<'t>,
    pub defs: HashMap<usize, Vec<Def<'a>>>,
    pub uses: HashMap<usize, Vec<Use>>,
    pub inputs_assigned: bool,
    /// The function each local is declared in: the address of its body,
    /// 0 for the main chunk.
    pub declared_in: HashMap<usize, usize>,
    /// Locals assigned in a function other than their own.
    pub escaping: HashSet<usize>,
    /// Locals used in a function other than their own.
    pub foreign: HashSet<usize>,
    /// The functions being walked (their bodies' addresses), innermost last.
    pub functions: Vec<usize>,
    /// The body of the function each local is declared with
    /// (`local function f`, `local f = function`).
    pub bodies: HashMap<usize, usize>,
    /// What each field of a local table is set to, by table and name: a
    /// function body's address (`function T.name`), or 0 for any other
    /// store (`T.name = v`).
    pub field_functions: HashMap<(usize, String), Vec<usize>>,
    /// The number of named parameters of each function, by body.
    pub parameter_counts: HashMap<usize, usize>,
    /// The tables held in a named field of a local (`t.items`) that may
    /// change where the walk does not see it: stored into
    /// (`t.items[i] = v`), passed to `table.insert` or to a function,
    /// kept elsewhere (`local l = t.items`), called.
    pub nested_changed: HashSet<(usize, String)>,
    /// The chain being walked is an assignment's target.
    pub storing: bool,
}

impl<'t, 'a> Walker<'t, 'a> {
    /// A walker that has found nothing yet.
    pub(super) fn new(types: &'t Types<'t>) -> Self {
        Walker {
            types,
            defs: HashMap::new(),
            uses: HashMap::new(),
            inputs_assigned: false,
            declared_in: HashMap::new(),
            escaping: HashSet::new(),
            foreign: HashSet::new(),
            functions: Vec::new(),
            bodies: HashMap::new(),
            field_functions: HashMap::new(),
            parameter_counts: HashMap::new(),
            nested_changed: HashSet::new(),
            storing: false,
        }
    }
}

impl<'a> Walker<'_, 'a> {
    fn local(&self, token: &TokenReference) -> Option<usize> {
        self.types.local(token)
    }

    fn current(&self) -> usize {
        self.functions.last().copied().unwrap_or(0)
    }

    fn def(&mut self, token: &TokenReference, def: Def<'a>) {
        if let Some(var) = self.local(token) {
            self.defs.entry(var).or_default().push(def);
            let current = self.current();
            if *self.declared_in.entry(var).or_insert(current) != current {
                self.escaping.insert(var);
                self.foreign.insert(var);
            }
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
            if self.declared_in.get(&var) != Some(&self.current()) {
                self.foreign.insert(var);
            }
            let span = self.types.span(token);
            self.uses.entry(var).or_default().push(Use { span, kind });
        }
    }

    pub fn block(&mut self, block: &'a Block) {
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
        let named = body
            .parameters()
            .iter()
            .filter(|p| matches!(p, Parameter::Name(_)))
            .count();
        self.parameter_counts
            .insert(std::ptr::from_ref(body) as usize, named);
        self.functions.push(std::ptr::from_ref(body) as usize);
        for parameter in body.parameters() {
            if let Parameter::Name(name) = parameter {
                self.def(name, Def::Value(Ty::ANY));
            }
        }
        self.block(body.block());
        self.functions.pop();
    }

    pub fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::LocalAssignment(local) => {
                let exprs: Vec<&Expression> = local.expressions().iter().collect();
                for expr in &exprs {
                    self.expr(expr, UseKind::Other);
                }
                let names: Vec<&TokenReference> = local.names().iter().collect();
                for (name, expr) in names.iter().zip(&exprs) {
                    if let Expression::Function(function) = super::unparenthesized(expr)
                        && let Some(var) = self.local(name)
                    {
                        self.bodies
                            .insert(var, std::ptr::from_ref(function.body()) as usize);
                    }
                }
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
                            if let (Prefix::Name(table), [Suffix::Index(index)]) =
                                (var.prefix(), suffixes.as_slice())
                                && let Some(Key::Name(field)) = index_key(index)
                                && let Some(table) = self.local(table)
                            {
                                self.field_functions
                                    .entry((table, field))
                                    .or_default()
                                    .push(0);
                            }
                            self.storing = true;
                            self.chain(var.prefix(), &suffixes, UseKind::Other);
                            self.storing = false;
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
                let path: Vec<&TokenReference> = name.names().iter().collect();
                let member = match (path.as_slice(), name.method_name()) {
                    ([table, field], None) => Some((*table, field.token().to_string())),
                    ([table], Some(method)) => Some((*table, method.token().to_string())),
                    _ => None,
                };
                if let Some((table, field)) = member
                    && let Some(var) = self.local(table)
                {
                    self.field_functions
                        .entry((var, field))
                        .or_default()
                        .push(std::ptr::from_ref(decl.body()) as usize);
                }
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
                if let Some(var) = self.local(local.name()) {
                    self.bodies
                        .insert(var, std::ptr::from_ref(local.body()) as usize);
                }
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
                    UnOp::Hash(_) => UseKind::Library("#"),
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
            Expression::TableConstructor(table) => self.table(table, kind),
            Expression::Var(Var::Name(token)) => self.use_(token, kind),
            Expression::Var(Var::Expression(var)) => {
                let suffixes: Vec<&Suffix> = var.suffixes().collect();
                self.chain(var.prefix(), &suffixes, kind);
            }
            _ => {}
        }
    }

    /// The fields of a constructor used as `kind`: a table written into
    /// the argument of an encoder (`cjson.encode({items = t})`) or into a
    /// returned table is read there and kept nowhere; anywhere else it is
    /// stored.
    fn table(&mut self, table: &'a TableConstructor, kind: UseKind) {
        let kind = match kind {
            UseKind::Library("cjson.encode" | "cmsgpack.pack") | UseKind::Returned => kind,
            _ => UseKind::Other,
        };
        for field in table.fields() {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.expr(key, UseKind::Other);
                    self.expr(value, kind.clone());
                }
                Field::NameKey { value, .. } => self.expr(value, kind.clone()),
                Field::NoKey(value) => self.expr(value, kind.clone()),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    fn chain(&mut self, prefix: &'a Prefix, suffixes: &[&'a Suffix], kind: UseKind) {
        let storing = std::mem::take(&mut self.storing);
        self.nested(prefix, suffixes, &kind, storing);
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
            } else if let Some(path) = library_path(global.as_deref(), suffixes, i) {
                UseKind::Library(path)
            } else {
                UseKind::Other
            };
            if let FunctionArgs::Parentheses { arguments, .. } = args {
                for arg in arguments.iter() {
                    self.expr(arg, kind.clone());
                }
            } else if let FunctionArgs::TableConstructor(table) = args {
                self.table(table, kind);
            }
        }
    }
}

impl Walker<'_, '_> {
    /// Notes a table held in the named field of a local (`t.items`) that
    /// the chain may change: see [`Walker::nested_changed`]. `kind` is the
    /// use of the whole chain; `storing`: the chain is a target.
    fn nested(&mut self, prefix: &Prefix, suffixes: &[&Suffix], kind: &UseKind, storing: bool) {
        let (Prefix::Name(token), Some(Suffix::Index(index))) = (prefix, suffixes.first()) else {
            return;
        };
        let (Some(var), Some(Key::Name(name))) = (self.local(token), index_key(index)) else {
            return;
        };
        let changed = match suffixes.get(1) {
            // `t.items` itself: replaced when stored (the walk sees it).
            None => {
                !storing
                    && matches!(
                        kind,
                        UseKind::Other
                            | UseKind::Library("table.insert" | "table.remove" | "table.sort")
                    )
            }
            // `t.items[i] = v`; read, `t.items[i]` changes nothing.
            Some(Suffix::Index(_)) => storing,
            // `t.items(...)`, `t.items:m(...)`.
            Some(_) => true,
        };
        if changed {
            self.nested_changed.insert((var, name));
        }
    }
}

/// The library functions whose arguments [`UseKind::Library`] names.
pub(crate) const LIBRARY_FUNCTIONS: &[&str] = &[
    "ipairs",
    "pairs",
    "next",
    "unpack",
    "type",
    "tostring",
    "tonumber",
    "select",
    "table.insert",
    "table.remove",
    "table.concat",
    "table.getn",
    "table.sort",
    "table.unpack",
    "cjson.encode",
    "cmsgpack.pack",
    "cjson.decode",
    "cmsgpack.unpack",
    "string.len",
    "string.sub",
    "string.upper",
    "string.lower",
    "string.find",
    "string.match",
    "string.gmatch",
    "string.gsub",
    "string.byte",
    "string.rep",
    "string.reverse",
    "string.format",
];

/// The library function called by suffix `i` of a chain starting with the
/// global `global`, if it is one of [`LIBRARY_FUNCTIONS`].
fn library_path(global: Option<&str>, suffixes: &[&Suffix], i: usize) -> Option<&'static str> {
    let global = global?;
    let path = match (i, suffixes.first()) {
        (0, _) => global.to_string(),
        (1, Some(Suffix::Index(index))) => match index_key(index) {
            Some(Key::Name(name)) => format!("{global}.{name}"),
            _ => return None,
        },
        _ => return None,
    };
    LIBRARY_FUNCTIONS.iter().copied().find(|f| *f == path)
}

/// A call or `...`: a list of values.
pub(super) fn is_multi(expr: &Expression) -> bool {
    match expr {
        Expression::FunctionCall(_) => true,
        Expression::Symbol(token) => token.token().to_string() == "...",
        _ => false,
    }
}
