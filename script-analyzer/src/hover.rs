//! What the value-fact engine ([`crate::facts`]) knows of the local variable
//! (or followed table field) at one place of a script, for an editor's
//! hover: [`value_at`], or [`values`] to infer once and look up many
//! places.
//!
//! Invariants: the value shown is the engine's at that place (a local read
//! after `if v then` has lost `false`); a local's declaration or
//! assignment shows the value it receives there; a name that is not a
//! local (a global, a library member) gives `None`, and so does a script
//! that does not parse.

use crate::calls::{Tree, redis_calls};
use crate::facts::{Inferred, Origin, Range, Ty, Types, unparenthesized};
use crate::scope::Model;
use crate::{Options, Span, parse};
use full_moon::ast::{
    Assignment, Expression, FunctionCall, Index, LocalAssignment, Prefix, Suffix, Var,
    VarExpression,
};
use full_moon::tokenizer::TokenReference;
use full_moon::visitors::Visitor;

/// What is known of a value at one place of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueInfo {
    /// The name as written: `v`, or `t.count` for a field.
    pub name: String,
    /// The bytes of the name (of the field's name, for a field).
    pub span: Span,
    /// What the engine says of it there.
    pub value: Inferred,
}

impl ValueInfo {
    /// The value in words: "a string or `false` (the reply of GET
    /// (`redis.call`); `false` is its nil reply, as for GET of a missing
    /// key)", "an integer (the reply of TTL (`redis.call`); as a number: at
    /// least -2)".
    pub fn describe(&self) -> String {
        let mut out = type_words(self.value.ty);
        let mut notes = Vec::new();
        if let Some(origin) = &self.value.origin {
            notes.push(origin_words(origin, self.value.ty));
        }
        if let Some(range) = range_words(self.value.range)
            && self.value.ty.intersects(Ty::NUMBER.union(Ty::STRING))
        {
            notes.push(range);
        }
        if !notes.is_empty() {
            out.push_str(" (");
            out.push_str(&notes.join("; "));
            out.push(')');
        }
        out
    }
}

/// The value of the local variable or followed field whose name covers
/// byte `offset` of `source`, analyzed with `options` (their declared keys
/// and arguments: inputs past them are nil).
///
/// `None` when no local is there, or `source` does not parse. Never
/// panics; the work runs on a thread with a large stack, as
/// [`crate::analyze`] does.
pub fn value_at(source: &str, options: &Options, offset: usize) -> Option<ValueInfo> {
    crate::on_large_stack(|| value_here(source, options, offset), || None)
}

fn value_here(source: &str, options: &Options, offset: usize) -> Option<ValueInfo> {
    let found = find(source, options, Some(offset))?.pop()?;
    Some(found.info(source))
}

/// The values of every local variable and followed field named in
/// `source`, analyzed with `options`, to look up with [`Values::at`]: one
/// inference for any number of places. `None` when `source` does not
/// parse. Never panics; the work runs on a thread with a large stack, as
/// [`crate::analyze`] does.
pub fn values(source: &str, options: &Options) -> Option<Values> {
    crate::on_large_stack(|| values_here(source, options), || None)
}

/// [`values`], on this thread.
pub(crate) fn values_here(source: &str, options: &Options) -> Option<Values> {
    let names = find(source, options, None)?;
    Some(Values::of_names(source, names))
}

/// [`crate::analyze`] and [`values`] of `source` from one inference, the
/// report first: `report` takes it, and says whether the values are still
/// wanted (`false` skips them). The report and the values are the same as
/// those two functions give.
///
/// `report` is called once, whatever `source` holds; should the analyzer
/// fail, with the report [`crate::analyze`] gives then. Never panics; the
/// work runs on a thread with a large stack, as [`crate::analyze`] does.
pub fn analyze_then_values(
    source: &str,
    options: &Options,
    report: impl FnOnce(crate::Report) -> bool + Send,
) -> Option<Values> {
    let report = std::sync::Mutex::new(Some(report));
    // Hands the report over, at most once.
    let give = |given: crate::Report| {
        let taken = report.lock().ok().and_then(|mut slot| slot.take());
        taken.is_some_and(|report| report(given))
    };
    let values = crate::on_large_stack(
        || {
            crate::analyze_here_then(source, options, |analyzed, inference| {
                if !give(analyzed) {
                    return None;
                }
                let (ast, types) = inference?;
                let mut finder = Finder {
                    types,
                    offset: None,
                    found: Vec::new(),
                };
                finder.visit_ast(ast);
                Some(Values::of_names(source, finder.found))
            })
        },
        || None,
    );
    // The analysis failed before its report: the report of a failure.
    give(crate::internal_error());
    values
}

