//! An open document: its text, what it is checked against, and the
//! analysis of its current generation.
//!
//! Invariants: `index` is always the index of `text`; `settings` are those
//! of `text` (they are read from its header on every change) and of the
//! crate as last read (on open and on save); `findings` and `values`,
//! when present, are the analyzer's on `text` and `settings` as they are
//! (every change drops them): hover, completion and code actions reuse
//! them instead of analyzing again. The analyzer's session, when kept, is
//! of the text last analyzed, whatever the text is now: the next analysis
//! starts from it (`redlua_analyzer::incremental`).

use crate::diagnostics::{self, Finding};
use crate::lines::{Encoding, LineIndex};
use crate::rust_decl::{self, Declaration};
use crate::settings::{self, CrateTarget, Settings};
use lsp_types::TextDocumentContentChangeEvent;
use redlua_analyzer::hover::Values;
use redlua_analyzer::incremental::Session;
use std::path::PathBuf;
use std::sync::Arc;

/// One open document.
#[derive(Debug)]
pub struct Document {
    text: String,
    index: LineIndex,
    encoding: Encoding,
    path: Option<PathBuf>,
    crate_target: CrateTarget,
    declarations: Vec<Declaration>,
    settings: Settings,
    findings: Option<Vec<Finding>>,
    /// The inferred values of the text's locals, for hovers (`None`
    /// inside: the text does not parse).
    values: Option<Arc<Option<Values>>>,
    /// The client's version of the text.
    version: i32,
    /// Counts the changes of the text and settings: an analysis made of an
    /// older generation is stale.
    generation: u64,
    /// The analyzer's session of the text last analyzed (not necessarily
    /// this one): the next analysis reuses what it can of it.
    session: Option<Session>,
}

impl Document {
    /// A document opened with `text`; `uri` says where its crate is.
    pub fn open(uri: &str, text: String, version: i32, encoding: Encoding) -> Document {
        let path = settings::file_path(uri);
        let crate_target = crate_target_of(path.as_ref());
        let declarations = declarations_of(path.as_ref(), &crate_target);
        let settings = settings::for_source(&text, &crate_target, &declarations);
        Document {
            index: LineIndex::new(&text, encoding),
            text,
            encoding,
            path,
            crate_target,
            declarations,
            settings,
            findings: None,
            values: None,
            version,
            generation: 0,
            session: None,
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line index of the text.
    pub fn index(&self) -> &LineIndex {
        &self.index
    }

    /// What the text is checked against.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Applies the client's changes, in order: a change without a range
    /// replaces the whole text; a range is taken as
    /// [`LineIndex::offset`] takes it (clamped), its ends in either order.
    pub fn change(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for change in changes {
            match change.range {
                None => self.text = change.text,
                Some(range) => {
                    let a = self.index.offset(&self.text, range.start);
                    let b = self.index.offset(&self.text, range.end);
                    self.text.replace_range(a.min(b)..a.max(b), &change.text);
                }
            }
            self.index = LineIndex::new(&self.text, self.encoding);
        }
        self.settings = settings::for_source(&self.text, &self.crate_target, &self.declarations);
        self.version = version;
        self.outdated();
    }

    /// The analysis is of an older text or settings.
    fn outdated(&mut self) {
        self.findings = None;
        self.values = None;
        self.generation += 1;
    }

    /// The client's version of the text.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// After a save: the crate's `Cargo.toml`, and its sources for the
    /// script's declaration, are read again.
    pub fn saved(&mut self) {
        self.crate_target = crate_target_of(self.path.as_ref());
        self.declarations = declarations_of(self.path.as_ref(), &self.crate_target);
        self.settings = settings::for_source(&self.text, &self.crate_target, &self.declarations);
        self.outdated();
    }

    /// The generation of the text and settings (see [`Document::accept`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Takes `findings`, made elsewhere of this document's `generation`;
    /// returns `false`, taking nothing, when the document changed since.
    pub fn accept(&mut self, generation: u64, findings: Vec<Finding>) -> bool {
        if generation != self.generation {
            return false;
        }
        self.findings = Some(findings);
        true
    }

    /// Takes `values`, inferred elsewhere on this document's `generation`;
    /// does nothing when the document changed since.
    pub fn accept_values(&mut self, generation: u64, values: Arc<Option<Values>>) {
        if generation == self.generation {
            self.values = Some(values);
        }
    }

    /// The analyzer's session for the next analysis, taken.
    pub fn take_session(&mut self) -> Option<Session> {
        self.session.take()
    }

    /// Keeps `session` (of any version of the text) for the next analysis.
    pub fn keep_session(&mut self, session: Option<Session>) {
        if session.is_some() {
            self.session = session;
        }
    }

    /// Whether the last analysis kept analyzed the changed function only
    /// (or why it analyzed the whole script).
    pub fn reused(&self) -> Result<(), &'static str> {
        match &self.session {
            Some(session) => session.anew().map_or(Ok(()), Err),
            None => Err("no session"),
        }
    }

    /// The analyzer's findings on the text, analyzing it if it changed.
    pub fn findings(&mut self) -> &[Finding] {
        self.findings
            .get_or_insert_with(|| diagnostics::findings(&self.text, &self.settings))
    }

    /// The inferred values of the text's locals, inferring them if it
    /// changed.
    pub fn values(&mut self) -> Arc<Option<Values>> {
        self.values
            .get_or_insert_with(|| Arc::new(diagnostics::values(&self.text, &self.settings)))
            .clone()
    }
}

/// The `#[redis_script]` and `#[redis_function]` structs of the script's
/// crate that name it.
fn declarations_of(path: Option<&PathBuf>, crate_target: &CrateTarget) -> Vec<Declaration> {
    let crate_dir = crate_target.manifest.as_ref().and_then(|m| m.parent());
    match (path, crate_dir) {
        (Some(path), Some(crate_dir)) => rust_decl::find_all(path, crate_dir),
        _ => Vec::new(),
    }
}

fn crate_target_of(path: Option<&PathBuf>) -> CrateTarget {
    match path.and_then(|p| p.parent()) {
        Some(dir) => settings::crate_target(dir),
        None => CrateTarget::default(),
    }
}
