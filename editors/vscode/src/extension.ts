import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions } from "vscode-languageclient/node";
import {
  CLIENT_ID,
  LANGUAGE_ID,
  RESTART_COMMAND,
  SETTINGS,
  cannotStartMessage,
  findExecutable,
  serverCommand,
} from "./server";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
// start, stop and restart run one at a time, in the order asked for
let queue: Promise<void> = Promise.resolve();

function serialized(job: () => Promise<void>): Promise<void> {
  const next = queue.then(job);
  queue = next.catch(() => undefined);
  return next;
}

export function activate(context: vscode.ExtensionContext): Promise<void> {
  // one channel for every client, so that a restart does not add another
  output = vscode.window.createOutputChannel("cudalint");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand(RESTART_COMMAND, () => serialized(restart)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SETTINGS.path) || e.affectsConfiguration(SETTINGS.extraArgs)) {
        void serialized(restart);
      }
    }),
  );
  return serialized(start);
}

export function deactivate(): Promise<void> {
  return serialized(stop);
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration();
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file")?.uri.fsPath;
  const server = serverCommand(
    { path: config.get(SETTINGS.path), extraArgs: config.get(SETTINGS.extraArgs) },
    process.env,
    folder,
  );
  const executable = findExecutable(server.command, server.options.env);
  if (executable === undefined) {
    return report(cannotStartMessage(server.command));
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: LANGUAGE_ID },
      { scheme: "untitled", language: LANGUAGE_ID },
    ],
    outputChannel: output,
  };
  // No `transport`: stdio is the default, and TransportKind.stdio would append `--stdio`,
  // which `cudalint lsp` rejects.
  const c = new LanguageClient(CLIENT_ID, "cudalint", { ...server, command: executable }, clientOptions);
  try {
    await c.start();
    client = c;
  } catch (err) {
    await c.dispose().catch(() => undefined);
    return report(cannotStartMessage(executable, err instanceof Error ? err.message : String(err)));
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  // a client whose server died refuses to stop; it is gone either way
  await c?.stop().catch(() => undefined);
}

// Not awaited by start: the notification may stay up for as long as the user leaves it.
function report(message: string): void {
  const open = "Open Settings";
  void vscode.window.showErrorMessage(message, open).then((choice) => {
    if (choice === open) {
      void vscode.commands.executeCommand("workbench.action.openSettings", SETTINGS.path);
    }
  });
}
