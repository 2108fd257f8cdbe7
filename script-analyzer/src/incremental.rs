//! An editor's analysis: the diagnostics and the values of the locals of
//! a script that changes a little at a time, reusing what the analysis of
//! its previous version found wherever the change cannot have changed it.
//!
//! [`analyze_then_values`] gives what [`crate::analyze`] and
//! [`crate::hover::values`] give, and a [`Session`] to hand to it with the
//! next version of the same script.
//!
//! How: the function statements of the main chunk written on lines of
//! their own (`local function NAME(...)` or `function NAME(...)` at the
//! start of a line, to a line that is just `end`) are *units*. The session
//! analyzes a copy of the script in which each unit has room to grow:
//! spaces after its `end`, before the line break. Lines and columns are
//! those of the script; only byte offsets differ, and they are mapped
//! back. When a change stays inside one unit and fits its room, only that
//! statement is parsed again, in place, and only its facts and findings
//! are worked out again, against the rest of the script's (the facts'
//! `unit` module); the rest keeps its own. A version that is the
//! session's own again (an undo) keeps its findings. Anything else is
//! analyzed anew; a version that does not parse leaves the previous
//! session for the next one.
//!
//! Invariants (what makes the result that of a full analysis):
//! - Spaces at the end of a line between two statements change nothing
//!   the analysis reads but byte offsets: the padded copy's findings are
//!   the script's, moved.
//! - A unit's statement is replaced only by one of the same kind, name
//!   and parameters that names no local declared outside it but the
//!   script's own functions it calls. The old and the new statement must
//!   give the rest of the script the same uses, arguments and returned
//!   values, and leave the script with the same reply protocol and seeded
//!   keys, the same `KEYS` and `ARGV` read, globals assigned and library
//!   members tested, and its walks within their budget. Otherwise the
//!   script is analyzed anew (a change of what a function returns among
//!   them: its callers' findings may change).
//! - The lints that look at the main chunk's `return`s keep their
//!   findings (they read no statement of a unit, only the values the
//!   walks give them, unchanged); those that look at each statement are
//!   run on the new statement alone, with the whole script's facts and
//!   names; `maybe_false`'s one finding per local is applied to the whole
//!   script's findings again.
//! - Before it is replaced, the old statement is checked the same way,
//!   and must give exactly what the analysis of the whole script found in
//!   it: a statement whose findings depend on more than what is checked is
//!   not replaced.
//!
//! With [`CHECK_VARIABLE`] set, every reuse is checked against a full
//! analysis.

use crate::calls::{RedisCall, Tree, redis_calls_in};
use crate::facts::Types;
use crate::facts::unit::{Unit, UnitNodes};
use crate::hover::{Found, Values};
use crate::lints::maybe_false::{self, Candidates};
use crate::lints::{self, Context, Lint};
use crate::padding::Layout;
use crate::scope::{Model, Resolution};
use crate::{Diagnostic, Options, Report, parse};
use full_moon::ast::{Ast, Stmt};
use std::collections::BTreeSet;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

mod checks;
mod compare;
mod units;

use checks::Checks;
use compare::{
    Counts, bodies, counted, globals_assigned, input_reads, placed, recount, replace_in, same_head,
    same_options, token_starts, within,
};
use units::{candidates, line_break_at, units};

/// What an editor keeps of the analysis of one version of a script, to
/// analyze the next one faster ([`analyze_then_values`]).
pub struct Session {
    inner: Box<Inner>,
}

impl Session {
    /// Whether the analysis that made this session reused the previous
    /// version's (only the changed statement was analyzed).
    pub fn reused(&self) -> bool {
        self.inner.anew.is_none()
    }

    /// Why the analysis that made this session analyzed the script anew,
    /// if it did: no previous version, a change outside the functions...
    pub fn anew(&self) -> Option<&'static str> {
        self.inner.anew
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("units", &self.inner.units.len())
            .field("bytes", &self.inner.text.len())
            .finish()
    }
}

