//! Holder identity, as lockctl writes and shows it: the runtime's
//! [`redlua_runtime::identity`] (host, process id, program, since when, in
//! `{NAME}:redlua_holder:<owner>` with the lock's expiry). `run` and `hold`
//! announce one; `status` and `ls` show them; holders that wrote none show
//! their owner alone.

use crate::exit::Failure;
use redis::aio::MultiplexedConnection;
pub use redlua_runtime::identity::{Announcer, HolderIdentity as Identity};
use serde_json::{Value, json};

/// As shown to people: ``host web-1, pid 4242, program `lockctl hold`,
/// since 2026-11-23T10:21:03Z``.
pub fn text(identity: &Identity) -> String {
    format!(
        "host {}, pid {}, program `{}`, since {}",
        identity.host, identity.pid, identity.program, identity.since
    )
}

/// As JSON (the pid as a number when it is one).
pub fn json(identity: &Identity) -> Value {
    let pid = identity
        .pid
        .parse::<u64>()
        .map_or_else(|_| Value::from(identity.pid.as_str()), Value::from);
    json!({
        "host": identity.host,
        "pid": pid,
        "program": identity.program,
        "since": identity.since,
    })
}

/// Reads the identities of `owners` of lock `name`, in one round trip.
pub async fn read(
    con: &mut MultiplexedConnection,
    name: &str,
    owners: &[&str],
) -> Result<Vec<Option<Identity>>, Failure> {
    redlua_runtime::identity::read(con, name, owners)
        .await
        .map_err(|e| Failure::failed(format!("cannot read the holders of `{name}`: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_to_people_and_machines() {
        let me = Identity::of_this_process("lockctl hold");
        assert!(text(&me).contains("program `lockctl hold`"));
        assert_eq!(json(&me)["pid"], u64::from(std::process::id()));
    }
}
