//! Name resolution: locals, upvalues, parameters and globals.

use full_moon::ast::Ast;
use full_moon::tokenizer::TokenReference;

/// The resolved names of a script.
#[derive(Debug, Default)]
pub struct Model {}

impl Model {
    /// Resolves every name in `ast`.
    pub fn build(_ast: &Ast) -> Model {
        Model {}
    }

    /// Whether the name `token` (a use of a variable) refers to a global.
    pub fn is_global(&self, _token: &TokenReference) -> bool {
        true
    }
}
