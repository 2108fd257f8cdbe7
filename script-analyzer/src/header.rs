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
//!   - `allow=LINT,LINT`: lints switched off for this script, as
//!     `allow(...)` does in the Rust attribute (`allow=literal_key`; `-`
//!     may be written for `_`). `syntax` and `library` cannot be allowed.
//! - When only one of `keys` and `args` is given, any number of the other is
//!   accepted.
//! - A setting given twice, an unknown setting and a malformed value are
//!   errors ([`HeaderError`]), each with the line it is on.
//!
//! [`Header::apply`] puts what a header declares into [`Options`];
//! [`allow_edit`] is the edit that adds a lint to a script's `allow`.

use crate::{Declared, Lint, Options, ReturnKind, Returns, ServerTarget, best_match};
use std::fmt;

/// The marker that makes a comment line a header line.
pub const MARKER: &str = "redlua:";

/// The settings a header line may hold.
pub const SETTINGS: &[&str] = &["keys", "args", "returns", "target", "allow"];

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
    /// `allow=`: the lints switched off for this script.
    pub allow: Option<Vec<Lint>>,
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
    /// `allow=` with a name that is not a lint (or an empty list).
    UnknownLint {
        /// The name as written.
        name: String,
        /// The lint it is most like, if any.
        suggestion: Option<&'static str>,
    },
    /// `allow=` with a lint that cannot be switched off.
    NotAllowable {
        /// The lint.
        lint: Lint,
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
            HeaderErrorKind::UnknownLint { name, .. } if name.is_empty() => write!(
                f,
                "`allow=` names no lint; write lint names separated by commas \
                 (`allow=literal_key,nil_return`)"
            ),
            HeaderErrorKind::UnknownLint { name, suggestion } => {
                write!(f, "`allow={name}`: unknown lint `{name}`")?;
                match suggestion {
                    Some(s) => write!(f, " (did you mean `{s}`?)"),
                    None => write!(f, "; write lint names separated by commas"),
                }
            }
            HeaderErrorKind::NotAllowable { lint } => write!(
                f,
                "the `{lint}` lint cannot be allowed: Redis would refuse the script"
            ),
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
        for lint in self.allow.iter().flatten() {
            if !options.allow.contains(lint) {
                options.allow.push(*lint);
            }
        }
    }
}

/// Reads the header of `source` (see the [module docs](self)). A script
/// without one gives an empty [`Header`].
pub fn parse(source: &str) -> Result<Header, HeaderError> {
    let mut header = Header::default();
    for HeaderLine {
        line,
        raw,
        settings,
    } in header_lines(source)
    {
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

/// A header line: its 1-based number, its text, and the settings after
/// the marker (slices of the script).
struct HeaderLine<'a> {
    line: usize,
    raw: &'a str,
    settings: &'a str,
}

/// The header lines of `source`, in order.
fn header_lines(source: &str) -> Vec<HeaderLine<'_>> {
    let mut found = Vec::new();
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
        found.push(HeaderLine {
            line,
            raw,
            settings,
        });
    }
    found
}

/// An edit of a script's text: replace bytes `start..end` with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The first byte replaced.
    pub start: usize,
    /// One past the last byte replaced (`start` for an insertion).
    pub end: usize,
    /// The new text.
    pub text: String,
}

