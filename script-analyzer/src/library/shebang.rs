//! The `#!lua name=<library>` first line every Redis Functions library
//! starts with.

use crate::{Diagnostic, Lint, Span};

/// Whether `name` is a valid library or function name for Redis:
/// `[A-Za-z0-9_]+`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The help for an invalid library or function name.
pub(crate) const NAME_RULE: &str =
    "Redis names may only contain letters, digits and underscores (`[A-Za-z0-9_]+`)";

/// The library's name, or the error Redis gives at `FUNCTION LOAD`.
pub(crate) fn library_name(source: &str) -> Result<(String, Span), Box<Diagnostic>> {
    let first_end = source.find('\n').unwrap_or(source.len());
    let first = source[..first_end].trim_end_matches('\r');
    let line_span = Span::from_offsets(source, 0, first.len());
    let example = "start the file with `#!lua name=mylib`";
    let Some(rest) = first.strip_prefix("#!") else {
        return Err(Box::new(
            Diagnostic::error(
                Lint::Library,
                Span::from_offsets(source, 0, 0),
                "a Redis Functions library must start with `#!lua name=<library>`",
            )
            .with_label("no `#!lua name=...` line")
            .with_note("Redis refuses the library at FUNCTION LOAD: \"Missing library metadata\"")
            .with_help(example),
        ));
    };
    let mut words = rest.split_whitespace();
    let engine = words.next().unwrap_or("");
    if engine != "lua" {
        return Err(Box::new(
            Diagnostic::error(
                Lint::Library,
                line_span,
                format!("unknown function engine `{engine}`: Redis only has `lua`"),
            )
            .with_label("expected `#!lua name=<library>`")
            .with_help(example),
        ));
    }
    let mut name = None;
    let offset_of = |word: &str| word.as_ptr() as usize - source.as_ptr() as usize;
    for word in words {
        let start = offset_of(word);
        let span = Span::from_offsets(source, start, start + word.len());
        match word.strip_prefix("name=") {
            Some(value) if name.is_none() => name = Some((value, span)),
            _ => {
                return Err(Box::new(Diagnostic::error(
                    Lint::Library,
                    span,
                    format!("unknown library metadata `{word}`"),
                )
                .with_label("only `name=<library>` is allowed here")
                .with_note(format!(
                    "Redis refuses the library at FUNCTION LOAD: \"Invalid metadata value given: {word}\""
                ))));
            }
        }
    }
    let Some((value, span)) = name else {
        return Err(Box::new(
            Diagnostic::error(
                Lint::Library,
                line_span,
                "the library has no name: write `#!lua name=<library>`",
            )
            .with_label("no `name=`")
            .with_note(
                "Redis refuses the library at FUNCTION LOAD: \"Library name was not given\"",
            ),
        ));
    };
    if !valid_name(value) {
        return Err(Box::new(
            Diagnostic::error(
                Lint::Library,
                span,
                format!("invalid library name `{value}`"),
            )
            .with_label("not a valid library name")
            .with_help(NAME_RULE),
        ));
    }
    Ok((value.to_string(), span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(source: &str) -> String {
        library_name(source).unwrap_err().message.clone()
    }

    #[test]
    fn names_follow_redis_rules() {
        assert!(valid_name("my_lib2"));
        for bad in ["", "my-lib", "my lib", "é", "a.b"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_first_line_names_the_library() {
        let (name, span) = library_name("#!lua name=mylib\nreturn").unwrap();
        assert_eq!(name, "mylib");
        assert_eq!((span.start.column, span.end.column), (7, 17));
        assert_eq!(library_name("#!lua  name=x \r\n").unwrap().0, "x");
        assert!(err("redis.register_function('f', f)").contains("must start with"));
        assert!(err("#!lua\n").contains("has no name"));
        assert!(err("#!js name=x\n").contains("unknown function engine `js`"));
        assert!(err("#!lua name=x foo=bar\n").contains("unknown library metadata `foo=bar`"));
        assert!(err("#!lua name=a name=b\n").contains("unknown library metadata `name=b`"));
        assert!(err("#!lua name=my-lib\n").contains("invalid library name `my-lib`"));
        assert!(err("#!lua name=\n").contains("invalid library name ``"));
        assert!(err("").contains("must start with"));
    }
}
