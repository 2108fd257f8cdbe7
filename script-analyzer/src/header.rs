//! Script headers: what a caller declares about a script, written in the
//! script itself, so that tools that check bare `.lua` files (`lockctl
//! lint`, an editor's language server) know what `#[redis_script]` learns
//! from the Rust declaration: how many keys and arguments the caller
//! passes, what the caller converts the result to, and which server the
//! script runs on.
//!
//! ```lua
//! #!lua flags=no-writes
//! -- redlua: keys=1 args=2 returns=integer?
//! -- redlua: target=redis-7.4
//! local n = redis.call('HLEN', KEYS[1])
//! ```
//!
//! # Rules
//!
//! - The header is the run of comment lines at the top of the script, before
//!   its first line of code. A `#!lua` shebang may come first, and blank
//!   lines may come between. Comment lines whose text starts with `redlua:`
//!   are header lines; other comments are left alone.
//! - A header line holds settings, `name=value`, separated by spaces:
//!   - `keys=N`: the caller passes exactly `N` keys; `keys=N+`: `N` or more.
//!   - `args=N`, `args=N+`: the same for `ARGV`.
//!   - `returns=KIND`: the caller converts the result to `integer`,
//!     `string`, `array` or `any`; a `?` after it (`integer?`) says the
//!     caller accepts a nil reply too (as `Option<i64>` does).
//!   - `target=NAME`: the server the script runs on (`redis-7.4`, see
//!     [`ServerTarget`]).
//! - When only one of `keys` and `args` is given, any number of the other is
//!   accepted.
//! - A setting given twice, an unknown setting and a malformed value are
//!   errors ([`HeaderError`]), each with the line it is on.
//!
//! [`Header::apply`] puts what a header declares into [`Options`].

use crate::{Declared, Options, ReturnKind, Returns, ServerTarget, best_match};
use std::fmt;

/// The marker that makes a comment line a header line.
pub const MARKER: &str = "redlua:";

/// The settings a header line may hold.
pub const SETTINGS: &[&str] = &["keys", "args", "returns", "target"];

/// A count of keys or arguments: a fixed number, maybe followed by more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// How many there always are.
    pub fixed: usize,
    /// Whether any number more may follow (`N+`).
    pub variadic: bool,
}

/// What a script's header declares; `None` where it says nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// `keys=`: the keys the caller passes.
    pub keys: Option<Count>,
    /// `args=`: the arguments the caller passes.
    pub args: Option<Count>,
    /// `returns=`: what the caller converts the result to.
    pub returns: Option<Returns>,
    /// `target=`: the server the script runs on.
    pub target: Option<ServerTarget>,
}

/// A header that cannot be read: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderError {
    /// The 1-based line of the script the error is on.
    pub line: usize,
    /// The 1-based column (in characters) where the faulty setting starts.
    pub column: usize,
    /// The setting's length, in characters.
    pub len: usize,
    /// What is wrong.
    pub kind: HeaderErrorKind,
}

/// Why a header cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderErrorKind {
    /// A setting that does not exist, and the nearest that does.
    UnknownSetting {
        /// The name as written.
        name: String,
        /// The setting it is most like, if any.
        suggestion: Option<&'static str>,
    },
    /// A word without `=value`.
    MissingValue {
        /// The word as written.
        name: String,
    },
    /// A setting given a second time.
    Repeated {
        /// The setting.
        name: &'static str,
    },
    /// `keys=` or `args=` with something else than `N` or `N+`.
    BadCount {
        /// The setting.
        name: &'static str,
        /// The value as written.
        value: String,
    },
    /// `returns=` with something else than a kind.
    BadReturns {
        /// The value as written.
        value: String,
    },
    /// `target=` with a name that is not a target.
    BadTarget {
        /// Why, with the targets there are.
        message: String,
    },
}

impl fmt::Display for HeaderError {
    /// `line N: ` and what is wrong.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.kind)
    }
}

impl fmt::Display for HeaderErrorKind {
    /// What is wrong, and the form to write.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderErrorKind::UnknownSetting { name, suggestion } => {
                write!(f, "unknown header setting `{name}`")?;
                match suggestion {
                    Some(s) => write!(f, " (did you mean `{s}`?)"),
                    None => write!(f, "; the settings are {}", SETTINGS.join(", ")),
                }
            }
            HeaderErrorKind::MissingValue { name } => {
                write!(
                    f,
                    "header setting `{name}` has no value; write `{name}=...`"
                )
            }
            HeaderErrorKind::Repeated { name } => {
                write!(f, "header setting `{name}` is given twice")
            }
            HeaderErrorKind::BadCount { name, value } => write!(
                f,
                "`{name}={value}`: write a number of {name} (`{name}=2`), or a number \
                 and `+` for that many or more (`{name}=2+`)"
            ),
            HeaderErrorKind::BadReturns { value } => write!(
                f,
                "`returns={value}`: write integer, string, array or any, with `?` after \
                 it when the caller accepts nil (`returns=integer?`)"
            ),
            HeaderErrorKind::BadTarget { message } => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for HeaderError {}

