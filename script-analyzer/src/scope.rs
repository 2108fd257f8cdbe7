//! Name resolution: which name refers to a local (a `local`, a parameter, a
//! loop variable, a local function, or an upvalue of any of those) and which
//! to a global.
//!
//! The lints ask the [`Model`] about a name token they meet while walking the
//! tree; the model was built by one walk that follows Lua 5.1's scoping rules:
//! `local x = x` reads the outer `x`, `local function f` sees itself,
//! `repeat ... until cond` sees the block's locals, a `for` variable lives in
//! its body only.

use full_moon::ast::{
    Ast, Block, Call, Expression, Field, FunctionArgs, FunctionBody, Index, LastStmt, Parameter,
    Prefix, Stmt, Suffix, Var,
};
use full_moon::tokenizer::{TokenReference, TokenType};
use std::borrow::Cow;
use std::collections::HashMap;

/// What a name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// A global (Redis's sandbox, or an error).
    Global,
    /// The local variable with this index in [`Model::variables`].
    Local(usize),
}

/// How a local variable came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableKind {
    /// `local x`.
    Local,
    /// `local function f`.
    Function,
    /// A function parameter.
    Parameter,
    /// A `for` loop variable.
    LoopVariable,
}

/// A local variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// How it was declared.
    pub kind: VariableKind,
    /// Byte offset of the declaring name token.
    pub declared_at: usize,
    /// Whether it is assigned again after its declaration.
    pub reassigned: bool,
}

/// A use of a global name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalUse {
    /// The name.
    pub name: String,
    /// Byte range of the name token.
    pub start: usize,
    /// End of the name token.
    pub end: usize,
}

/// The resolved names of a script.
#[derive(Debug, Default)]
pub struct Model {
    resolutions: HashMap<usize, Resolution>,
    /// Every local variable, in declaration order.
    pub variables: Vec<Variable>,
    /// Reads of globals, in source order.
    pub global_reads: Vec<GlobalUse>,
    /// Assignments to globals (`x = 1`, `function f() end`), in source order.
    pub global_writes: Vec<GlobalUse>,
    /// The variables of the script, in the order they are declared, when
    /// [`Model::variables`] holds others too (those of a statement an
    /// editor replaced, see [`Model::replace_unit`]); `None`: all of them.
    order: Option<Vec<usize>>,
    /// For each statement of the main chunk, the first variable it
    /// declares (or would: the number declared before it); then the
    /// number declared by them all.
    pub(crate) top_level_starts: Vec<usize>,
}