/// What [`values`] found: the names of locals and followed fields in a
/// script, with their values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    source: String,
    /// Runs of names, one after the other in the text; each by start,
    /// then in the order [`Finder`] visits them.
    parts: Vec<std::sync::Arc<[Found]>>,
    /// Where the names' offsets are when they are not `source`'s: in the
    /// padded copy of it that an editor's analysis works on.
    layout: Option<std::sync::Arc<crate::padding::Layout>>,
}

impl Values {
    /// The values of `names` found in `source`.
    pub(crate) fn of_names(source: &str, names: Vec<Found>) -> Values {
        Values {
            source: source.to_string(),
            parts: vec![sorted(names).into()],
            layout: None,
        }
    }

    /// The values of `parts` (runs of names in order, each sorted by
    /// [`sorted`]) found in the padded copy `layout` makes of `source`.
    pub(crate) fn of_parts(
        source: &str,
        parts: Vec<std::sync::Arc<[Found]>>,
        layout: std::sync::Arc<crate::padding::Layout>,
    ) -> Values {
        Values {
            source: source.to_string(),
            parts: parts.into_iter().filter(|part| !part.is_empty()).collect(),
            layout: Some(layout),
        }
    }

    /// What [`value_at`] gives for `offset` of the same script.
    pub fn at(&self, offset: usize) -> Option<ValueInfo> {
        let offset = match &self.layout {
            Some(layout) => layout.to_padded(offset),
            None => offset,
        };
        // The run the names at `offset` are in: the last that starts at or
        // before it (names are tokens, which do not overlap).
        let part = self
            .parts
            .partition_point(|part| part.first().is_none_or(|name| name.start <= offset));
        let names = self.parts.get(part.checked_sub(1)?)?;
        // Sorted by start, the names are sorted by end too. Of those that
        // cover `offset`, the first is the one a visit in order finds.
        let started = &names[..names.partition_point(|name| name.start <= offset)];
        let first = started.partition_point(|name| name.end < offset);
        let found = started.get(first)?;
        Some(match &self.layout {
            None => found.info(&self.source),
            Some(layout) => {
                let moved = |span: Span| {
                    Span::from_offsets(
                        &self.source,
                        layout.to_text(span.start.offset),
                        layout.to_text(span.end.offset),
                    )
                };
                let mut value = found.value.clone();
                value.origin = value.origin.map(|origin| origin.moved(&moved));
                Found {
                    start: layout.to_text(found.start),
                    end: layout.to_text(found.end),
                    name: found.name.clone(),
                    value,
                }
                .info(&self.source)
            }
        })
    }

    /// How many names were found.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|part| part.len()).sum()
    }

    /// Whether no name was found.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `names` in the order of the text; at one place, the first found.
pub(crate) fn sorted(names: Vec<Found>) -> Vec<Found> {
    crate::padding::sorted(names)
}

impl crate::padding::Placed for Found {
    fn start(&self) -> usize {
        self.start
    }
}

/// The names of locals and followed fields in `stmt` (of the script
/// `types` are of), with their values, as [`values`] finds them.
pub(crate) fn names_in(types: &Types<'_>, stmt: &full_moon::ast::Stmt) -> Vec<Found> {
    let mut finder = Finder {
        types,
        offset: None,
        found: Vec::new(),
    };
    full_moon::visitors::Visit::visit(stmt, &mut finder);
    finder.found
}

/// The names of locals and followed fields in `ast`, with their values.
pub(crate) fn names_of(types: &Types<'_>, ast: &full_moon::ast::Ast) -> Vec<Found> {
    let mut finder = Finder {
        types,
        offset: None,
        found: Vec::new(),
    };
    finder.visit_ast(ast);
    finder.found
}