impl Header {
    /// Whether the header declares nothing.
    pub fn is_empty(&self) -> bool {
        *self == Header::default()
    }

    /// The declared counts as [`Options::declared`] takes them: `None` when
    /// the header gives neither `keys` nor `args`, and any number of the
    /// one it leaves out.
    pub fn declared(&self) -> Option<Declared> {
        if self.keys.is_none() && self.args.is_none() {
            return None;
        }
        let any = Count {
            fixed: 0,
            variadic: true,
        };
        let keys = self.keys.unwrap_or(any);
        let args = self.args.unwrap_or(any);
        Some(Declared {
            keys: keys.fixed,
            keys_variadic: keys.variadic,
            args: args.fixed,
            args_variadic: args.variadic,
        })
    }

    /// Sets in `options` what the header declares, leaving the rest as it
    /// is.
    pub fn apply(&self, options: &mut Options) {
        if let Some(declared) = self.declared() {
            options.declared = Some(declared);
        }
        if let Some(returns) = &self.returns {
            options.returns = Some(returns.clone());
        }
        if let Some(target) = self.target {
            options.target = target;
        }
    }
}

/// Reads the header of `source` (see the [module docs](self)). A script
/// without one gives an empty [`Header`].
pub fn parse(source: &str) -> Result<Header, HeaderError> {
    let mut header = Header::default();
    for (index, raw) in source.lines().enumerate() {
        let line = index + 1;
        let text = raw.trim();
        if text.is_empty() || (line == 1 && text.starts_with("#!")) {
            continue;
        }
        let Some(comment) = text.strip_prefix("--") else {
            break; // the first line of code ends the header
        };
        if comment.starts_with("[[") || comment.starts_with("[=") {
            break; // a block comment: not header lines
        }
        let Some(settings) = comment.trim_start_matches('-').trim().strip_prefix(MARKER) else {
            continue;
        };
        for word in settings.split_whitespace() {
            setting(&mut header, word).map_err(|kind| {
                // `word` is a slice of `raw`: its offset there.
                let offset = word.as_ptr() as usize - raw.as_ptr() as usize;
                HeaderError {
                    line,
                    column: raw[..offset].chars().count() + 1,
                    len: word.chars().count(),
                    kind,
                }
            })?;
        }
    }
    Ok(header)
}

/// Reads one `name=value` into `header`.
fn setting(header: &mut Header, word: &str) -> Result<(), HeaderErrorKind> {
    let (name, value) = word.split_once('=').ok_or_else(|| {
        if SETTINGS.contains(&word) {
            HeaderErrorKind::MissingValue {
                name: word.to_owned(),
            }
        } else {
            unknown(word)
        }
    })?;
    let name = SETTINGS
        .iter()
        .copied()
        .find(|s| *s == name)
        .ok_or_else(|| unknown(name))?;
    let repeated = match name {
        "keys" => header.keys.replace(count(name, value)?).is_some(),
        "args" => header.args.replace(count(name, value)?).is_some(),
        "returns" => header.returns.replace(returns(value)?).is_some(),
        _ => {
            let target = value
                .parse::<ServerTarget>()
                .map_err(|e| HeaderErrorKind::BadTarget {
                    message: e.to_string(),
                })?;
            header.target.replace(target).is_some()
        }
    };
    if repeated {
        return Err(HeaderErrorKind::Repeated { name });
    }
    Ok(())
}

fn unknown(name: &str) -> HeaderErrorKind {
    HeaderErrorKind::UnknownSetting {
        name: name.to_owned(),
        suggestion: best_match(name, SETTINGS.iter().copied())
            .and_then(|s| SETTINGS.iter().copied().find(|known| *known == s)),
    }
}

