//! Which `redis-server` binary the helpers run.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// Environment variable naming the `redis-server` binary to use.
pub const REDIS_SERVER_BIN_ENV: &str = "REDIS_SERVER_BIN";

/// Looks for `redis-server`: `env_value` (the value of `REDIS_SERVER_BIN`)
/// if given, else the directories of `path_value` (a `PATH`-style list).
///
/// Returns a message explaining how to install Redis when nothing is found.
/// This is the pure part of [`redis_server_bin`], exposed for testing.
pub fn find_redis_server(
    env_value: Option<&OsStr>,
    path_value: Option<&OsStr>,
) -> Result<PathBuf, String> {
    const HOW: &str =
        "redis-server not found: run tools/ensure-redis or apt-get install redis-server";
    if let Some(bin) = env_value.filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(bin);
        return if bin.is_file() {
            Ok(bin)
        } else {
            Err(format!(
                "{HOW} ({REDIS_SERVER_BIN_ENV} is set to `{}`, which is not a file)",
                bin.display()
            ))
        };
    }
    if let Some(path) = path_value {
        for dir in std::env::split_paths(path) {
            let candidate = dir.join("redis-server");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "{HOW} (looked on PATH; or set {REDIS_SERVER_BIN_ENV})"
    ))
}

/// The `redis-server` binary to use: `$REDIS_SERVER_BIN`, else `redis-server`
/// on `PATH`.
///
/// # Panics
///
/// When no binary is found, with a message saying how to install one.
pub fn redis_server_bin() -> PathBuf {
    let env_value: Option<OsString> = std::env::var_os(REDIS_SERVER_BIN_ENV);
    let path_value: Option<OsString> = std::env::var_os("PATH");
    match find_redis_server(env_value.as_deref(), path_value.as_deref()) {
        Ok(bin) => bin,
        Err(msg) => panic!("\n\n*** {msg} ***\n\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_binary_from_env_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("redis-server");
        std::fs::write(&bin, b"").unwrap();
        assert_eq!(
            find_redis_server(Some(bin.as_os_str()), None),
            Ok(bin.clone())
        );
        assert_eq!(
            find_redis_server(None, Some(dir.path().as_os_str())),
            Ok(bin.clone())
        );
        // An empty variable counts as unset.
        assert_eq!(
            find_redis_server(Some(OsStr::new("")), Some(dir.path().as_os_str())),
            Ok(bin)
        );
    }

    #[test]
    fn missing_binary_says_how_to_install() {
        let empty = tempfile::tempdir().unwrap();
        let err = find_redis_server(None, Some(empty.path().as_os_str())).unwrap_err();
        assert!(
            err.starts_with("redis-server not found: run tools/ensure-redis"),
            "{err}"
        );
        let err =
            find_redis_server(Some(OsStr::new("/nonexistent/redis-server")), None).unwrap_err();
        assert!(err.contains("apt-get install redis-server"), "{err}");
        assert!(err.contains("/nonexistent/redis-server"), "{err}");
    }
}
