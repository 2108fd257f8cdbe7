//! The server's state and its handling of each message, independent of the
//! transport: [`Server::handle`] takes one message and appends what to send;
//! [`Server::publish`] appends the diagnostics of the documents changed
//! since it was last called. The analysis behind them may run elsewhere:
//! [`Server::next_job`] gives a document's text and settings, and
//! [`Server::finish`] takes the result, dropping it when the document
//! changed meanwhile; [`Server::take_values`] takes the inferred values
//! of the same job, for hovers.
//!
//! A document's analysis is made once per change: diagnostics, hover,
//! completion and code actions reuse it (see [`crate::document`]). A job
//! carries the analyzer's session of the document's last analysis, and
//! [`Server::take_values`] keeps the new one: a change inside one
//! function is analyzed in that function only.
//!
//! Lifecycle, as the protocol says: before `initialize`, a request gets
//! `ServerNotInitialized` and a notification is dropped; a second
//! `initialize` is an invalid request; after `shutdown`, requests are
//! invalid; `exit` ends the server, with status 0 after `shutdown` and 1
//! without. An unknown request gets `MethodNotFound`, a request whose
//! parameters do not fit its method `InvalidParams`; unknown notifications
//! and responses are ignored. A request about a document that is not open
//! gets a null result.
//!
//! When the client can watch files for the server, it is asked (after
//! `initialized`) to tell of changes to Rust sources and `Cargo.toml`s;
//! each such change has every open script's crate read again, as a save
//! of the script does.

