//! Writing to stdout and stderr without panicking when they are closed
//! (`lockctl lint *.lua | head -1`), and the `--json` switch.

use std::io::Write;

/// How results are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Human,
    /// One JSON document (or one JSON object per line for events).
    Json,
}

/// Writes `text` and a newline to stdout; a closed stdout is ignored.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// Writes `text` and a newline to stderr; a closed stderr is ignored.
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// Writes `value` as one line of JSON to stdout.
pub fn json(value: &serde_json::Value) {
    out(&value.to_string());
}

/// Writes a note about what lockctl is doing to stderr, prefixed with
/// `lockctl: `, in the chosen format.
pub fn note(format: Format, event: &str, text: &str, fields: serde_json::Value) {
    match format {
        Format::Human => err(&format!("lockctl: {text}")),
        Format::Json => {
            let mut object = serde_json::Map::new();
            object.insert("event".into(), event.into());
            if let serde_json::Value::Object(fields) = fields {
                object.extend(fields);
            }
            object.insert("message".into(), text.into());
            err(&serde_json::Value::Object(object).to_string());
        }
    }
}