/// A name found, with its bytes (the span is made when it is asked for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
    name: String,
    value: Inferred,
}

impl Found {
    fn info(&self, source: &str) -> ValueInfo {
        ValueInfo {
            name: self.name.clone(),
            span: Span::from_offsets(source, self.start, self.end),
            value: self.value.clone(),
        }
    }
}

/// The names at `offset` (the first found only), or every name (`None`).
fn find(source: &str, options: &Options, offset: Option<usize>) -> Option<Vec<Found>> {
    let ast = parse::parse(source).ok()?;
    let model = Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, options.declared);
    let mut finder = Finder {
        types: &types,
        offset,
        found: Vec::new(),
    };
    finder.visit_ast(&ast);
    Some(finder.found)
}

/// Looks for the name at `offset`, or for every name.
struct Finder<'t, 'a> {
    types: &'t Types<'a>,
    offset: Option<usize>,
    found: Vec<Found>,
}

impl Finder<'_, '_> {
    /// Whether the name at the offset was found: nothing more to look for.
    fn done(&self) -> bool {
        self.offset.is_some() && !self.found.is_empty()
    }

    /// Whether `token` covers the offset (every token does without one).
    fn covers(&self, token: &TokenReference) -> bool {
        let start = token.token().start_position().bytes();
        let end = token.token().end_position().bytes();
        self.offset
            .is_none_or(|offset| (start..=end).contains(&offset))
    }

    /// Records `value` under `name` for `token`.
    fn record(&mut self, token: &TokenReference, name: String, value: Inferred) {
        self.found.push(Found {
            start: token.token().start_position().bytes(),
            end: token.token().end_position().bytes(),
            name,
            value,
        });
    }

    /// Records `value` for the local `token` names, if it covers the offset.
    fn local(&mut self, token: &TokenReference, value: impl FnOnce(&Self) -> Inferred) {
        if self.done() || !self.covers(token) || self.types.local(token).is_none() {
            return;
        }
        let value = value(self);
        self.record(token, token.token().to_string(), value);
    }

    /// A chain `prefix.a.b(...)`: its local prefix, or a field of it.
    fn chain<'s>(&mut self, prefix: &Prefix, suffixes: impl IntoIterator<Item = &'s Suffix>) {
        let Prefix::Name(head) = prefix else {
            return;
        };
        if self.done() || self.types.local(head).is_none() {
            return;
        }
        let suffixes: Vec<&Suffix> = suffixes.into_iter().collect();
        let mut steps = None;
        if self.covers(head) {
            let steps =
                steps.get_or_insert_with(|| self.types.chain(prefix, suffixes.iter().copied()));
            let value = steps.first().cloned().unwrap_or_else(any);
            self.local(head, |_| value);
            if self.done() {
                return;
            }
        }
        let mut name = head.token().to_string();
        for (i, suffix) in suffixes.iter().enumerate() {
            let Suffix::Index(Index::Dot { name: field, .. }) = suffix else {
                return;
            };
            name = format!("{name}.{}", field.token());
            if self.covers(field) {
                let steps =
                    steps.get_or_insert_with(|| self.types.chain(prefix, suffixes.iter().copied()));
                let value = steps.get(i + 1).cloned().unwrap_or_else(any);
                self.record(field, name.clone(), value);
                if self.done() {
                    return;
                }
            }
        }
    }
}

fn any() -> Inferred {
    Inferred {
        ty: Ty::ANY,
        origin: None,
        range: Range::ANY,
    }
}

impl Visitor for Finder<'_, '_> {
    fn visit_expression(&mut self, expr: &Expression) {
        if let Expression::Var(Var::Name(token)) = expr {
            self.local(token, |f| f.types.of(expr));
        }
    }

    fn visit_var_expression(&mut self, var: &VarExpression) {
        self.chain(var.prefix(), var.suffixes());
    }

    fn visit_function_call(&mut self, call: &FunctionCall) {
        self.chain(call.prefix(), call.suffixes());
    }