/// The edit that switches `lint` off in the header of `source`: it adds
/// the lint to the header's `allow=` setting, or adds the setting to the
/// first header line, or adds a header line (after a `#!lua` shebang, which
/// stays first).
///
/// `None` when the lint cannot be allowed, the header already allows it,
/// or the header cannot be read.
pub fn allow_edit(source: &str, lint: Lint) -> Option<Edit> {
    let header = parse(source).ok()?;
    if !lint.can_be_allowed() || header.allow.iter().flatten().any(|l| *l == lint) {
        return None;
    }
    let offset_of = |part: &str| part.as_ptr() as usize - source.as_ptr() as usize;
    let lines = header_lines(source);
    let insert = |at: usize, text: String| Edit {
        start: at,
        end: at,
        text,
    };
    for line in &lines {
        if let Some(word) = line
            .settings
            .split_whitespace()
            .find(|w| w.starts_with("allow="))
        {
            return Some(insert(offset_of(word) + word.len(), format!(",{lint}")));
        }
    }
    if let Some(first) = lines.first() {
        let end = offset_of(first.raw) + first.raw.trim_end().len();
        return Some(insert(end, format!(" allow={lint}")));
    }
    let new_line = format!("-- {MARKER} allow={lint}");
    let first_line = source.lines().next().unwrap_or("");
    if first_line.trim_start().starts_with("#!") {
        return Some(match source[first_line.len()..].find('\n') {
            Some(newline) => insert(first_line.len() + newline + 1, format!("{new_line}\n")),
            None => insert(source.len(), format!("\n{new_line}\n")),
        });
    }
    Some(insert(0, format!("{new_line}\n")))
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
        "allow" => header.allow.replace(allow(value)?).is_some(),
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

/// `lint,lint`.
fn allow(value: &str) -> Result<Vec<Lint>, HeaderErrorKind> {
    let mut lints = Vec::new();
    for name in value.split(',') {
        let lint = Lint::from_name(name).ok_or_else(|| HeaderErrorKind::UnknownLint {
            name: name.to_owned(),
            suggestion: best_match(name, Lint::ALL.iter().map(|l| l.name())),
        })?;
        if !lint.can_be_allowed() {
            return Err(HeaderErrorKind::NotAllowable { lint });
        }
        if !lints.contains(&lint) {
            lints.push(lint);
        }
    }
    Ok(lints)
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
            "line 1: unknown header setting `colour`; the settings are keys, args, returns, target, allow"
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
    fn allow_switches_lints_off_as_the_attribute_does() {
        let source = "-- redlua: keys=1 allow=literal_key,nil-return\n\
                      redis.call('SET', 'fixed', 1)\nreturn redis.call('GET', KEYS[1])\n";
        let header = parse(source).unwrap();
        assert_eq!(header.allow, Some(vec![Lint::LiteralKey, Lint::NilReturn]));
        let mut options = Options {
            returns: Some(Returns::of(ReturnKind::String)),
            ..Options::default()
        };
        let lints = |options: &Options| -> Vec<Lint> {
            analyze(source, options)
                .diagnostics
                .iter()
                .map(|d| d.lint)
                .collect()
        };
        let before = lints(&options);
        assert!(before.contains(&Lint::LiteralKey), "{before:?}");
        assert!(before.contains(&Lint::NilReturn), "{before:?}");
        header.apply(&mut options);
        assert_eq!(options.allow, vec![Lint::LiteralKey, Lint::NilReturn]);
        assert_eq!(lints(&options), Vec::<Lint>::new());
    }

    #[test]
    fn allow_takes_only_lints_that_can_be_allowed() {
        let kind = |source: &str| parse(source).unwrap_err().kind;
        assert_eq!(
            kind("-- redlua: allow=literal_kee\n"),
            HeaderErrorKind::UnknownLint {
                name: "literal_kee".into(),
                suggestion: Some("literal_key")
            }
        );
        assert_eq!(
            kind("-- redlua: allow=nil_return,syntax\n"),
            HeaderErrorKind::NotAllowable { lint: Lint::Syntax }
        );
        assert!(matches!(
            kind("-- redlua: allow=\n"),
            HeaderErrorKind::UnknownLint { .. }
        ));
        assert_eq!(
            kind("-- redlua: allow=nil_return allow=literal_key\n"),
            HeaderErrorKind::Repeated { name: "allow" }
        );
        assert_eq!(
            parse("-- redlua: allow=library\n").unwrap_err().to_string(),
            "line 1: the `library` lint cannot be allowed: Redis would refuse the script"
        );
    }

    /// `source` with `edit` made.
    fn edited(source: &str, edit: &Edit) -> String {
        let mut text = source.to_string();
        text.replace_range(edit.start..edit.end, &edit.text);
        text
    }

    #[test]
    fn allow_edit_extends_the_setting_the_line_or_adds_a_line() {
        let cases = [
            (
                "-- redlua: keys=1 allow=nil_return\nreturn 1\n",
                "-- redlua: keys=1 allow=nil_return,literal_key\nreturn 1\n",
            ),
            (
                "-- Counts.\n-- redlua: keys=1  \nreturn 1\n",
                "-- Counts.\n-- redlua: keys=1 allow=literal_key  \nreturn 1\n",
            ),
            ("return 1\n", "-- redlua: allow=literal_key\nreturn 1\n"),
            (
                "#!lua flags=no-writes\nreturn 1\n",
                "#!lua flags=no-writes\n-- redlua: allow=literal_key\nreturn 1\n",
            ),
            ("#!lua", "#!lua\n-- redlua: allow=literal_key\n"),
        ];
        for (source, expected) in cases {
            let edit = allow_edit(source, Lint::LiteralKey).expect(source);
            let text = edited(source, &edit);
            assert_eq!(text, expected);
            let header = parse(&text).unwrap();
            assert!(header.allow.unwrap().contains(&Lint::LiteralKey), "{text}");
        }
    }

    #[test]
    fn allow_edit_gives_nothing_when_it_cannot_or_need_not() {
        let allowed = "-- redlua: allow=literal_key\nreturn 1\n";
        assert_eq!(allow_edit(allowed, Lint::LiteralKey), None);
        assert_eq!(allow_edit("return 1", Lint::Syntax), None);
        assert_eq!(allow_edit("-- redlua: keyz=1\n", Lint::LiteralKey), None);
    }

    proptest::proptest! {
        #[test]
        fn an_allow_edit_keeps_the_header_and_adds_the_lint(
            text in "(#!lua[^\n]*\n)?((--+ ?(redlua: ?)?(keys=1|allow=arity|args=2\\+|x)?[ -~]{0,8}|[ \t]*)\r?\n){0,5}[ -~]{0,10}"
        ) {
            if let Some(edit) = allow_edit(&text, Lint::LiteralKey) {
                let before = parse(&text).expect("an edit only of a header that reads");
                let after = parse(&edited(&text, &edit));
                proptest::prop_assert!(after.is_ok(), "{:?}", after);
                let after = after.unwrap();
                let mut expected = before.allow.clone().unwrap_or_default();
                expected.push(Lint::LiteralKey);
                proptest::prop_assert_eq!(after.allow.clone(), Some(expected));
                proptest::prop_assert_eq!(Header { allow: None, ..after }, Header { allow: None, ..before });
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
