//! A language server for Redis Lua scripts.
//!
//! `redlua-lsp` speaks the Language Server Protocol over standard input and
//! output, and gives an editor what `redlua-analyzer` knows about a script:
//!
//! - diagnostics as you type: the lints, levels and messages of `lockctl
//!   lint`, each with the lint's name as its code;
//! - hover on `redis.call('CMD', ...)`: the command's summary, arity, first
//!   release and reply type, for the target server; on a local variable:
//!   the value the analyzer infers for it there;
//! - completion of commands, sandbox globals and library members, and of
//!   `KEYS[n]` / `ARGV[n]` up to the declared counts;
//! - quick fixes for the lints that suggest one, and for any lint that can
//!   be switched off: `allow=<lint>` in the script's header, or
//!   `allow(<lint>)` in the `#[redis_script]` attribute that declares it.
//!
//! A script is checked against the target of its header
//! (`-- redlua: target=redis-7.4`) or of the nearest `Cargo.toml`'s
//! `[package.metadata.redlua]`, and the keys, arguments and result type its
//! header declares (`-- redlua: keys=1 args=2+ returns=integer?`). A Redis
//! Functions library (`#!lua name=...`) is checked as Redis loads it, and
//! each registered function's body against the `#[redis_function]` struct
//! that declares it, if one does. See the crate's README for editor setup.
//!
//! The library is the server without its transport: [`Server::handle`]
//! takes one message and [`Server::publish`] gives the diagnostics, which
//! is how the tests drive it; [`transport::run`] serves over a byte stream.

#![warn(missing_docs)]

mod actions;
mod call_site;
mod completion;
mod diagnostics;
mod document;
mod hover;
mod lex;
mod lines;
mod rust_decl;
mod server;
mod settings;
mod summaries;
pub mod transport;

pub use server::{Analyzed, Flow, Job, Server, Valued};
