//! `cudalint lsp`: diagnostics while typing, quick fixes and the warp's picture on hover.
//! A thin frontend: every answer comes from `cudalint_rules::check` on the open document,
//! with the workspace's cudalint.toml and the headers the document includes.
//!
//! Built on tower-lsp-server, the maintained community fork of tower-lsp (unmaintained since
//! 2023): the same programming model, current LSP types.

mod convert;
mod wire;

use cudalint_rules::incremental::{Incremental, Timings};
use cudalint_rules::{Applicability, FileReport, Input, Settings};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Mutex;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{LanguageServer, LspService, Server};

struct Doc {
    text: String,
    version: i32,
    /// The previous check's trees and kernel analyses: the next check redoes only what the
    /// edits touched. One check of a document runs at a time, so the lock is not contended.
    checker: Arc<std::sync::Mutex<Incremental>>,
    /// The report of the last check and the version it is of: hover and code actions on an
    /// unchanged document answer from it.
    last: Option<(i32, Arc<FileReport>)>,
}

impl Doc {
    fn new(text: String, version: i32) -> Doc {
        Doc {
            text,
            version,
            checker: Arc::default(),
            last: None,
        }
    }
}

#[derive(Default)]
struct State {
    docs: HashMap<Uri, Doc>,
    /// Documents with a check in flight: a change to one of them is picked up when it ends.
    running: std::collections::HashSet<Uri>,
}

struct Backend {
    state: Arc<Mutex<State>>,
    /// The editor's side of stdio, which diagnostics are written to directly (`publish_body`).
    /// Taken while `state` is held, so that publications leave in the order their versions
    /// were decided: a check's never after the empty one of the document's close.
    editor: wire::Out<tokio::io::Stdout>,
    roots: Roots,
    /// Checks running at once, one per core: more would only wait in the analysis pool
    /// (where a worker blocked in a join picks up another document's check, so that the half
    /// done work of many piles up on its stack), and one that waits here reads the document's
    /// text when its turn comes, so it checks the newest version.
    checks: Arc<tokio::sync::Semaphore>,
}

/// A `textDocument/publishDiagnostics` notification, serialized. The backend writes these
/// itself: tower-lsp-server's `Client` first turns the params into a `serde_json::Value`, and
/// building, serializing and freeing that tree for a report of 500 findings (580 KB) took 3-4
/// ms of a keystroke's 10; serializing the params straight to bytes takes under one.
fn publish_body(uri: Uri, diagnostics: Vec<Diagnostic>, version: Option<i32>) -> Option<Vec<u8>> {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let mut body =
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"#.to_vec();
    serde_json::to_writer(&mut body, &params).ok()?;
    body.push(b'}');
    Some(body)
}

/// The workspace folders the editor opened, from `initialize`: a document's compile commands
/// are looked for above it, then in the folder that holds it (or the first), as the CLI
/// looks in the current folder.
type Roots = Arc<std::sync::OnceLock<Vec<std::path::PathBuf>>>;

/// Checks one document as it is in the editor, reusing what `checker` kept from the last
/// check of it: the report of the document itself, and where the check's time went.
fn analyse(
    uri: &Uri,
    text: &str,
    checker: &std::sync::Mutex<Incremental>,
    roots: &[std::path::PathBuf],
) -> (FileReport, Timings) {
    let path = uri
        .to_file_path()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| uri.as_str().to_string());
    let root = roots
        .iter()
        .find(|r| std::path::Path::new(&path).starts_with(r))
        .or(roots.first())
        .cloned()
        .or_else(|| std::env::current_dir().ok());
    let compile = cudalint_rules::compile_commands::Source::Discover { fallback: root };
    let mut inputs = vec![Input::new(path, text)];
    // a cudalint.toml or database that does not load is reported by the CLI; here the
    // defaults apply
    let _ = cudalint_rules::workspace::prepare(
        &mut inputs,
        None,
        &[],
        &compile,
        cudalint_rules::workspace::Headers::Context,
    );
    // a check that panicked left the cache half written: start it afresh
    let mut checker = checker.lock().unwrap_or_else(|poisoned| {
        let mut c = poisoned.into_inner();
        *c = Incremental::default();
        c
    });
    let reports = checker.check(&inputs, &Settings::default());
    (reports.into_iter().next().unwrap_or_default(), checker.last)
}

fn ms(d: std::time::Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn timings_text(t: &Timings) -> String {
    format!(
        "parse {} ms, analyse {} ms ({} kernels analysed, {} reused), report {} ms",
        ms(t.parse),
        ms(t.analyse),
        t.kernels.analysed,
        t.kernels.reused,
        ms(t.report)
    )
}

/// `CUDALINT_LSP_TIMING` set: every check says on stderr where its time went.
fn timing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CUDALINT_LSP_TIMING").is_some())
}