use crate::actions;
use crate::completion;
use crate::diagnostics;
use crate::document::Document;
use crate::hover;
use crate::lines::Encoding;
use crate::settings::Settings;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Initialized, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, HoverRequest, RegisterCapability, Request as _,
};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOptions, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CompletionItem, CompletionOptions, CompletionParams,
    CompletionResponse, CompletionTextEdit, DidChangeWatchedFilesRegistrationOptions,
    FileSystemWatcher, GlobPattern, Hover, HoverContents, HoverParams, HoverProviderCapability,
    InitializeParams, InitializeResult, MarkupContent, MarkupKind, PublishDiagnosticsParams,
    Registration, RegistrationParams, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, TextEdit, Uri, WorkspaceEdit,
};
use redlua_analyzer::incremental::Session;
use serde::de::DeserializeOwned;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// What the transport does after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next message.
    Continue,
    /// Stop, with this exit status.
    Exit(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// The server: open documents and where the session is.
#[derive(Debug)]
pub struct Server {
    phase: Phase,
    encoding: Encoding,
    documents: HashMap<String, (Uri, Document)>,
    /// Documents whose diagnostics are to be published.
    changed: BTreeSet<String>,
    /// The client watches files for the server when asked to.
    watch: bool,
    /// The client takes completion snippets.
    snippets: bool,
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

/// A request's failure: its code and message.
type Failure = (ErrorCode, String);

impl Server {
    /// A server waiting for `initialize`.
    pub fn new() -> Server {
        Server {
            phase: Phase::Uninitialized,
            encoding: Encoding::Utf16,
            documents: HashMap::new(),
            changed: BTreeSet::new(),
            watch: false,
            snippets: false,
        }
    }

    /// Handles one message, appending the replies to `out`.
    pub fn handle(&mut self, message: Message, out: &mut Vec<Message>) -> Flow {
        match message {
            Message::Request(request) => {
                out.push(Message::Response(self.request(request)));
                Flow::Continue
            }
            Message::Notification(notification) => self.notification(notification, out),
            Message::Response(_) => Flow::Continue,
        }
    }

    /// Appends a `publishDiagnostics` for each document changed, opened or
    /// closed since the last call, analyzing them here.
    pub fn publish(&mut self, out: &mut Vec<Message>) {
        while let Some(job) = self.next_job(out) {
            let (analyzed, valued) = job.run();
            self.finish(analyzed, out);
            self.take_values(valued);
        }
    }

    /// The next document to analyze, off the server's thread if the
    /// caller likes: [`Job::run`] it, and give the result to
    /// [`Server::finish`]. The documents closed meanwhile get their
    /// diagnostics cleared (appended to `out`).
    pub fn next_job(&mut self, out: &mut Vec<Message>) -> Option<Job> {
        while let Some(key) = self.changed.pop_first() {
            match self.documents.get_mut(&key) {
                Some((_, document)) => {
                    return Some(Job {
                        key,
                        generation: document.generation(),
                        version: document.version(),
                        text: document.text().to_string(),
                        settings: document.settings().clone(),
                        session: document.take_session(),
                    });
                }
                None => {
                    if let Ok(uri) = key.parse::<Uri>() {
                        out.push(publication(PublishDiagnosticsParams::new(
                            uri,
                            Vec::new(),
                            None,
                        )));
                    }
                }
            }
        }
        None
    }

    /// Takes a [`Job`]'s result: publishes the diagnostics (appended to
    /// `out`) unless the document changed or closed since, in which case
    /// its next job is already due.
    pub fn finish(&mut self, analyzed: Analyzed, out: &mut Vec<Message>) {
        let Some((uri, document)) = self.documents.get_mut(&analyzed.key) else {
            return;
        };
        if !document.accept(analyzed.generation, analyzed.findings.clone()) {
            return;
        }
        let diagnostics = diagnostics::to_protocol(
            uri,
            document.text(),
            document.index(),
            document.settings(),
            &analyzed.findings,
        );
        out.push(publication(PublishDiagnosticsParams::new(
            uri.clone(),
            diagnostics,
            Some(document.version()),
        )));
    }

    /// Takes a [`Job`]'s inferred values ([`Job::values`]), kept for
    /// hovers unless the document changed or closed since, and the
    /// analyzer's session for the document's next analysis.
    pub fn take_values(&mut self, valued: Valued) {
        if let Some((_, document)) = self.documents.get_mut(&valued.key) {
            if let Some(values) = valued.values {
                document.accept_values(valued.generation, values);
            }
            document.keep_session(valued.session);
        }
    }

    /// Whether the last analysis of the document `uri` analyzed the
    /// changed function only, or why it analyzed the whole script (for
    /// tests and logs).
    #[doc(hidden)]
    pub fn reused(&self, uri: &str) -> Result<(), &'static str> {
        match self.documents.get(uri) {
            Some((_, document)) => document.reused(),
            None => Err("no such document"),
        }
    }

    /// Whether a document changed, opened or closed since its last job.
    pub fn has_pending(&self) -> bool {
        !self.changed.is_empty()
    }

    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match (self.phase, request.method.as_str()) {
            (Phase::Uninitialized, "initialize") => self.initialize(request),
            (Phase::Uninitialized, _) => Err((
                ErrorCode::ServerNotInitialized,
                "the server is not initialized: send `initialize` first".into(),
            )),
            (_, "initialize") => Err((
                ErrorCode::InvalidRequest,
                "the server is already initialized".into(),
            )),
            (Phase::ShutDown, method) => Err((
                ErrorCode::InvalidRequest,
                format!("`{method}` after `shutdown`: only `exit` is expected"),
            )),
            (Phase::Running, "shutdown") => {
                self.phase = Phase::ShutDown;
                Ok(serde_json::Value::Null)
            }
            (Phase::Running, HoverRequest::METHOD) => {
                params(request).and_then(|p| to_value(self.hover(p)))
            }
            (Phase::Running, Completion::METHOD) => {
                params(request).and_then(|p| to_value(self.completion(p)))
            }
            (Phase::Running, CodeActionRequest::METHOD) => {
                params(request).and_then(|p| to_value(self.code_actions(p)))
            }
            (Phase::Running, method) => Err((
                ErrorCode::MethodNotFound,
                format!("unknown method `{method}`"),
            )),
        };
        match result {
            Ok(value) => Response {
                id,
                result: Some(value),
                error: None,
            },
            Err((code, message)) => Response::new_err(id, code as i32, message),
        }
    }

    fn notification(&mut self, notification: Notification, out: &mut Vec<Message>) -> Flow {
        if notification.method == "exit" {
            return Flow::Exit(if self.phase == Phase::ShutDown { 0 } else { 1 });
        }
        if self.phase != Phase::Running {
            return Flow::Continue;
        }
        let method = notification.method.clone();
        // A notification that does not fit its method is dropped: there is
        // no one to answer.
        match method.as_str() {
            Initialized::METHOD if self.watch => out.push(watch_request()),
            DidChangeWatchedFiles::METHOD => {
                // A Rust source or a `Cargo.toml` changed: every document's
                // crate is read again.
                for (key, (_, document)) in &mut self.documents {
                    document.saved();
                    self.changed.insert(key.clone());
                }
            }
            DidOpenTextDocument::METHOD => {
                if let Ok(p) = notification.extract::<lsp_types::DidOpenTextDocumentParams>(&method)
                {
                    let uri = p.text_document.uri;
                    let key = uri.as_str().to_string();
                    let document = Document::open(
                        &key,
                        p.text_document.text,
                        p.text_document.version,
                        self.encoding,
                    );
                    self.documents.insert(key.clone(), (uri, document));
                    self.changed.insert(key);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<lsp_types::DidChangeTextDocumentParams>(&method)
                {
                    let key = p.text_document.uri.as_str().to_string();
                    if let Some((_, document)) = self.documents.get_mut(&key) {
                        document.change(p.text_document.version, p.content_changes);
                        self.changed.insert(key);
                    }
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(p) = notification.extract::<lsp_types::DidSaveTextDocumentParams>(&method)
                {
                    let key = p.text_document.uri.as_str().to_string();
                    if let Some((_, document)) = self.documents.get_mut(&key) {
                        document.saved();
                        self.changed.insert(key);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<lsp_types::DidCloseTextDocumentParams>(&method)
                {
                    let key = p.text_document.uri.as_str().to_string();
                    if self.documents.remove(&key).is_some() {
                        self.changed.insert(key);
                    }
                }
            }
            _ => {}
        }
        Flow::Continue
    }

    fn initialize(&mut self, request: Request) -> Result<serde_json::Value, Failure> {
        let p: InitializeParams = params(request)?;
        let offered = p
            .capabilities
            .general
            .and_then(|general| general.position_encodings)
            .unwrap_or_default();
        if offered.contains(&Encoding::Utf8.kind()) {
            self.encoding = Encoding::Utf8;
        }
        self.snippets = p
            .capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false);
        self.watch = p
            .capabilities
            .workspace
            .and_then(|w| w.did_change_watched_files)
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        self.phase = Phase::Running;
        let capabilities = ServerCapabilities {
            position_encoding: Some(self.encoding.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(false),
                    })),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some([".", ":", "'", "\"", "["].map(String::from).to_vec()),
                ..CompletionOptions::default()
            }),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                ..CodeActionOptions::default()
            })),
            ..ServerCapabilities::default()
        };
        to_value(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: env!("CARGO_PKG_NAME").to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
        })
    }

    fn hover(&mut self, p: HoverParams) -> Option<Hover> {
        let uri = p.text_document_position_params.text_document.uri;
        let (_, document) = self.documents.get_mut(uri.as_str())?;
        let offset = document
            .index()
            .offset(document.text(), p.text_document_position_params.position);
        let target = document.settings().options.target;
        let found = hover::at(document.text(), offset, target);
        let (markdown, (start, end)) = match found {
            Some(found) => found,
            None => {
                let values = document.values();
                hover::local_at(document.text(), offset, || values)?
            }
        };
        let (text, index) = (document.text(), document.index());
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(index.range(text, start, end)),
        })
    }

    fn completion(&self, p: CompletionParams) -> Option<CompletionResponse> {
        let uri = p.text_document_position.text_document.uri;
        let (_, document) = self.documents.get(uri.as_str())?;
        let text = document.text();
        let index = document.index();
        let offset = index.offset(text, p.text_document_position.position);
        let settings = document.settings();
        let target = settings.options.target;
        let items: Vec<CompletionItem> =
            completion::at(text, offset, target, &settings.header, self.snippets)
                .into_iter()
                .map(|(mut item, replace)| {
                    if let Some(replace) = replace {
                        item.text_edit = Some(CompletionTextEdit::Edit(TextEdit::new(
                            index.range(text, replace.range.0, replace.range.1),
                            replace.text,
                        )));
                    }
                    item
                })
                .collect();
        Some(CompletionResponse::Array(items))
    }

    fn code_actions(&mut self, p: CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let uri = p.text_document.uri;
        let (_, document) = self.documents.get_mut(uri.as_str())?;
        let findings = document.findings().to_vec();
        let text = document.text();
        let index = document.index();
        let from = index.offset(text, p.range.start);
        let to = index.offset(text, p.range.end).max(from);
        let mut out = Vec::new();
        for finding in &findings {
            let Some(span) = finding.diagnostic.primary_span() else {
                continue;
            };
            if span.end.offset < from || span.start.offset > to {
                continue;
            }
            let protocol = diagnostics::to_protocol(
                &uri,
                text,
                index,
                document.settings(),
                std::slice::from_ref(finding),
            )
            .pop();
            let allow = actions::allow_in_header(text, &finding.diagnostic, document.settings());
            let fixes = actions::fixes(text, &finding.diagnostic);
            for fix in fixes.into_iter().chain(allow) {
                let edit = TextEdit::new(index.range(text, fix.range.0, fix.range.1), fix.text);
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: protocol.clone().map(|d| vec![d]),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(fix.preferred),
                    ..CodeAction::default()
                }));
            }
            if let Some((title, place, text)) =
                actions::allow_in_attribute(finding, document.settings())
                && let Some(file) = crate::settings::file_uri(&place.file)
                && let (Ok(line), Ok(column)) = (
                    u32::try_from(place.line.saturating_sub(1)),
                    u32::try_from(place.column),
                )
            {
                let at = lsp_types::Position::new(line, column);
                let edit = TextEdit::new(lsp_types::Range::new(at, at), text);
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: protocol.clone().map(|d| vec![d]),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(file, vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(false),
                    ..CodeAction::default()
                }));
            }
        }
        Some(out)
    }
}

