//! The engine's tests: what it says of values, through locals, fields,
//! reply elements, loops, branches and functions.

mod branches_and_loops;
mod functions;
mod locals_and_fields;
mod values;

use super::*;
use crate::calls::{Tree, redis_calls};
use crate::{parse, scope};
use full_moon::ast::{Call, FunctionArgs, FunctionCall, LastStmt, Prefix, Suffix};

/// What the inference says about the main chunk's last `return`.
fn returned(source: &str) -> Inferred {
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
        panic!("no return in {source}");
    };
    types.of(ret.returns().iter().next().expect("a value"))
}

fn ty(source: &str) -> Ty {
    returned(source).ty
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
    let types = Types::build(source, &ast, &model, &calls, None);
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