    fn visit_local_assignment(&mut self, local: &LocalAssignment) {
        let values: Vec<&Expression> = local.expressions().iter().collect();
        for (i, name) in local.names().iter().enumerate() {
            self.local(name, |f| assigned(f.types, &values, i));
        }
    }

    fn visit_assignment(&mut self, assignment: &Assignment) {
        let values: Vec<&Expression> = assignment.expressions().iter().collect();
        for (i, var) in assignment.variables().iter().enumerate() {
            if let Var::Name(name) = var {
                self.local(name, |f| assigned(f.types, &values, i));
            }
        }
    }

    fn visit_parameter(&mut self, parameter: &full_moon::ast::Parameter) {
        if let full_moon::ast::Parameter::Name(name) = parameter {
            self.local(name, |f| match f.types.local(name) {
                Some(var) => f.types.var(var),
                None => any(),
            });
        }
    }

    fn visit_generic_for(&mut self, generic: &full_moon::ast::GenericFor) {
        for name in generic.names() {
            self.local(name, |f| match f.types.local(name) {
                Some(var) => f.types.var(var),
                None => any(),
            });
        }
    }

    fn visit_numeric_for(&mut self, numeric: &full_moon::ast::NumericFor) {
        let name = numeric.index_variable();
        self.local(name, |f| match f.types.local(name) {
            Some(var) => f.types.var(var),
            None => any(),
        });
    }
}

/// The value the `i`-th name of an assignment receives from `values`.
fn assigned(types: &Types<'_>, values: &[&Expression], i: usize) -> Inferred {
    match values.get(i) {
        Some(value) => types.of(value),
        // Past the values: nil, unless the last one is a call (then: any).
        None => match values.last().map(|v| unparenthesized(v)) {
            Some(Expression::FunctionCall(_)) => any(),
            _ => Inferred {
                ty: Ty::NIL,
                origin: None,
                range: Range::ANY,
            },
        },
    }
}