impl Backend {
    /// Checks the document now, unless a check of it is in flight: that one re-runs on the
    /// latest text when it ends. A burst of edits costs at most two checks, not one per edit,
    /// and a single edit is checked at once (no fixed delay).
    async fn request_check(&self, uri: Uri) {
        {
            let mut st = self.state.lock().await;
            if !st.docs.contains_key(&uri) || !st.running.insert(uri.clone()) {
                return;
            }
        }
        let state = self.state.clone();
        let editor = self.editor.clone();
        let roots = self.roots.clone();
        let checks = self.checks.clone();
        tokio::spawn(async move {
            loop {
                // the semaphore is never closed
                let Ok(permit) = checks.acquire().await else {
                    state.lock().await.running.remove(&uri);
                    return;
                };
                let current = state
                    .lock()
                    .await
                    .docs
                    .get(&uri)
                    .map(|d| (d.text.clone(), d.version, d.checker.clone()));
                let Some((text, version, checker)) = current else {
                    state.lock().await.running.remove(&uri);
                    return;
                };
                let started = Instant::now();
                let checked = tokio::task::spawn_blocking({
                    let uri = uri.clone();
                    let roots = roots.clone();
                    move || {
                        let roots = roots.get().map_or(&[][..], Vec::as_slice);
                        let (report, timings) = analyse(&uri, &text, &checker, roots);
                        let checked = Instant::now();
                        let diags = convert::diagnostics(&report, &uri, &text);
                        let body = publish_body(uri, diags, Some(version));
                        (Arc::new(report), body, timings, checked, text.len())
                    }
                })
                .await;
                drop(permit);
                let (report, body, timing_line) = match checked {
                    Ok((report, body, timings, checked, bytes)) => {
                        let line = timing().then(|| {
                            format!(
                                "cudalint lsp: {bytes} bytes: {} ms in all, of which {}; convert {} ms",
                                ms(checked - started),
                                timings_text(&timings),
                                ms(checked.elapsed())
                            )
                        });
                        (Some(report), body, line)
                    }
                    // the check panicked: no findings rather than stale ones
                    Err(_) => (
                        None,
                        publish_body(uri.clone(), Vec::new(), Some(version)),
                        None,
                    ),
                };
                // freed once the diagnostics are out: a report of 500 findings takes
                // milliseconds to free
                let replaced;
                let mut out = {
                    // the version test and leaving `running` happen under one lock, so an edit
                    // that arrives after it starts a new check itself
                    let mut st = state.lock().await;
                    let Some(doc) = st.docs.get_mut(&uri).filter(|d| d.version == version) else {
                        if let Some(line) = timing_line {
                            eprintln!("{line}; not published: the text changed meanwhile");
                        }
                        continue;
                    };
                    replaced = std::mem::replace(&mut doc.last, report.map(|r| (version, r)));
                    st.running.remove(&uri);
                    editor.lock().await
                };
                let publishing = Instant::now();
                if let Some(body) = body {
                    // an editor that is gone is noticed by the reader, which ends the session
                    let _ = wire::write_frame_to(&mut *out, &body).await;
                }
                drop(out);
                if let Some(line) = timing_line {
                    eprintln!("{line}; publish {} ms", ms(publishing.elapsed()));
                }
                drop(replaced);
                return;
            }
        });
    }

