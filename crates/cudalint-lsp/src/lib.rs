//! `cudalint lsp`: diagnostics while typing, quick fixes and the warp's picture on hover.
//! A thin frontend: every answer comes from `cudalint_rules::check` on the open document,
//! with the workspace's cudalint.toml and the headers the document includes.
//!
//! Built on tower-lsp-server, the maintained community fork of tower-lsp (unmaintained since
//! 2023): the same programming model, current LSP types.

mod convert;

use cudalint_rules::{Applicability, FileReport, Input, Settings};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

struct Doc {
    text: String,
    version: i32,
}

#[derive(Default)]
struct State {
    docs: HashMap<Uri, Doc>,
    /// Documents with a check in flight: a change to one of them is picked up when it ends.
    running: std::collections::HashSet<Uri>,
}

struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
}

/// Checks one document as it is in the editor.
fn analyse(uri: &Uri, text: &str) -> (Vec<Input>, Vec<FileReport>) {
    let path = uri
        .to_file_path()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| uri.as_str().to_string());
    let mut inputs = vec![Input::new(path, text)];
    cudalint_rules::workspace::add_included(&mut inputs);
    // a cudalint.toml that does not load is reported by the CLI; here the defaults apply
    let _ = cudalint_rules::workspace::attach_configs(&mut inputs, None);
    let reports = cudalint_rules::check(&inputs, &Settings::default());
    (inputs, reports)
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
        let client = self.client.clone();
        tokio::spawn(async move {
            loop {
                let current = state
                    .lock()
                    .await
                    .docs
                    .get(&uri)
                    .map(|d| (d.text.clone(), d.version));
                let Some((text, version)) = current else {
                    state.lock().await.running.remove(&uri);
                    return;
                };
                let diags = tokio::task::spawn_blocking({
                    let uri = uri.clone();
                    move || {
                        let (_, reports) = analyse(&uri, &text);
                        reports
                            .first()
                            .map(|r| convert::diagnostics(r, &uri, &text))
                            .unwrap_or_default()
                    }
                })
                .await
                .unwrap_or_default();
                {
                    // the version test and leaving `running` happen under one lock, so an edit
                    // that arrives after it starts a new check itself
                    let mut st = state.lock().await;
                    if st.docs.get(&uri).map(|d| d.version) != Some(version) {
                        continue;
                    }
                    st.running.remove(&uri);
                }
                client.publish_diagnostics(uri, diags, Some(version)).await;
                return;
            }
        });
    }

    async fn text_of(&self, uri: &Uri) -> Option<String> {
        self.state
            .lock()
            .await
            .docs
            .get(uri)
            .map(|d| d.text.clone())
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
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
            Doc {
                text: p.text_document.text,
                version: p.text_document.version,
            },
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
        self.state.lock().await.docs.remove(&p.text_document.uri);
        self.client
            .publish_diagnostics(p.text_document.uri, Vec::new(), None)
            .await;
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = p.text_document.uri;
        let Some(text) = self.text_of(&uri).await else {
            return Ok(None);
        };
        let (_, reports) = analyse(&uri, &text);
        let Some(report) = reports.first() else {
            return Ok(None);
        };
        let mut actions = Vec::new();
        for d in &report.diagnostics {
            let range = convert::range(&text, d.at.bytes.clone());
            if range.end < p.range.start || range.start > p.range.end {
                continue;
            }
            let lsp_diag = convert::diagnostic(d, &uri, &text);
            if let Some(fix) = d
                .fix
                .as_ref()
                .filter(|f| f.applicability == Applicability::MachineApplicable)
            {
                let edits: Vec<TextEdit> = fix
                    .edits
                    .iter()
                    .map(|e| TextEdit {
                        range: convert::range(&text, e.at.bytes.clone()),
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
            let line_end = convert::line_end(&text, d.at.line - 1);
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
        let Some(text) = self.text_of(&uri).await else {
            return Ok(None);
        };
        let offset = convert::offset(&text, p.text_document_position_params.position);
        let (_, reports) = analyse(&uri, &text);
        let Some(report) = reports.first() else {
            return Ok(None);
        };
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
        let (service, socket) = LspService::new(|client| Backend {
            client,
            state: Arc::new(Mutex::new(State::default())),
        });
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
            .serve(service)
            .await;
    });
}
