//! The crate-wide target: `target = "..."` under
//! `[package.metadata.redlua]` in a crate's `Cargo.toml`, which
//! `#[redis_script]` and `lockctl lint` both honour.
//!
//! ```toml
//! [package.metadata.redlua]
//! target = "redis-7.4"
//! ```
//!
//! Only that table form is read, line by line (no TOML parser on the macro
//! path). Other spellings of the same setting (`redlua = { target = ... }`
//! under `[package.metadata]`, dotted keys) are refused with the form to
//! write, rather than silently ignored.

use crate::{ServerTarget, best_match};
use std::fmt;

/// The table the setting lives in.
pub const TABLE: &str = "package.metadata.redlua";

/// The keys the table may hold.
const KEYS: &[&str] = &["target"];

/// A `[package.metadata.redlua]` setting that cannot be read: the line it is
/// on, and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The 1-based line of the `Cargo.toml`.
    pub line: usize,
    /// What is wrong, and the form to write.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ManifestError {}

/// The target set in the text of a `Cargo.toml`: `None` when it sets none.
pub fn target_of(text: &str) -> Result<Option<ServerTarget>, ManifestError> {
    let error = |line: usize, message: String| ManifestError { line, message };
    let mut table = String::new();
    let mut found = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            // `[table]` or `[[array]]`, with an optional comment after it.
            let header = header.trim_start_matches('[');
            let name = header.split(']').next().unwrap_or("");
            table = name
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                .collect();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key: String = key
            .trim()
            .chars()
            .filter(|c| *c != '"' && *c != '\'')
            .collect();
        let full = format!("{table}.{key}");
        if table == TABLE {
            if key != "target" {
                let message = match best_match(&key, KEYS.iter().copied()) {
                    Some(s) => format!("unknown key `{key}` in [{TABLE}]: did you mean `{s}`?"),
                    None => format!("unknown key `{key}` in [{TABLE}]; the key is `target`"),
                };
                return Err(error(line_no, message));
            }
            let target = parse_value(value.trim()).map_err(|m| error(line_no, m))?;
            found = Some(target);
        } else if full.starts_with(TABLE) || (table.is_empty() && key.starts_with(TABLE)) {
            return Err(error(
                line_no,
                format!(
                    "write the redlua settings as a table: `[{TABLE}]` on a line of its own, \
                     then `target = \"redis-7.4\"`"
                ),
            ));
        }
    }
    Ok(found)
}

/// The target named by a TOML string (`"redis-7.4"`, `'redis-7.4'`), with a
/// comment allowed after it.
fn parse_value(value: &str) -> Result<ServerTarget, String> {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'');
    let Some(quote) = quote else {
        return Err(format!(
            "`target` in [{TABLE}] must be a string, one of {}",
            ServerTarget::names()
        ));
    };
    let rest = &value[1..];
    let Some(end) = rest.find(quote) else {
        return Err(format!("unterminated string for `target` in [{TABLE}]"));
    };
    let after = rest[end + 1..].trim();
    if !after.is_empty() && !after.starts_with('#') {
        return Err(format!("unexpected `{after}` after the target"));
    }
    rest[..end]
        .parse::<ServerTarget>()
        .map_err(|e| format!("{e} (in [{TABLE}])"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_form_is_read() {
        let text = "[package]\nname = \"x\"\n\n[package.metadata.redlua]\n\
                    target = \"redis-7.4\" # hash field expiration\n\n[dependencies]\n";
        assert_eq!(target_of(text), Ok(Some(ServerTarget::Redis7_4)));
        let text = "[ package . metadata . redlua ]\ntarget='valkey-8.0'\n";
        assert_eq!(target_of(text), Ok(Some(ServerTarget::Valkey8_0)));
    }

    #[test]
    fn no_setting_is_none() {
        assert_eq!(target_of(""), Ok(None));
        assert_eq!(
            target_of("[package]\nname = \"x\"\n[package.metadata.docs.rs]\nall-features = true\n"),
            Ok(None)
        );
        // `target` elsewhere is someone else's.
        assert_eq!(
            target_of("[package.metadata.other]\ntarget = \"x\"\n"),
            Ok(None)
        );
    }

    #[test]
    fn bad_values_are_errors_with_their_line() {
        let ManifestError { line, message } =
            target_of("[package]\n[package.metadata.redlua]\ntarget = \"redis-7.3\"\n")
                .unwrap_err();
        assert_eq!(line, 3);
        assert_eq!(
            message,
            "unknown target `redis-7.3` (did you mean `redis-7.2`?); the targets are redis-7.0, \
             redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2, valkey-8.0 \
             (in [package.metadata.redlua])"
        );
        let message = target_of("[package.metadata.redlua]\ntarget = 7.4\n")
            .unwrap_err()
            .message;
        assert!(message.starts_with("`target` in [package.metadata.redlua] must be a string"));
        let message = target_of("[package.metadata.redlua]\ntarge = \"redis-7.4\"\n")
            .unwrap_err()
            .message;
        assert_eq!(
            message,
            "unknown key `targe` in [package.metadata.redlua]: did you mean `target`?"
        );
    }

    #[test]
    fn other_spellings_are_refused() {
        for text in [
            "[package.metadata]\nredlua = { target = \"redis-7.4\" }\n",
            "[package]\nmetadata.redlua.target = \"redis-7.4\"\n",
            "package.metadata.redlua.target = \"redis-7.4\"\n",
        ] {
            let message = target_of(text).unwrap_err().message;
            assert!(
                message.starts_with("write the redlua settings as a table"),
                "{text}"
            );
        }
    }
}
