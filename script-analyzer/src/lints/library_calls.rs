//! The calls to Redis's Lua libraries that the library lints look at:
//! `string.find(s, p)`, `s:find(p)`, `cjson.encode(t)`, `unpack(t)`...

use super::Context;
use crate::facts::{Key, index_key};
use full_moon::ast::{Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix};
use full_moon::visitors::Visitor;

/// A call of a library function.
pub(crate) struct LibraryCall<'a> {
    /// `string.find`, `cjson.encode`, `unpack`; a method call is `:find`.
    pub name: String,
    /// The arguments, the receiver of a method call excluded.
    pub args: Vec<&'a Expression>,
    /// The whole call.
    pub call: &'a FunctionCall,
}

/// Calls `f` on each call of a global library function (`string.find`,
/// `unpack`, `table.unpack`) or a method (`s:find`).
pub(crate) fn each_library_call(cx: &Context<'_>, f: impl FnMut(&LibraryCall<'_>)) {
    let mut finder = Finder { cx, f };
    cx.visit(&mut finder);
}

struct Finder<'c, 'a, F> {
    cx: &'c Context<'a>,
    f: F,
}

fn arguments(args: &FunctionArgs) -> Vec<&Expression> {
    match args {
        FunctionArgs::Parentheses { arguments, .. } => arguments.iter().collect(),
        _ => Vec::new(),
    }
}

impl<F: FnMut(&LibraryCall<'_>)> Visitor for Finder<'_, '_, F> {
    fn visit_function_call(&mut self, call: &FunctionCall) {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let (name, args) = match (call.prefix(), suffixes.as_slice()) {
            (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))])
                if self.cx.model.is_global(name) =>
            {
                (name.token().to_string(), arguments(args))
            }
            (
                Prefix::Name(library),
                [
                    Suffix::Index(index),
                    Suffix::Call(Call::AnonymousCall(args)),
                ],
            ) if self.cx.model.is_global(library) => {
                let Some(Key::Name(member)) = index_key(index) else {
                    return;
                };
                (format!("{}.{member}", library.token()), arguments(args))
            }
            (_, [.., Suffix::Call(Call::MethodCall(method))]) => (
                format!(":{}", method.name().token()),
                arguments(method.args()),
            ),
            _ => return,
        };
        (self.f)(&LibraryCall { name, args, call });
    }
}