/// The diagnostics of `source` (those [`crate::analyze`] gives), handed to
/// `report`, which says whether the values of the locals are still wanted;
/// then those values (those [`crate::hover::values`] gives; `None` when the
/// script does not parse, or when not wanted and not worked out for the
/// session anyway), and the session to give the next call, for the next
/// version of the same script. `previous` is the session of an earlier
/// version: what can be reused of it is.
///
/// `report` is called once, whatever `source` holds. Never panics; the
/// work runs on a thread with a large stack, as [`crate::analyze`] does.
pub fn analyze_then_values(
    previous: Option<Session>,
    source: &str,
    options: &Options,
    report: impl FnOnce(Vec<Diagnostic>) -> bool + Send,
) -> (Option<Values>, Option<Session>) {
    let report = Mutex::new(Some(report));
    let previous = Mutex::new(previous);
    // Hands the diagnostics over, at most once.
    let give = |given: Vec<Diagnostic>| {
        let taken = report.lock().ok().and_then(|mut slot| slot.take());
        taken.is_some_and(|report| report(given))
    };
    let result = crate::on_large_stack(
        || {
            let previous = previous.lock().ok().and_then(|mut slot| slot.take());
            analyze_here(previous, source, options, &give)
        },
        || (None, None),
    );
    // The analysis failed before its report: the report of a failure.
    give(crate::internal_error().diagnostics);
    result
}

fn analyze_here(
    previous: Option<Session>,
    source: &str,
    options: &Options,
    give: &dyn Fn(Vec<Diagnostic>) -> bool,
) -> (Option<Values>, Option<Session>) {
    let updated = previous.map(|previous| {
        // A bug of the reuse must not cost the diagnostics: the script is
        // analyzed anew.
        catch_unwind(AssertUnwindSafe(|| previous.inner.update(source, options)))
            .unwrap_or_else(|_| Err(Failed::from("the reuse failed")))
    });
    let (why, kept) = match updated {
        None => ("no previous version", None),
        Some(Ok((diagnostics, values, inner))) => {
            if checking() {
                check(source, options, &diagnostics, &values);
            }
            give(diagnostics);
            return (Some(values), Some(Session { inner }));
        }
        Some(Err(Failed { why, kept })) => (why, kept),
    };
    let (values, session) = full(source, options, give, why);
    // A version that cannot be followed (it does not parse): the previous
    // one's session serves the next version, as likely to be mended.
    let kept = kept.map(|mut inner| {
        inner.anew = Some(why);
        Session { inner }
    });
    (values, session.or(kept))
}

/// Why an analysis could not reuse the previous version's, and that
/// version's session when it was left as it was.
struct Failed {
    why: Why,
    kept: Option<Box<Inner>>,
}

impl From<Why> for Failed {
    fn from(why: Why) -> Failed {
        Failed { why, kept: None }
    }
}

/// The environment variable that has every reuse checked against a full
/// analysis of the same text (a difference fails the analysis, printing
/// both): to hunt a bug of the reuse down.
pub const CHECK_VARIABLE: &str = "REDLUA_CHECK_INCREMENTAL";

fn checking() -> bool {
    static CHECKING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHECKING.get_or_init(|| std::env::var_os(CHECK_VARIABLE).is_some())
}

/// Panics unless `diagnostics` and `values` are what a full analysis of
/// `source` gives.
fn check(source: &str, options: &Options, diagnostics: &[Diagnostic], values: &Values) {
    let full = crate::analyze_here(source, options);
    assert_eq!(
        diagnostics,
        full.diagnostics.as_slice(),
        "{CHECK_VARIABLE}: the reused analysis differs from a full one"
    );
    let expected = crate::hover::values_here(source, options);
    for offset in 0..=source.len() {
        assert_eq!(
            values.at(offset),
            expected.as_ref().and_then(|v| v.at(offset)),
            "{CHECK_VARIABLE}: the value at byte {offset} differs from a full analysis's"
        );
    }
}

/// Why a script is analyzed anew.
type Why = &'static str;

/// How many variables of replaced statements a session keeps before it is
/// renewed by a full analysis.
const STALE_VARIABLES: usize = 16_384;

/// `Err(why)` unless `holds`.
fn require(holds: bool, why: Why) -> Result<(), Why> {
    if holds { Ok(()) } else { Err(why) }
}

/// An `Option` that must hold a value, or the analysis starts anew.
trait Because<T> {
    fn because(self, why: Why) -> Result<T, Why>;
}

impl<T> Because<T> for Option<T> {
    fn because(self, why: Why) -> Result<T, Why> {
        self.ok_or(why)
    }
}

