//! `lockctl lint --format sarif`: the findings as one SARIF 2.1.0 log, the
//! format code-scanning services (GitHub code scanning, GitLab, IDEs) read.
//!
//! One run, whose tool is `lockctl` with one rule per lint (its snake_case
//! name as the rule id) and a `header` rule for script headers that cannot
//! be read. Each finding is a result at its file, line and column (columns
//! count characters: `columnKind` is `unicodeCodePoints`). Files that could
//! not be read or checked are tool execution notifications, and make the
//! invocation unsuccessful. File names are URIs relative to the directory
//! lockctl ran in when they were given relative, `file://` URIs otherwise.

use redlua_analyzer::header::HeaderError;
use redlua_analyzer::{Diagnostic, Lint, Severity, Span};
use serde_json::{Value, json};

/// The rule id of a header that cannot be read.
pub const HEADER_RULE: &str = "header";

/// Where the lints are described: the variants of the analyzer's `Lint`.
const LINTS_URI: &str =
    "https://docs.rs/redlua-analyzer/latest/redlua_analyzer/lints/enum.Lint.html";

/// Where script headers are described.
const HEADER_URI: &str = "https://docs.rs/redlua-analyzer/latest/redlua_analyzer/header/index.html";

/// The SARIF log being built.
#[derive(Default)]
pub struct Log {
    results: Vec<Value>,
    notifications: Vec<Value>,
}

impl Log {
    /// Adds the findings of the file shown as `file`.
    pub fn diagnostics(&mut self, file: &str, diagnostics: &[Diagnostic]) {
        for d in diagnostics {
            let mut text = d.message.clone();
            if let Some(label) = &d.label {
                text.push_str(&format!(": {label}"));
            }
            for note in &d.notes {
                text.push_str(&format!("\nnote: {note}"));
            }
            if let Some(help) = &d.help {
                text.push_str(&format!("\nhelp: {help}"));
            }
            let mut result = json!({
                "ruleId": d.lint.name(),
                "ruleIndex": rule_index(d.lint),
                "level": level(d.severity),
                "message": { "text": text },
                "locations": [location(file, d.primary_span())],
            });
            if !d.secondary.is_empty() {
                result["relatedLocations"] = d
                    .secondary
                    .iter()
                    .enumerate()
                    .map(|(id, label)| {
                        let mut related = location(file, Some(label.span));
                        related["id"] = id.into();
                        related["message"] = json!({ "text": label.message });
                        related
                    })
                    .collect();
            }
            self.results.push(result);
        }
    }

    /// Adds a header that cannot be read, at its faulty setting.
    pub fn header_error(&mut self, file: &str, error: &HeaderError, message: &str) {
        let mut location = location(file, None);
        location["physicalLocation"]["region"] = json!({
            "startLine": error.line,
            "startColumn": error.column,
            "endLine": error.line,
            "endColumn": error.column + error.len,
        });
        self.results.push(json!({
            "ruleId": HEADER_RULE,
            "ruleIndex": Lint::ALL.len(),
            "level": "error",
            "message": { "text": message },
            "locations": [location],
        }));
    }

    /// Adds a file that could not be read or checked.
    pub fn not_checked(&mut self, file: &str, message: &str) {
        self.notifications.push(json!({
            "level": "error",
            "message": { "text": message },
            "locations": [location(file, None)],
        }));
    }

    /// The log.
    pub fn document(self) -> Value {
        let mut rules: Vec<Value> = Lint::ALL
            .iter()
            .map(|lint| {
                json!({
                    "id": lint.name(),
                    // The variant's anchor: its name as `Debug` writes it.
                    "helpUri": format!("{LINTS_URI}#variant.{lint:?}"),
                })
            })
            .collect();
        rules.push(json!({
            "id": HEADER_RULE,
            "helpUri": HEADER_URI,
            "shortDescription": { "text": "the script's `-- redlua:` header cannot be read" },
        }));
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "lockctl",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://docs.rs/crate/redlua-lockctl",
                    "rules": rules,
                }},
                "columnKind": "unicodeCodePoints",
                "invocations": [{
                    "executionSuccessful": self.notifications.is_empty(),
                    "toolExecutionNotifications": self.notifications,
                }],
                "results": self.results,
            }],
        })
    }
}

fn rule_index(lint: Lint) -> usize {
    Lint::ALL.iter().position(|l| *l == lint).unwrap_or(0)
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// A location in `file`, with a region when `span` is known.
fn location(file: &str, span: Option<Span>) -> Value {
    let mut physical = json!({ "artifactLocation": { "uri": uri(file) } });
    if let Some(span) = span {
        physical["region"] = json!({
            "startLine": span.start.line,
            "startColumn": span.start.column,
            "endLine": span.end.line,
            "endColumn": span.end.column.max(1),
        });
    }
    json!({ "physicalLocation": physical })
}

/// A file name as a URI reference: `/` separators, characters outside the
/// unreserved set percent-encoded, `file://` before an absolute path.
pub fn uri(file: &str) -> String {
    let mut out = String::new();
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for byte in file.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(byte));
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::{Options, analyze};

    #[test]
    fn file_names_become_uris() {
        assert_eq!(uri("scripts/a.lua"), "scripts/a.lua");
        assert_eq!(
            uri("/tmp/my scripts/ä.lua"),
            "file:///tmp/my%20scripts/%C3%A4.lua"
        );
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
    }

    #[test]
    fn a_finding_is_a_result_with_its_rule_and_region() {
        let source = "local x = 1\nreturn redis.call('hincrbyy', KEYS[1], 'n', x)\n";
        let report = analyze(source, &Options::default());
        let mut log = Log::default();
        log.diagnostics("s.lua", &report.diagnostics);
        let error = redlua_analyzer::header::parse("-- x\n-- redlua: key=1\n").unwrap_err();
        log.header_error("t.lua", &error, "unknown header setting `key`");
        let doc = log.document();
        let run = &doc["runs"][0];
        assert_eq!(doc["version"], "2.1.0");
        let result = &run["results"][0];
        assert_eq!(result["ruleId"], "unknown_command");
        assert_eq!(result["level"], "error");
        let rule = &run["tool"]["driver"]["rules"][result["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], "unknown_command");
        assert!(
            rule["helpUri"]
                .as_str()
                .unwrap()
                .ends_with("/enum.Lint.html#variant.UnknownCommand"),
            "{rule}"
        );
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], 2);
        assert_eq!(region["startColumn"], 19);
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "s.lua"
        );
        assert!(
            result["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("unknown Redis command `hincrbyy`: did you mean `hincrby`?"),
            "{result}"
        );
        let header = &run["results"][1];
        assert_eq!(header["ruleId"], HEADER_RULE);
        assert_eq!(
            header["locations"][0]["physicalLocation"]["region"],
            json!({ "startLine": 2, "startColumn": 12, "endLine": 2, "endColumn": 17 })
        );
        let rule = &run["tool"]["driver"]["rules"][header["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], HEADER_RULE);
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    }

    #[test]
    fn an_unreadable_file_makes_the_invocation_unsuccessful() {
        let mut log = Log::default();
        log.not_checked(
            "gone.lua",
            "cannot read `gone.lua`: No such file or directory",
        );
        let doc = log.document();
        let invocation = &doc["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
                ["uri"],
            "gone.lua"
        );
        assert_eq!(doc["runs"][0]["results"], json!([]));
    }
}