impl Model {
    /// Resolves every name in `ast`.
    pub fn build(ast: &Ast) -> Model {
        let mut builder = Builder {
            model: Model::default(),
            scopes: vec![HashMap::new()],
        };
        // The main chunk's statements one by one, to note where each
        // one's variables start.
        let block = ast.nodes();
        for stmt in block.stmts() {
            builder
                .model
                .top_level_starts
                .push(builder.model.variables.len());
            builder.stmt(stmt);
        }
        builder
            .model
            .top_level_starts
            .push(builder.model.variables.len());
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            for expr in ret.returns() {
                builder.expr(expr);
            }
        }
        let mut model = builder.model;
        model.global_reads.sort_by_key(|g| g.start);
        model.global_writes.sort_by_key(|g| g.start);
        model
    }

    /// What the name `token` (a use or declaration of a variable) refers to,
    /// or `None` when the token is no variable name (a field name, say).
    pub fn resolve(&self, token: &TokenReference) -> Option<Resolution> {
        self.resolutions.get(&offset(token)).copied()
    }

    /// What the name whose token starts at byte `offset` refers to.
    pub(crate) fn resolve_offset(&self, offset: usize) -> Option<Resolution> {
        self.resolutions.get(&offset).copied()
    }

    /// Whether the name `token` (a use of a variable) refers to a global.
    pub fn is_global(&self, token: &TokenReference) -> bool {
        self.resolve(token) == Some(Resolution::Global)
    }

    /// The local variable `token` refers to, if any.
    pub fn local(&self, token: &TokenReference) -> Option<&Variable> {
        match self.resolve(token)? {
            Resolution::Local(i) => self.variables.get(i),
            Resolution::Global => None,
        }
    }

    /// The names of the script's local variables, in the order they are
    /// declared.
    pub fn names(&self) -> Vec<&str> {
        match &self.order {
            None => self.variables.iter().map(|v| v.name.as_str()).collect(),
            Some(order) => order
                .iter()
                .map(|&i| self.variables[i].name.as_str())
                .collect(),
        }
    }

    /// Replaces the names of a statement of the main chunk with those of
    /// `stmt`, which takes its place (an editor's change inside it). The
    /// old statement's names are those resolved at `old_offsets` (the
    /// starts of its tokens), its globals those in `start..end`. `outer`
    /// maps the names of the main chunk's locals in scope at the statement
    /// to their variables; `own` is the variable `local function NAME`
    /// declares, kept. The variables `stmt` declares: a run of new ids
    /// (the old ones stay in [`Model::variables`], unused).
    pub(crate) fn replace_unit(
        &mut self,
        stmt: &Stmt,
        old_offsets: &[usize],
        (start, end): (usize, usize),
        outer: HashMap<String, usize>,
        own: Option<usize>,
    ) -> std::ops::Range<usize> {
        for offset in old_offsets {
            self.resolutions.remove(offset);
        }
        self.global_reads
            .retain(|g| !(start <= g.start && g.start < end));
        self.global_writes
            .retain(|g| !(start <= g.start && g.start < end));
        let first = self.variables.len();
        let mut builder = Builder {
            model: std::mem::take(self),
            scopes: vec![outer],
        };
        match (stmt, own) {
            (Stmt::LocalFunction(local), Some(own)) => {
                builder
                    .model
                    .resolutions
                    .insert(offset(local.name()), Resolution::Local(own));
                if let Some(scope) = builder.scopes.last_mut() {
                    scope.insert(local.name().token().to_string(), own);
                }
                builder.scoped(|b| b.function_body(local.body(), false));
            }
            _ => builder.stmt(stmt),
        }
        *self = builder.model;
        self.global_reads.sort_by_key(|g| g.start);
        self.global_writes.sort_by_key(|g| g.start);
        first..self.variables.len()
    }

    /// Sets the order in which the live variables were declared (see
    /// [`Model::names`]).
    pub(crate) fn set_order(&mut self, order: Vec<usize>) {
        self.order = Some(order);
    }
}

/// The text of a name token (as its `Display` writes it), borrowed from
/// the token when it is an identifier.
fn name_text(token: &TokenReference) -> Cow<'_, str> {
    match token.token_type() {
        TokenType::Identifier { identifier } => Cow::Borrowed(identifier.as_str()),
        _ => Cow::Owned(token.token().to_string()),
    }
}

/// Byte offset of a token's first character.
pub(crate) fn offset(token: &TokenReference) -> usize {
    token.token().start_position().bytes()
}

struct Builder {
    model: Model,
    /// Innermost scope last; each maps a name to its variable's index.
    scopes: Vec<HashMap<String, usize>>,
}