/// "a string or `false`", "an integer", "any value".
fn type_words(ty: Ty) -> String {
    if ty == Ty::EMPTY {
        return "no value (this place is not reached)".to_string();
    }
    if ty.is_any() {
        return "any value (not known)".to_string();
    }
    let mut words: Vec<&str> = Vec::new();
    let numbers = ty.intersection(Ty::NUMBER);
    if numbers == Ty::NUMBER {
        words.push("a number");
    } else if numbers == Ty::INT {
        words.push("an integer");
    } else if numbers == Ty::FLOAT {
        words.push("a fractional number");
    }
    for (t, word) in [
        (Ty::STRING, "a string"),
        (Ty::STATUS, "a status table (`{ok = ...}`)"),
        (Ty::ERROR, "an error table (`{err = ...}`)"),
        (Ty::ARRAY, "an array"),
        (Ty::PAIRS, "a flat table of pairs"),
        (Ty::TABLE, "a table"),
        (Ty::MAP, "a map table (`{map = ...}`)"),
        (Ty::SET, "a set table (`{set = ...}`)"),
        (Ty::DOUBLE, "a double table (`{double = ...}`)"),
        (Ty::BIG_NUMBER, "a big number table (`{big_number = ...}`)"),
        (Ty::VERBATIM, "a verbatim string table"),
        (Ty::FUNCTION, "a function"),
        (Ty::OTHER, "userdata (such as `cjson.null`)"),
    ] {
        if ty.intersects(t) {
            words.push(word);
        }
    }
    if ty.intersection(Ty::BOOL) == Ty::BOOL {
        words.push("a boolean");
    } else if ty.intersects(Ty::TRUE) {
        words.push("`true`");
    } else if ty.intersects(Ty::FALSE) {
        words.push("`false`");
    }
    if ty.intersects(Ty::NIL) {
        words.push("nil");
    }
    match words.split_last() {
        None => "no value".to_string(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Where the value comes from, in words.
fn origin_words(origin: &Origin, ty: Ty) -> String {
    match origin {
        Origin::Reply { command, pcall, .. } => {
            let call = if *pcall { "redis.pcall" } else { "redis.call" };
            if ty.intersects(Ty::FALSE) {
                format!(
                    "the reply of {command} (`{call}`); `false` is its nil reply, \
                     as for {command} of a missing key"
                )
            } else {
                format!("the reply of {command} (`{call}`)")
            }
        }
        Origin::Tonumber { .. } => "`tonumber` of text: nil when it is not a number".to_string(),
        Origin::Cursor { command } => format!("the cursor of a {command} reply"),
        Origin::Input { name } => format!("the input {name}"),
        Origin::Missing { name } => format!("{name}, which the caller does not pass"),
        Origin::Concat { input } => format!("text built from {input}"),
        Origin::Element { command } => format!("an element of the {command} reply"),
        Origin::Trusted { of } => origin_words(of, ty),
        Origin::Decoded => "a document `cjson.decode` gives".to_string(),
        Origin::Rounded { .. } => "a rounded division, 0 for small inputs".to_string(),
        Origin::Difference { .. } => "a difference, which may be 0 or negative".to_string(),
        Origin::Fraction { why, .. } => why.clone(),
        Origin::Boolean { .. } => {
            "a comparison, `not` or a boolean literal: Redis replies 1 for `true`, nil for `false`"
                .to_string()
        }
    }
}

/// "between 0 and 10", "at least -2"; `None` when nothing is known.
fn range_words(range: Range) -> Option<String> {
    let finite = |n: f64| n.is_finite().then_some(n);
    match (finite(range.lo), finite(range.hi)) {
        (Some(lo), Some(hi)) if lo == hi => Some(format!("as a number: exactly {lo}")),
        (Some(lo), Some(hi)) => Some(format!("as a number: between {lo} and {hi}")),
        (Some(lo), None) => Some(format!("as a number: at least {lo}")),
        (None, Some(hi)) => Some(format!("as a number: at most {hi}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Declared;

    /// The value at the `nth` (0-based) occurrence of `needle` in `source`.
    fn at(source: &str, needle: &str, nth: usize) -> Option<ValueInfo> {
        let offset = source
            .match_indices(needle)
            .nth(nth)
            .map(|(i, _)| i)
            .expect("the needle is in the source");
        let options = Options {
            declared: Some(Declared::exact(1, 1)),
            ..Options::default()
        };
        value_at(source, &options, offset)
    }

    #[test]
    fn values_give_what_value_at_gives_around_each_name_of_the_corpus_and_the_lock_scripts() {
        let dirs = [
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus"),
            concat!(env!("CARGO_MANIFEST_DIR"), "/../lock-runtime/scripts"),
        ];
        let options = Options {
            declared: Some(Declared::exact(2, 3)),
            ..Options::default()
        };
        let mut names = 0;
        for dir in dirs {
            for entry in std::fs::read_dir(dir).expect("the scripts' directory") {
                let path = entry.expect("an entry").path();
                if path.extension().is_none_or(|e| e != "lua") {
                    continue;
                }
                let source = std::fs::read_to_string(&path).expect("a script");
                let Some(values) = values(&source, &options) else {
                    assert_eq!(value_at(&source, &options, 0), None);
                    continue;
                };
                names += values.len();
                // Bytes around the names, and some between (60 at most
                // per script: each `value_at` is a whole inference).
                let mut offsets: Vec<usize> = values
                    .parts
                    .iter()
                    .flat_map(|part| part.iter())
                    .flat_map(|name| {
                        [
                            name.start.saturating_sub(1),
                            name.start,
                            name.end,
                            name.end + 1,
                        ]
                    })
                    .chain((0..=source.len()).step_by(127))
                    .collect();
                offsets.sort_unstable();
                offsets.dedup();
                let step = offsets.len().div_ceil(60);
                for offset in offsets.into_iter().step_by(step) {
                    assert_eq!(
                        values.at(offset),
                        value_at(&source, &options, offset),
                        "{} at byte {offset}",
                        path.display()
                    );
                }
            }
        }
        assert!(names > 200, "{names} names");
    }

    #[test]
    fn one_inference_gives_the_report_of_analyze_and_the_values_of_values_on_the_corpus() {
        let dirs = [
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus"),
            concat!(env!("CARGO_MANIFEST_DIR"), "/../lock-runtime/scripts"),
        ];
        let options = Options {
            declared: Some(Declared::exact(2, 3)),
            ..Options::default()
        };
        fn add(dir: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("the scripts' directory") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    add(&path, out);
                } else if path.extension().is_some_and(|e| e == "lua") {
                    out.push(std::fs::read_to_string(&path).expect("a script"));
                }
            }
        }
        let mut sources = vec!["local v = 1 +".to_string(), String::new()];
        for dir in dirs {
            add(std::path::Path::new(dir), &mut sources);
        }
        assert!(sources.len() > 100, "{} scripts", sources.len());
        for source in &sources {
            let fresh = crate::analyze(source, &options);
            let mut given = None;
            let found = analyze_then_values(source, &options, |report| {
                given = Some(report);
                true
            });
            let given = given.expect("the report is given");
            assert_eq!(given.diagnostics, fresh.diagnostics, "{source}");
            assert_eq!(given.info, fresh.info, "{source}");
            assert_eq!(found, values(source, &options), "{source}");
            // Not wanted: the report still comes, no values.
            let mut calls = 0;
            let skipped = analyze_then_values(source, &options, |_| {
                calls += 1;
                false
            });
            assert_eq!((calls, skipped), (1, None));
        }
    }

    #[test]
    fn a_local_from_get_is_a_string_or_false_from_a_missing_key() {
        let source = "local v = redis.call('GET', KEYS[1])\nreturn v";
        let read = at(source, "v", 1).expect("a local");
        assert_eq!(read.name, "v");
        assert_eq!(read.value.ty, Ty::STRING.union(Ty::FALSE));
        assert_eq!(
            read.describe(),
            "a string or `false` (the reply of GET (`redis.call`); \
             `false` is its nil reply, as for GET of a missing key)"
        );
        assert_eq!(&source[read.span.start.offset..read.span.end.offset], "v");
        let declared = at(source, "v", 0).expect("the declaration");
        assert_eq!(declared.value.ty, read.value.ty);
    }

    #[test]
    fn a_local_from_incr_is_an_integer() {
        let source = "local n = redis.call('INCR', KEYS[1])\nreturn n";
        let read = at(source, "n", 2).expect("a local");
        assert_eq!(read.value.ty, Ty::INT);
        assert_eq!(
            read.describe(),
            "an integer (the reply of INCR (`redis.call`))"
        );
    }

    #[test]
    fn a_guarded_local_has_lost_false() {
        let source = "local v = redis.call('GET', KEYS[1])\nif v then\n  return v\nend\nreturn 0";
        let guarded = at(source, "v", 2).expect("a local");
        assert_eq!(guarded.value.ty, Ty::STRING);
        assert!(guarded.describe().starts_with("a string ("), "{guarded:?}");
    }

    #[test]
    fn a_field_of_a_local_table_has_the_value_set_on_it() {
        let source = "local t = {}\nt.count = redis.call('INCR', KEYS[1])\nreturn t.count + 1";
        let field = at(source, "count", 1).expect("a field");
        assert_eq!(field.name, "t.count");
        assert_eq!(field.value.ty, Ty::INT);
        assert_eq!(
            &source[field.span.start.offset..field.span.end.offset],
            "count"
        );
    }

    #[test]
    fn a_missing_input_is_nil_and_ranges_are_shown() {
        let source = "local a = ARGV[2]\nlocal ttl = redis.call('TTL', KEYS[1])\nreturn {a, ttl}";
        let missing = at(source, "a,", 0).expect("a local");
        assert_eq!(missing.value.ty, Ty::NIL);
        assert_eq!(
            missing.describe(),
            "nil (ARGV[2], which the caller does not pass)"
        );
        let ttl = at(source, "ttl", 1).expect("a local");
        assert!(
            ttl.describe().ends_with("as a number: at least -2)"),
            "{}",
            ttl.describe()
        );
    }

    #[test]
    fn globals_library_members_and_bad_scripts_give_nothing() {
        assert_eq!(at("return redis.call('GET', KEYS[1])", "redis", 0), None);
        assert_eq!(at("x = 1 return x", "x", 1), None);
        assert_eq!(at("local v = (", "v", 0), None);
    }
}