/// `N` or `N+`.
fn count(name: &'static str, value: &str) -> Result<Count, HeaderErrorKind> {
    let (digits, variadic) = match value.strip_suffix('+') {
        Some(digits) => (digits, true),
        None => (value, false),
    };
    let bad = || HeaderErrorKind::BadCount {
        name,
        value: value.to_owned(),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let fixed = digits.parse().map_err(|_| bad())?;
    Ok(Count { fixed, variadic })
}

/// A kind, maybe followed by `?`.
fn returns(value: &str) -> Result<Returns, HeaderErrorKind> {
    let (kind, nullable) = match value.strip_suffix('?') {
        Some(kind) => (kind, true),
        None => (value, false),
    };
    let kind = match kind {
        "integer" => ReturnKind::Integer,
        "string" => ReturnKind::String,
        "array" => ReturnKind::Array,
        "any" => ReturnKind::Any,
        _ => {
            return Err(HeaderErrorKind::BadReturns {
                value: value.to_owned(),
            });
        }
    };
    Ok(if nullable {
        Returns::nullable(kind)
    } else {
        Returns::of(kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Lint, analyze};

    #[test]
    fn a_script_without_a_header_declares_nothing() {
        let header = parse("local x = 1\n-- redlua: keys=1\nreturn x").unwrap();
        assert!(header.is_empty(), "{header:?}");
        assert_eq!(header.declared(), None);
        assert!(parse("").unwrap().is_empty());
        assert!(parse("-- just a comment\nreturn 1").unwrap().is_empty());
    }

    #[test]
    fn every_setting_is_read_after_a_shebang_and_other_comments() {
        let source = "#!lua flags=no-writes\n\n-- Counts hits.\n-- redlua: keys=1 args=2+\n\
                      --- redlua: returns=integer? target=redis-7.4\nreturn 1\n";
        let header = parse(source).unwrap();
        assert_eq!(
            header.keys,
            Some(Count {
                fixed: 1,
                variadic: false
            })
        );
        assert_eq!(
            header.args,
            Some(Count {
                fixed: 2,
                variadic: true
            })
        );
        assert_eq!(header.returns, Some(Returns::nullable(ReturnKind::Integer)));
        assert_eq!(header.target, Some(ServerTarget::Redis7_4));
        assert_eq!(
            header.declared(),
            Some(Declared {
                keys: 1,
                keys_variadic: false,
                args: 2,
                args_variadic: true
            })
        );
    }

    #[test]
    fn a_count_left_out_accepts_any_number() {
        let header = parse("-- redlua: keys=2\n").unwrap();
        let declared = header.declared().unwrap();
        assert_eq!((declared.keys, declared.keys_variadic), (2, false));
        assert_eq!((declared.args, declared.args_variadic), (0, true));
    }

    #[test]
    fn lines_after_the_first_line_of_code_are_not_the_header() {
        let header = parse("-- redlua: keys=1\nlocal a = 1\n-- redlua: args=3\n").unwrap();
        assert_eq!(header.args, None);
        // A block comment ends the header too.
        let header = parse("--[[ redlua: keys=1 ]]\n-- redlua: args=1\n").unwrap();
        assert!(header.is_empty(), "{header:?}");
    }

    #[test]
    fn mistakes_are_errors_with_their_line() {
        let error = |source: &str| parse(source).unwrap_err();
        let e = error("-- ok\n-- redlua: key=1\n");
        assert_eq!((e.line, e.column, e.len), (2, 12, 5));
        let repeated = error("-- redlua: keys=1  args=2 args=3\n");
        assert_eq!(
            (repeated.line, repeated.column, repeated.len),
            (1, 27, 6),
            "the second `args`"
        );
        assert_eq!(
            e.to_string(),
            "line 2: unknown header setting `key` (did you mean `keys`?)"
        );
        assert_eq!(
            error("-- redlua: colour=red\n").to_string(),
            "line 1: unknown header setting `colour`; the settings are keys, args, returns, target"
        );
        assert_eq!(
            error("-- redlua: keys\n").kind,
            HeaderErrorKind::MissingValue {
                name: "keys".into()
            }
        );
        assert_eq!(
            error("-- redlua: args=1 args=2\n").kind,
            HeaderErrorKind::Repeated { name: "args" }
        );
        for bad in ["keys=", "keys=x", "keys=-1", "keys=1++", "keys=+"] {
            assert!(
                matches!(
                    error(&format!("-- redlua: {bad}\n")).kind,
                    HeaderErrorKind::BadCount { name: "keys", .. }
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            error("-- redlua: returns=number\n").kind,
            HeaderErrorKind::BadReturns { .. }
        ));
        let e = error("-- redlua: target=redis-7.3\n");
        assert!(
            e.to_string()
                .starts_with("line 1: unknown target `redis-7.3`"),
            "{e}"
        );
    }

    #[test]
    fn applied_settings_drive_the_arity_and_return_lints() {
        let source = "-- redlua: keys=1 args=1 returns=integer\n\
                      redis.call('SET', KEYS[1], ARGV[2])\nreturn redis.call('GET', KEYS[1])\n";
        let mut options = Options::default();
        parse(source).unwrap().apply(&mut options);
        let lints: Vec<Lint> = analyze(source, &options)
            .diagnostics
            .iter()
            .map(|d| d.lint)
            .collect();
        assert!(lints.contains(&Lint::Arity), "{lints:?}");
        assert!(!lints.is_empty());
        // Without the header nothing is declared, and nothing is found.
        assert!(analyze(source, &Options::default()).diagnostics.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_is_an_error_inside_it(
            text in "(#!lua[^\n]*\n)?((--+ ?(redlua:)?[ -~\u{e9}\u{1F600}]{0,40}|[ \t]*)\n){0,6}[ -~]{0,10}"
        ) {
            if let Err(e) = parse(&text) {
                let line = text.lines().nth(e.line - 1).expect("the error's line exists");
                proptest::prop_assert!(e.column >= 1 && e.len >= 1);
                proptest::prop_assert!(e.column - 1 + e.len <= line.chars().count());
            }
        }
    }

    #[test]
    fn applying_an_empty_header_changes_nothing() {
        let mut options = Options {
            target: ServerTarget::Valkey8_0,
            ..Options::default()
        };
        Header::default().apply(&mut options);
        assert_eq!(options.target, ServerTarget::Valkey8_0);
        assert_eq!(options.declared, None);
        assert_eq!(options.returns, None);
    }
}