/// The analysis of the whole script, and a session for the next version
/// when the script has units.
fn full(
    source: &str,
    options: &Options,
    give: &dyn Fn(Vec<Diagnostic>) -> bool,
    why: Why,
) -> (Option<Values>, Option<Session>) {
    let candidates = candidates(source);
    if candidates.is_empty() {
        return plain(source, options, give);
    }
    let (padded, layout) = Layout::pad(source, &candidates);
    let ast = match parse::parse(&padded) {
        Ok(ast) => ast,
        Err(errors) => {
            // Spaces at the end of lines move the syntax errors only (they
            // point at tokens, never into the spaces).
            give(layout.diagnostics(source, &errors));
            return (None, None);
        }
    };
    // Boxed before anything keeps the addresses of its nodes.
    let base = Box::new(ast);
    let Some(units) = units(&base, &layout, &padded) else {
        return plain(source, options, give);
    };
    let model = Model::build(&base);
    let mut report = Report::default();
    report.info.shebang_flags = parse::shebang_flags(&padded);
    let read_only = crate::read_only(options, &report.info);
    let no_types = Types::default();
    let cx = Context {
        source: &padded,
        ast: &base,
        model: &model,
        types: &no_types,
        options,
        read_only,
        unit: None,
    };
    let ran = lints::run_all(&cx, &mut report);
    let layout = Arc::new(layout);
    let mut diagnostics = report.diagnostics;
    sort(&mut diagnostics);
    give(layout.diagnostics(source, &diagnostics));
    // What the next version needs; the values too.
    let lints::Ran {
        types,
        calls,
        outputs,
    } = ran;
    let cx = Context {
        types: &types,
        ..cx
    };
    let candidates = maybe_false::candidates(&cx);
    let tested = counted(lints::unknown_member::tests(&cx));
    let inputs = counted(input_reads(&cx));
    let names = crate::hover::names_of(&types, &base);
    let parts = layout.parts(names);
    let values = Values::of_parts(source, parts.clone(), layout.clone());
    let base_vars = model.variables.len();
    let stmts: Vec<&Stmt> = base.nodes().stmts().collect();
    let units = units
        .into_iter()
        .map(|(index, local)| {
            let own = match stmts[index] {
                Stmt::LocalFunction(f) if local => match model.resolve(f.name()) {
                    Some(Resolution::Local(var)) => Some(var),
                    _ => None,
                },
                _ => None,
            };
            let starts = &model.top_level_starts;
            let first = starts[index] + usize::from(local);
            let inner = first..starts[index + 1].max(first);
            UnitState {
                index,
                overlay: None,
                own,
                base_inner: inner.clone(),
                inner,
            }
        })
        .collect();
    let facts = types.save();
    let inner = Inner {
        text: source.to_string(),
        options: options.clone(),
        padded,
        layout,
        units,
        model,
        calls,
        facts: Some(facts),
        read_only,
        outputs,
        candidates,
        tested,
        inputs,
        parts,
        base_vars,
        base,
        anew: Some(why),
    };
    (
        Some(values),
        Some(Session {
            inner: Box::new(inner),
        }),
    )
}

/// The analysis without a session (a script without units, or one that
/// does not parse).
fn plain(
    source: &str,
    options: &Options,
    give: &dyn Fn(Vec<Diagnostic>) -> bool,
) -> (Option<Values>, Option<Session>) {
    let values = crate::analyze_here_then(source, options, |report, inference| {
        if !give(report.diagnostics) {
            return None;
        }
        let (ast, types) = inference?;
        Some(Values::of_names(source, crate::hover::names_of(types, ast)))
    });
    (values, None)
}

/// Sorts diagnostics as [`crate::analyze`] does: places in the script in
/// order, then the Rust side.
fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| match d.primary_span() {
        Some(span) => (0, span.start.offset, span.end.offset),
        None => (1, 0, 0),
    });
}