    /// The document's text and its report as it is now: the last check's if it is of this
    /// version, else a new check.
    async fn report_of(&self, uri: &Uri) -> Option<(String, Arc<FileReport>)> {
        let (text, version, checker, last) = {
            let st = self.state.lock().await;
            let d = st.docs.get(uri)?;
            (d.text.clone(), d.version, d.checker.clone(), d.last.clone())
        };
        if let Some((v, report)) = last {
            if v == version {
                return Some((text, report));
            }
        }
        let uri = uri.clone();
        let roots = self.roots.clone();
        tokio::task::spawn_blocking(move || {
            let roots = roots.get().map_or(&[][..], Vec::as_slice);
            let report = Arc::new(analyse(&uri, &text, &checker, roots).0);
            (text, report)
        })
        .await
        .ok()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> {
        // clients older than workspace folders send only the root
        #[allow(deprecated)]
        let uris: Vec<Uri> = match p.workspace_folders {
            Some(folders) if !folders.is_empty() => folders.into_iter().map(|f| f.uri).collect(),
            _ => p.root_uri.into_iter().collect(),
        };
        let roots = uris
            .iter()
            .filter_map(|u| u.to_file_path().map(|p| p.into_owned()))
            .collect();
        let _ = self.roots.set(roots);
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                        ..Default::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "cudalint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        let uri = p.text_document.uri;
        self.state.lock().await.docs.insert(
            uri.clone(),
            Doc::new(p.text_document.text, p.text_document.version),
        );
        self.request_check(uri).await;
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        let uri = p.text_document.uri;
        {
            let mut st = self.state.lock().await;
            let Some(doc) = st.docs.get_mut(&uri) else {
                return;
            };
            for change in p.content_changes {
                match change.range {
                    // a range past the end is clamped to it (the editor is ahead of us)
                    Some(r) => convert::apply_change(&mut doc.text, r, &change.text),
                    None => doc.text = change.text,
                }
            }
            doc.version = p.text_document.version;
        }
        self.request_check(uri).await;
    }

    async fn did_save(&self, p: DidSaveTextDocumentParams) {
        self.request_check(p.text_document.uri).await;
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        let mut out = {
            let mut st = self.state.lock().await;
            st.docs.remove(&p.text_document.uri);
            self.editor.lock().await
        };
        if let Some(body) = publish_body(p.text_document.uri, Vec::new(), None) {
            let _ = wire::write_frame_to(&mut *out, &body).await;
        }
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = p.text_document.uri;
        let Some((text, report)) = self.report_of(&uri).await else {
            return Ok(None);
        };
        let lines = convert::Lines::new(&text);
        let mut actions = Vec::new();
        for d in &report.diagnostics {
            let range = lines.range(d.at.bytes.clone());
            if range.end < p.range.start || range.start > p.range.end {
                continue;
            }
            let lsp_diag = convert::diagnostic(d, &uri, &lines);
            if let Some(fix) = d
                .fix
                .as_ref()
                .filter(|f| f.applicability == Applicability::MachineApplicable)
            {
                let edits: Vec<TextEdit> = fix
                    .edits
                    .iter()
                    .map(|e| TextEdit {
                        range: lines.range(e.at.bytes.clone()),
                        new_text: e.replacement.clone(),
                    })
                    .collect();
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp_diag.clone()]),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(uri.clone(), edits)])),
                        ..Default::default()
                    }),
                    is_preferred: Some(true),
                    ..Default::default()
                }));
            }
            // suppress on this line, with a reason to fill in
            let line_end = convert::line_end(&text, d.at.line.saturating_sub(1));
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Suppress {} on this line", d.code),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_diag]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(
                        uri.clone(),
                        vec![TextEdit {
                            range: Range::new(line_end, line_end),
                            new_text: format!(" // cudalint-ignore {}: <reason>", d.code),
                        }],
                    )])),
                    ..Default::default()
                }),
                ..Default::default()
            }));
        }
        Ok(Some(actions))
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let uri = p.text_document_position_params.text_document.uri;
        let Some((text, report)) = self.report_of(&uri).await else {
            return Ok(None);
        };
        let offset = convert::offset(&text, p.text_document_position_params.position);
        // the innermost access under the cursor
        let hit = report
            .accesses
            .iter()
            .filter(|a| a.span.start <= offset && offset <= a.span.end)
            .min_by_key(|a| a.span.end - a.span.start);
        Ok(hit.map(|a| Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: convert::warp_picture(a),
            }),
            range: Some(convert::range(&text, a.span.clone())),
        }))
    }
}

/// Serves LSP on stdin/stdout until the client exits.
pub fn serve_stdio() {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cudalint lsp: cannot start: {e}");
            return;
        }
    };
    runtime.block_on(async {
        let out = Arc::new(Mutex::new(tokio::io::stdout()));
        let (service, socket) = LspService::new(|_client| Backend {
            state: Arc::new(Mutex::new(State::default())),
            editor: out.clone(),
            roots: Roots::default(),
            checks: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            )),
        });
        // the server speaks through in-memory pipes; `wire` frames and checks what passes
        let (server_in, editor_in) = tokio::io::duplex(1 << 20);
        let (server_out, editor_out) = tokio::io::duplex(1 << 20);
        let input = tokio::spawn(wire::forward_input(
            tokio::io::stdin(),
            editor_in,
            out.clone(),
        ));
        let output = tokio::spawn(wire::forward_output(editor_out, out));
        Server::new(server_in, server_out, socket)
            .serve(service)
            .await;
        // everything the server said is out before the process ends
        let _ = output.await;
        input.abort();
    });
    // a read of stdin may still be blocked in its thread: the client is gone or done
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
}