/// A document to analyze: a copy of its text and settings, the
/// generation they are of, and the analyzer's session of an earlier
/// version, if kept.
#[derive(Debug)]
pub struct Job {
    key: String,
    generation: u64,
    version: i32,
    text: String,
    settings: Settings,
    session: Option<Session>,
}

impl Job {
    /// Analyzes the document (the slow part: it may run on any thread):
    /// its findings, then the analyzer's session (and the values of the
    /// locals for hovers when they come with it), for [`Server::finish`]
    /// and [`Server::take_values`].
    pub fn run(self) -> (Analyzed, Valued) {
        let mut analyzed = None;
        let valued = self.run_then_values(|found| {
            analyzed = Some(found);
            false
        });
        let analyzed =
            analyzed.unwrap_or_else(|| Job::failed(valued.key.clone(), valued.generation));
        (analyzed, valued)
    }

    /// Infers the values of the document's locals, for hovers (as slow
    /// as [`Job::run`]; for [`Server::take_values`]).
    pub fn values(&self) -> Valued {
        Valued {
            values: Some(Arc::new(diagnostics::values(&self.text, &self.settings))),
            key: self.key.clone(),
            generation: self.generation,
            session: None,
        }
    }

    /// [`Job::run`], handing the findings to `deliver` as soon as they
    /// are made: it says whether the values are still wanted (without
    /// them, the result holds the session only). `deliver` is called once,
    /// even when the analysis fails (with the result it gives then).
    pub fn run_then_values(self, deliver: impl FnOnce(Analyzed) -> bool + Send) -> Valued {
        let Job {
            key,
            generation,
            text,
            settings,
            session,
            ..
        } = self;
        let (values, session) =
            diagnostics::findings_then_values(session, &text, &settings, |findings| {
                deliver(Analyzed {
                    findings,
                    key: key.clone(),
                    generation,
                })
            });
        Valued {
            values: values.map(Arc::new),
            key,
            generation,
            session,
        }
    }