/// The session's state.
struct Inner {
    /// The script, as analyzed.
    text: String,
    options: Options,
    /// The padded copy.
    padded: String,
    layout: Arc<Layout>,
    /// The parse of the padded copy when the session began; the units
    /// replaced since have their statement in [`UnitState::overlay`].
    base: Box<Ast>,
    units: Vec<UnitState>,
    model: Model,
    /// The `redis.call` sites, in order.
    calls: Vec<RedisCall>,
    facts: Option<crate::facts::Saved>,
    read_only: bool,
    /// The diagnostics of each lint, in [`Lint::ALL`]'s order (offsets of
    /// the padded copy).
    outputs: Vec<(Lint, Vec<Diagnostic>)>,
    /// `maybe_false`'s findings before its one-per-local rule.
    candidates: Candidates,
    /// The library members the script tests for existence, with how
    /// many times.
    tested: Counts<(String, String)>,
    /// The reads of `KEYS` and `ARGV` (by index, or dynamic: `None`), with
    /// how many times.
    inputs: Counts<(&'static str, Option<u32>)>,
    /// The names of locals with their values, in runs ([`Layout::parts`]).
    parts: Vec<Arc<[Found]>>,
    /// How many variables the parse of the padded copy declared.
    base_vars: usize,
    /// Why the last analysis did not reuse the previous version's
    /// (`None`: it did).
    anew: Option<Why>,
}

/// One unit.
struct UnitState {
    /// Its statement's index in the base's main chunk.
    index: usize,
    /// The statement that replaced it, alone in its tree.
    overlay: Option<Box<Ast>>,
    /// The local `local function` declares.
    own: Option<usize>,
    /// The variables declared inside it in the base.
    base_inner: Range<usize>,
    /// Those declared inside it now.
    inner: Range<usize>,
}

/// The first and only statement of a tree holding one.
fn only_stmt(ast: &Ast) -> Option<&Stmt> {
    let mut stmts = ast.nodes().stmts();
    let stmt = stmts.next()?;
    (stmts.next().is_none() && ast.nodes().last_stmt().is_none()).then_some(stmt)
}

impl Inner {
    /// Unit `i`'s statement.
    fn stmt(&self, i: usize) -> &Stmt {
        let unit = &self.units[i];
        match &unit.overlay {
            Some(ast) => only_stmt(ast).expect("an overlay holds one statement"),
            None => self
                .base
                .nodes()
                .stmts()
                .nth(unit.index)
                .expect("a unit's statement"),
        }
    }

    /// The analysis of `source` when it is this session's text changed
    /// inside one unit (see the module's documentation): its diagnostics,
    /// the values, and the session of `source`. `None`: to be analyzed
    /// anew (this session is no longer of use).
    fn update(
        self: Box<Self>,
        source: &str,
        options: &Options,
    ) -> Result<(Vec<Diagnostic>, Values, Box<Inner>), Failed> {
        // The variables of replaced statements stay (unused): past some,
        // a new session is made.
        require(
            self.model.variables.len() < self.base_vars + STALE_VARIABLES,
            "the session is renewed",
        )?;
        if source == self.text && same_options(&self.options, options) {
            // Back to this version (an undo, a mended mistake): its
            // findings stand.
            let mut this = self;
            this.anew = None;
            let diagnostics = this.diagnostics();
            let values = Values::of_parts(source, this.parts.clone(), this.layout.clone());
            return Ok((diagnostics, values, this));
        }
        let (i, ast, content) = match self.placed_change(source, options) {
            Ok(change) => change,
            Err(why) => {
                return Err(Failed {
                    why,
                    kept: Some(self),
                });
            }
        };
        Ok(self.replace(i, source, content, ast)?)
    }

    /// The unit the change to `source` is in, its new statement (placed
    /// where the old one is) and its text.
    fn placed_change<'s>(
        &self,
        source: &'s str,
        options: &Options,
    ) -> Result<(usize, Box<Ast>, &'s str), Why> {
        require(same_options(&self.options, options), "the options changed")?;
        let (i, content) = self.changed_unit(source)?;
        require(
            !content.contains("setresp") && !self.unit_text(i).contains("setresp"),
            "a function names `setresp`",
        )?;
        let slot = self.layout.slots[i];
        require(content.len() <= slot.room, "the function outgrew its room")?;
        // The new statement, parsed alone, placed where the old one was.
        let line = self.padded[..slot.padded].matches('\n').count() + 1;
        let parsed = parse::parse(content)
            .ok()
            .because("the function does not parse alone")?;
        let ast = Box::new(placed(parsed, slot.padded, line).because("cannot place the function")?);
        let new_stmt = only_stmt(&ast).because("not one statement")?;
        // The statement ends the unit: only spaces after its `end`.
        let end = full_moon::node::Node::end_position(new_stmt)
            .because("no end")?
            .bytes();
        let after = end
            .checked_sub(slot.padded)
            .and_then(|end| content.get(end..))
            .because("no end")?;
        require(
            same_head(self.stmt(i), new_stmt),
            "another kind, name or parameters",
        )?;
        require(
            after.chars().all(|c| c == ' ' || c == '\t'),
            "something follows the function on its last line",
        )?;
        Ok((i, ast, content))
    }

