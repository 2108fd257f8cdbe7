//! What a `redis.call` gives: the protocol of the script's replies
//! (`redis.setresp(3)`), and each call's reply under it.

use super::value::{Inferred, Origin, Range, Ty};
use super::{Key, index_key, number};
use crate::calls::{CallArg, RedisCall};
use crate::commands::ArgShape;
use crate::replies::{self, Protocol};
use full_moon::ast::{Ast, Call, Expression, FunctionArgs, FunctionCall, Prefix, Stmt, Suffix};
use full_moon::node::Node;

/// The protocol of a script's replies (see the module's documentation).
pub(super) fn protocol(source: &str, ast: &Ast, calls: &[RedisCall]) -> Option<Protocol> {
    let mentions = source.matches("setresp").count();
    if mentions == 0 {
        return Some(Protocol::Resp2);
    }
    let mut switches = Vec::new();
    for stmt in ast.nodes().stmts() {
        if let Stmt::FunctionCall(call) = stmt
            && is_setresp_3(call)
            && let Some((start, end)) = call.range()
        {
            switches.push((start.bytes(), end.bytes()));
        }
    }
    let first_end = switches.first()?.1;
    let all_before = calls.iter().all(|c| c.span.start.offset >= first_end);
    (switches.len() == mentions && all_before).then_some(Protocol::Resp3)
}

/// `redis.setresp(3)`, exactly.
pub(super) fn is_setresp_3(call: &FunctionCall) -> bool {
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let (
        Prefix::Name(redis),
        [
            Suffix::Index(index),
            Suffix::Call(Call::AnonymousCall(args)),
        ],
    ) = (call.prefix(), suffixes.as_slice())
    else {
        return false;
    };
    if redis.token().to_string() != "redis"
        || index_key(index) != Some(Key::Name("setresp".to_string()))
    {
        return false;
    }
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return false;
    };
    let arguments: Vec<&Expression> = arguments.iter().collect();
    matches!(arguments.as_slice(), [Expression::Number(n)] if number(n) == Some(3.0))
}

/// The value a `redis.call` gives.
pub(super) fn reply_of(call: &RedisCall, protocol: Protocol) -> Inferred {
    let shapes: Vec<ArgShape<'_>> = call.args.iter().map(CallArg::shape).collect();
    let Some(lua) = replies::of_call_in(protocol, &shapes) else {
        return Inferred::any();
    };
    let Some(command) = display_name(call) else {
        return Inferred::any();
    };
    // -1: the key has no expire; -2: there is no key.
    let range = if EXPIRE_QUERIES.contains(&command.as_str()) {
        Range::new(-2.0, f64::INFINITY)
    } else {
        Range::ANY
    };
    Inferred::of(Ty::from_reply(lua, call.pcall))
        .within(range)
        .with_origin(Origin::Reply {
            command,
            shape: lua,
            pcall: call.pcall,
            span: call.span,
        })
}

/// Commands that reply a time left (or a deadline), or -1 and -2 for a key
/// without an expire and a missing key.
pub const EXPIRE_QUERIES: &[&str] = &["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"];

/// The command's name as messages show it: `EXISTS`, `OBJECT FREQ`.
pub fn display_name(call: &RedisCall) -> Option<String> {
    let name = call.command_name()?;
    let sub = call.args.get(1).and_then(CallArg::literal);
    Some(match sub {
        Some(sub) if replies::lookup(&format!("{name}|{sub}")).is_some() => {
            format!("{name} {sub}").to_ascii_uppercase()
        }
        _ => name.to_ascii_uppercase(),
    })
}