    /// The document's URI and the client's version of the text.
    pub fn document(&self) -> (&str, i32) {
        (&self.key, self.version)
    }

    /// The same job's result when its analysis failed: no findings.
    pub fn failed(key: String, generation: u64) -> Analyzed {
        Analyzed {
            key,
            generation,
            findings: Vec::new(),
        }
    }

    /// The document's key and generation, to report a failure with.
    pub fn id(&self) -> (String, u64) {
        (self.key.clone(), self.generation)
    }
}

/// A [`Job`]'s result.
#[derive(Debug)]
pub struct Analyzed {
    key: String,
    generation: u64,
    findings: Vec<diagnostics::Finding>,
}

/// A [`Job`]'s inferred values ([`Job::values`]), when still wanted, and
/// the analyzer's session of the text analyzed.
#[derive(Debug)]
pub struct Valued {
    key: String,
    generation: u64,
    values: Option<Arc<Option<redlua_analyzer::hover::Values>>>,
    session: Option<Session>,
}

impl Valued {
    /// The same job's when its analysis failed: nothing.
    pub fn failed(key: String, generation: u64) -> Valued {
        Valued {
            key,
            generation,
            values: None,
            session: None,
        }
    }

    /// Whether the analyzer reused the analysis of an earlier version
    /// (see [`redlua_analyzer::incremental`]); why not, when it did not.
    pub fn reused(&self) -> Result<(), &'static str> {
        match &self.session {
            Some(session) => session.anew().map_or(Ok(()), Err),
            None => Err("no session"),
        }
    }
}