    /// The unit the change from the session's text to `source` is in, and
    /// the unit's new text (up to its last line break).
    fn changed_unit<'s>(&self, source: &'s str) -> Result<(usize, &'s str), Why> {
        let old = self.text.as_bytes();
        let new = source.as_bytes();
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let room = old.len().min(new.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        require(
            prefix != old.len() || prefix != new.len(),
            "the text did not change",
        )?;
        let old_end = old.len() - suffix;
        let i = self
            .layout
            .slots
            .partition_point(|s| s.text <= prefix)
            .checked_sub(1)
            .because("the change is not in a function")?;
        let slot = self.layout.slots[i];
        require(
            old_end <= slot.text + slot.len,
            "the change is not in a function",
        )?;
        let end = (slot.text + slot.len + new.len())
            .checked_sub(old.len())
            .because("the change is not in a function")?;
        let content = source
            .get(slot.text..end)
            .because("the change is not in a function")?;
        // The unit still ends its line.
        require(
            line_break_at(source, end) && !content.ends_with('\r'),
            "the function no longer ends its line",
        )?;
        Ok((i, content))
    }

    /// Unit `i`'s text.
    fn unit_text(&self, i: usize) -> &str {
        let slot = self.layout.slots[i];
        &self.text[slot.text..slot.text + slot.len]
    }

    /// Replaces unit `i`'s statement with `ast`'s (the text `content`);
    /// the script is then `source`.
    fn replace(
        mut self: Box<Self>,
        i: usize,
        source: &str,
        content: &str,
        ast: Box<Ast>,
    ) -> Result<(Vec<Diagnostic>, Values, Box<Inner>), Why> {
        let slot = self.layout.slots[i];
        let range = (slot.padded, slot.padded + slot.room);
        // The old statement: in the base, or in the tree that replaced it
        // (kept until its facts are forgotten).
        let old_overlay = self.units[i].overlay.take();
        let old_stmt = match &old_overlay {
            Some(ast) => only_stmt(ast),
            None => self.base.nodes().stmts().nth(self.units[i].index),
        }
        .because("no statement")?;
        let new_stmt = only_stmt(&ast).because("no statement")?;
        let own = self.units[i].own;
        let old_unit =
            Unit::of(old_stmt, own, self.units[i].inner.clone()).because("not a function")?;
        let old_body = std::ptr::from_ref(old_unit.body) as usize;
        // The old statement, checked against what the script found.
        let facts = self.facts.take().because("no facts")?;
        let mut types = Types::restore(facts, &self.padded, &self.model);
        require(
            types.incremental(),
            "the script's inference gave up somewhere",
        )?;
        require(
            types.closed(&old_unit),
            "the function names a local of the main chunk",
        )?;
        let contributions = types.contributions(&old_unit);
        require(
            !types.reaches_out(&old_unit, &contributions),
            "the function assigns outside itself",
        )?;
        let had_params = types.has_params();
        let params = types.params_of(&old_unit);
        let walks = types
            .walk_unit(&old_unit, old_body)
            .because("the function cannot be walked alone")?;
        let old_face = types.interface(&old_unit, &contributions, &walks);
        drop(walks);
        drop(contributions);
        let old_checks = self.check_unit(&types, old_stmt, range);
        require(
            self.found_as_before(&old_checks, range),
            "the function's findings depend on more than itself",
        )?;
        let globals_before: BTreeSet<String> = globals_assigned(&self.model)
            .into_iter()
            .map(str::to_string)
            .collect();
        let old_nodes = UnitNodes::of(old_stmt);
        let old_offsets = token_starts(old_stmt);
        let old_bodies = bodies(old_stmt);
        let outer = self.outer_scope(i);
        let facts = types.save();
        // The new statement's names, and sites.
        let mut padded = String::with_capacity(self.padded.len());
        padded.push_str(&self.padded[..slot.padded]);
        padded.push_str(content);
        padded.extend(std::iter::repeat_n(' ', slot.room - content.len()));
        padded.push_str(&self.padded[slot.padded + slot.room..]);
        self.padded = padded;
        let inner = self
            .model
            .replace_unit(new_stmt, &old_offsets, range, outer, own);
        self.units[i].inner = inner.clone();
        let order = self.order();
        self.model.set_order(order);
        let tree = Tree {
            source: &self.padded,
            ast: &self.base,
            model: &self.model,
        };
        let new_calls = redis_calls_in(&tree, new_stmt);
        let at = self
            .calls
            .partition_point(|c| c.span.start.offset < range.0);
        self.calls
            .retain(|c| !(range.0 <= c.span.start.offset && c.span.start.offset < range.1));
        self.calls.splice(at..at, new_calls.iter().cloned());
        // The new statement's facts.
        let mut types = Types::restore(facts, &self.padded, &self.model);
        require(
            types.replace_calls(range, &new_calls, &self.calls, &self.base),
            "the reply protocol or the keys seeded changed",
        )?;
        let new_unit = Unit::of(new_stmt, own, inner).because("not a function")?;
        require(
            types.closed(&new_unit),
            "the function names a local of the main chunk",
        )?;
        let contributions = types.contributions(&new_unit);
        require(
            !types.reaches_out(&new_unit, &contributions),
            "the function assigns outside itself",
        )?;
        let uses = types.outer_uses(&new_unit, &contributions);
        types.forget(&old_unit, &old_nodes, range);
        require(
            types.learn(&new_unit, contributions, params),
            "the function's locals do not settle",
        )?;
        let first = types
            .walk_first(&new_unit, old_body)
            .because("the function cannot be walked alone")?;
        types.inner_params(&new_unit, &first);
        require(
            types.has_params() == had_params,
            "functions' parameters are now known, or no longer",
        )?;
        let walks = types
            .walk_second(&new_unit, old_body, first)
            .because("the function cannot be walked alone")?;
        let new_face = types.face(&new_unit, uses, &walks);
        require(
            old_face.same(&new_face),
            "what the function gives the rest of the script changed",
        )?;
        require(
            types.respend(&old_face, &new_face),
            "the script's walks would give up",
        )?;
        types.take_walks(&new_unit, &old_bodies, walks);
        let new_checks = self.check_unit(&types, new_stmt, range);
        require(
            globals_assigned(&self.model)
                .into_iter()
                .eq(globals_before.iter().map(String::as_str)),
            "the globals the script assigns changed",
        )?;
        require(
            recount(&mut self.inputs, &old_checks.inputs, &new_checks.inputs),
            "the inputs the script reads changed",
        )?;
        require(
            recount(&mut self.tested, &old_checks.tests, &new_checks.tests),
            "the library members the script tests changed",
        )?;
        // Another line count moves the lines a `return_shape` message names.
        require(
            content.matches('\n').count() == self.unit_text(i).matches('\n').count()
                || !self
                    .outputs
                    .iter()
                    .any(|(lint, found)| *lint == Lint::ReturnShape && !found.is_empty()),
            "lines moved that a finding names",
        )?;
        // Names of locals elsewhere are suggested for unknown globals.
        require(
            old_checks.names == new_checks.names
                || !self.outputs.iter().any(|(lint, found)| {
                    *lint == Lint::UndefinedGlobal
                        && found
                            .iter()
                            .any(|d| d.primary_span().is_some_and(|s| !within(s, range)))
                }),
            "the names of locals changed, which unknown globals are matched with",
        )?;
        let names = crate::hover::sorted(crate::hover::names_in(&types, new_stmt));
        self.facts = Some(types.save());
        // Commit: the findings, the values, the layout, the text.
        let Checks {
            outputs,
            candidates,
            ..
        } = new_checks;
        let mut outputs = outputs.into_iter().peekable();
        for (lint, found) in &mut self.outputs {
            let Some(new) = outputs.next_if(|(checked, _)| checked == lint) else {
                // A lint that keeps its findings.
                continue;
            };
            found.retain(|d| d.primary_span().is_none_or(|s| !within(s, range)));
            found.extend(new.1);
        }
        replace_in(&mut self.candidates.operands, range, candidates.operands);
        replace_in(&mut self.candidates.methods, range, candidates.methods);
        self.parts[2 * i + 1] = Arc::from(names);
        let delta = content.len() as isize - slot.len as isize;
        let mut layout = (*self.layout).clone();
        layout.slots[i].len = content.len();
        for later in &mut layout.slots[i + 1..] {
            later.text = (later.text as isize + delta) as usize;
        }
        self.layout = Arc::new(layout);
        self.units[i].overlay = Some(ast);
        drop(old_overlay);
        self.text = source.to_string();
        self.anew = None;
        let diagnostics = self.diagnostics();
        let values = Values::of_parts(source, self.parts.clone(), self.layout.clone());
        Ok((diagnostics, values, self))
    }

    /// The diagnostics of the script as it is, in its text.
    fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = Vec::new();
        for (lint, found) in &self.outputs {
            if *lint == Lint::MaybeFalse {
                all.extend(self.candidates.dedup());
            } else {
                all.extend(found.iter().cloned());
            }
        }
        sort(&mut all);
        self.layout.diagnostics(&self.text, &all)
    }
}