impl Builder {
    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name).copied())
    }

    fn declare(&mut self, token: &TokenReference, kind: VariableKind) {
        let name = token.token().to_string();
        let index = self.model.variables.len();
        self.model.variables.push(Variable {
            name: name.clone(),
            kind,
            declared_at: offset(token),
            reassigned: false,
        });
        self.model
            .resolutions
            .insert(offset(token), Resolution::Local(index));
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, index);
        }
    }

    /// A name read (`write` false) or assigned (`write` true).
    fn use_name(&mut self, token: &TokenReference, write: bool) {
        let name = name_text(token);
        let resolution = match self.lookup(&name) {
            Some(index) => {
                if write {
                    self.model.variables[index].reassigned = true;
                }
                Resolution::Local(index)
            }
            None => {
                let start = offset(token);
                let end = token.token().end_position().bytes();
                let global = GlobalUse {
                    name: name.into_owned(),
                    start,
                    end,
                };
                if write {
                    self.model.global_writes.push(global);
                } else {
                    self.model.global_reads.push(global);
                }
                Resolution::Global
            }
        };
        self.model.resolutions.insert(offset(token), resolution);
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(HashMap::new());
        f(self);
        self.scopes.pop();
    }

    fn block(&mut self, block: &Block) {
        for stmt in block.stmts() {
            self.stmt(stmt);
        }
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            for expr in ret.returns() {
                self.expr(expr);
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Assignment(assignment) => {
                for expr in assignment.expressions() {
                    self.expr(expr);
                }
                for var in assignment.variables() {
                    self.var(var, true);
                }
            }
            Stmt::Do(block) => self.scoped(|b| b.block(block.block())),
            Stmt::FunctionCall(call) => {
                self.prefix(call.prefix());
                self.suffixes(call.suffixes());
            }
            Stmt::FunctionDeclaration(decl) => {
                let name = decl.name();
                let mut names = name.names().iter();
                let is_method = name.method_name().is_some();
                if let Some(first) = names.next() {
                    // `function f()` assigns `f`; `function t.f()` reads `t`.
                    let plain = name.names().len() == 1 && !is_method;
                    self.use_name(first, plain);
                }
                self.scoped(|b| b.function_body(decl.body(), is_method));
            }
            Stmt::GenericFor(for_loop) => {
                for expr in for_loop.expressions() {
                    self.expr(expr);
                }
                self.scoped(|b| {
                    for name in for_loop.names() {
                        b.declare(name, VariableKind::LoopVariable);
                    }
                    b.block(for_loop.block());
                });
            }
            Stmt::If(if_stmt) => {
                self.expr(if_stmt.condition());
                self.scoped(|b| b.block(if_stmt.block()));
                for else_if in if_stmt.else_if().into_iter().flatten() {
                    self.expr(else_if.condition());
                    self.scoped(|b| b.block(else_if.block()));
                }
                if let Some(block) = if_stmt.else_block() {
                    self.scoped(|b| b.block(block));
                }
            }
            Stmt::LocalAssignment(local) => {
                for expr in local.expressions() {
                    self.expr(expr);
                }
                for name in local.names() {
                    self.declare(name, VariableKind::Local);
                }
            }
            Stmt::LocalFunction(local) => {
                self.declare(local.name(), VariableKind::Function);
                self.scoped(|b| b.function_body(local.body(), false));
            }
            Stmt::NumericFor(for_loop) => {
                self.expr(for_loop.start());
                self.expr(for_loop.end());
                if let Some(step) = for_loop.step() {
                    self.expr(step);
                }
                self.scoped(|b| {
                    b.declare(for_loop.index_variable(), VariableKind::LoopVariable);
                    b.block(for_loop.block());
                });
            }
            Stmt::Repeat(repeat) => self.scoped(|b| {
                b.block(repeat.block());
                b.expr(repeat.until());
            }),
            Stmt::While(while_loop) => {
                self.expr(while_loop.condition());
                self.scoped(|b| b.block(while_loop.block()));
            }
            // Lua 5.2+ and Luau statements do not parse in Lua 5.1 mode.
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    /// The parameters (and `self` for methods) and the body, in a fresh scope.
    fn function_body(&mut self, body: &FunctionBody, is_method: bool) {
        if is_method {
            self.declare_self();
        }
        for parameter in body.parameters() {
            if let Parameter::Name(name) = parameter {
                self.declare(name, VariableKind::Parameter);
            }
        }
        self.block(body.block());
    }

    /// Methods get an implicit `self` parameter, which has no token.
    fn declare_self(&mut self) {
        let index = self.model.variables.len();
        self.model.variables.push(Variable {
            name: "self".to_string(),
            kind: VariableKind::Parameter,
            declared_at: usize::MAX,
            reassigned: false,
        });
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert("self".to_string(), index);
        }
    }

    fn var(&mut self, var: &Var, write: bool) {
        match var {
            Var::Name(name) => self.use_name(name, write),
            Var::Expression(var_expr) => {
                // `t.x = 1` reads `t`.
                self.prefix(var_expr.prefix());
                self.suffixes(var_expr.suffixes());
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn prefix(&mut self, prefix: &Prefix) {
        match prefix {
            Prefix::Name(name) => self.use_name(name, false),
            Prefix::Expression(expr) => self.expr(expr),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn suffixes<'s>(&mut self, suffixes: impl IntoIterator<Item = &'s Suffix>) {
        for suffix in suffixes {
            match suffix {
                Suffix::Index(Index::Brackets { expression, .. }) => self.expr(expression),
                Suffix::Call(Call::AnonymousCall(args)) => self.args(args),
                Suffix::Call(Call::MethodCall(method)) => self.args(method.args()),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    fn args(&mut self, args: &FunctionArgs) {
        match args {
            FunctionArgs::Parentheses { arguments, .. } => {
                for expr in arguments {
                    self.expr(expr);
                }
            }
            FunctionArgs::TableConstructor(table) => self.table(table.fields()),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn table<'f>(&mut self, fields: impl IntoIterator<Item = &'f Field>) {
        for field in fields {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.expr(key);
                    self.expr(value);
                }
                Field::NameKey { value, .. } => self.expr(value),
                Field::NoKey(value) => self.expr(value),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
    }

    fn expr(&mut self, expr: &Expression) {
        match expr {
            Expression::BinaryOperator { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            Expression::Parentheses { expression, .. }
            | Expression::UnaryOperator { expression, .. } => self.expr(expression),
            Expression::Function(function) => {
                self.scoped(|b| b.function_body(function.body(), false));
            }
            Expression::FunctionCall(call) => {
                self.prefix(call.prefix());
                self.suffixes(call.suffixes());
            }
            Expression::TableConstructor(table) => self.table(table.fields()),
            Expression::Var(var) => self.var(var, false),
            Expression::Number(_) | Expression::String(_) | Expression::Symbol(_) => {}
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use full_moon::LuaVersion;

    fn model(source: &str) -> Model {
        Model::build(&full_moon::parse_fallible(source, LuaVersion::lua51()).into_ast())
    }

    fn globals_read(source: &str) -> Vec<String> {
        model(source)
            .global_reads
            .into_iter()
            .map(|g| g.name)
            .collect()
    }

    fn globals_written(source: &str) -> Vec<String> {
        model(source)
            .global_writes
            .into_iter()
            .map(|g| g.name)
            .collect()
    }

    #[test]
    fn locals_shadow_globals() {
        assert_eq!(globals_read("local x = 1; return x + y"), ["y"]);
        assert_eq!(
            globals_read("local x = x"),
            ["x"],
            "the initializer reads the outer x"
        );
        assert_eq!(globals_read("do local a = 1 end; return a"), ["a"]);
    }

    #[test]
    fn assignment_to_a_declared_local_is_not_global() {
        assert!(globals_written("local n = 0; n = n + 1").is_empty());
        assert_eq!(globals_written("n = 1"), ["n"]);
        assert_eq!(
            globals_written("local function f() end; f = nil; g = 2"),
            ["g"]
        );
        let m = model("local n = 0; n = 1; local k = 2");
        assert!(m.variables[0].reassigned);
        assert!(!m.variables[1].reassigned);
    }

    #[test]
    fn functions_parameters_and_upvalues() {
        let src = "local function fact(n) if n < 2 then return 1 end return n * fact(n - 1) end\n\
                   local total = 0\n\
                   local add = function(v) total = total + v end\n\
                   return fact(5) + add(1)";
        assert!(globals_read(src).is_empty(), "{:?}", globals_read(src));
        assert!(globals_written(src).is_empty());
        assert_eq!(globals_written("function f() end"), ["f"]);
        assert_eq!(globals_read("function t.f(a) return a end"), ["t"]);
        assert!(globals_read("local t = {} function t:m() return self end").is_empty());
    }

    #[test]
    fn loops_scope_their_variables() {
        assert!(globals_read("for i = 1, 3 do local x = i end").is_empty());
        assert_eq!(globals_read("for i = 1, 3 do end return i"), ["i"]);
        assert_eq!(
            globals_read("for k, v in pairs(KEYS) do end"),
            ["pairs", "KEYS"]
        );
        assert!(globals_read("repeat local done = true until done").is_empty());
        assert_eq!(globals_read("while x do local x = 1 end"), ["x"]);
    }

    #[test]
    fn table_fields_are_not_variables() {
        assert_eq!(
            globals_read("local t = {a = b, [c] = 1}; return t.a"),
            ["b", "c"]
        );
        assert_eq!(
            globals_read("return redis.call('get', KEYS[1])"),
            ["redis", "KEYS"]
        );
    }
}