/// The files whose changes change what scripts are checked against.
const WATCHED: &[&str] = &["**/*.rs", "**/Cargo.toml"];

/// Asks the client to tell of changes to the [`WATCHED`] files.
fn watch_request() -> Message {
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: WATCHED
            .iter()
            .map(|glob| FileSystemWatcher {
                glob_pattern: GlobPattern::String(glob.to_string()),
                kind: None,
            })
            .collect(),
    };
    let params = RegistrationParams {
        registrations: vec![Registration {
            id: WATCH_ID.to_string(),
            method: DidChangeWatchedFiles::METHOD.to_string(),
            register_options: serde_json::to_value(options).ok(),
        }],
    };
    Message::Request(Request::new(
        RequestId::from(WATCH_ID.to_string()),
        RegisterCapability::METHOD.to_string(),
        params,
    ))
}

/// The id of the file watch registration, and of its request.
const WATCH_ID: &str = "redlua-lsp/watch";

fn publication(params: PublishDiagnosticsParams) -> Message {
    Message::Notification(Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        params,
    ))
}

/// A request's parameters, or `InvalidParams`.
fn params<P: DeserializeOwned>(request: Request) -> Result<P, Failure> {
    serde_json::from_value(request.params).map_err(|error| {
        (
            ErrorCode::InvalidParams,
            format!("invalid parameters for `{}`: {error}", request.method),
        )
    })
}

fn to_value(value: impl serde::Serialize) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value).map_err(|error| (ErrorCode::InternalError, error.to_string()))
}
