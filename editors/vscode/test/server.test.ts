// The server command as the extension builds it, spawned and spoken to over LSP the way
// vscode-languageclient does (it is built on the same vscode-languageserver-protocol).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  Diagnostic,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { LANGUAGE_ID, SETTINGS, cannotStartMessage, findExecutable, serverCommand } from "../out/server";
import { EXTENSION_DIR, NAIVE_KERNELS, REPO_ROOT, cudalintBin, within } from "./paths";

test("serverCommand: the configured binary, `lsp`, then the extra arguments", () => {
  const env = { PATH: "/usr/bin", HOME: "/home/u" };
  assert.deepEqual(serverCommand({ path: "/opt/cudalint", extraArgs: ["--a", "b"] }, env), {
    command: "/opt/cudalint",
    args: ["lsp", "--a", "b"],
    options: { env },
  });
  assert.notEqual(serverCommand({}, env).options.env, env, "the environment is a copy");
  assert.equal(serverCommand({}, env).command, "cudalint", "the default is looked up on PATH");
  assert.equal(serverCommand({ path: "  " }, env).command, "cudalint");
  assert.equal(serverCommand({ path: 42 }, env).command, "cudalint");
  assert.equal(serverCommand({ path: "~/bin/cudalint" }, env).command, path.join("/home/u", "bin", "cudalint"));
  assert.equal(serverCommand({ path: "${workspaceFolder}/bin/cudalint" }, env, "/w").command, path.join("/w", "bin", "cudalint"));
  assert.equal(serverCommand({ path: "bin/cudalint" }, env, "/w").command, path.join("/w", "bin", "cudalint"));
  assert.deepEqual(serverCommand({ extraArgs: "--a" }, env).args, ["lsp"]);
  assert.deepEqual(serverCommand({ extraArgs: ["--a", 1, null] }, env).args, ["lsp", "--a"]);
});

test("findExecutable: a bare name on PATH, a path, or nothing", () => {
  const bin = cudalintBin();
  const [dir, name] = [path.dirname(bin), path.basename(bin)];
  assert.equal(findExecutable(name, { PATH: ["/nonexistent", dir].join(path.delimiter) }), bin);
  assert.equal(findExecutable(name, { PATH: "/nonexistent" }), undefined);
  assert.equal(findExecutable(name, {}), undefined);
  assert.equal(findExecutable(bin, {}), bin);
  assert.equal(findExecutable(NAIVE_KERNELS, {}), undefined, "not executable");
  assert.equal(findExecutable(dir, {}), undefined, "a folder");
});

test("cannotStartMessage names the binary and the setting to change", () => {
  for (const message of [
    cannotStartMessage("/opt/x/cudalint"),
    cannotStartMessage("/opt/x/cudalint", "spawn EACCES"),
  ]) {
    assert.match(message, /\/opt\/x\/cudalint/);
    assert.ok(message.includes(`"${SETTINGS.path}"`), message);
  }
  assert.match(cannotStartMessage("cudalint"), /not found on PATH/);
  assert.match(cannotStartMessage("/opt/x/cudalint", "spawn EACCES"), /spawn EACCES/);
});

test("the command from the settings serves LSP: CL2xx findings in naive_kernels.cu, then a clean exit", async () => {
  const server = serverCommand({ path: cudalintBin(), extraArgs: [] }, process.env, EXTENSION_DIR);
  const executable = findExecutable(server.command, server.options.env);
  assert.ok(executable !== undefined, `${server.command} is executable`);
  const child = spawn(executable, server.args, { ...server.options, stdio: "pipe" });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("exit", (code) => resolve(code));
    child.on("error", reject);
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  try {
    const uri = pathToFileURL(NAIVE_KERNELS).href;
    const published = new Promise<Diagnostic[]>((resolve) =>
      connection.onNotification(PublishDiagnosticsNotification.type, (p) => p.uri === uri && resolve(p.diagnostics)),
    );
    connection.listen();

    const init = await within(
      20_000,
      "initialize result",
      connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: pathToFileURL(REPO_ROOT).href,
        capabilities: {},
        workspaceFolders: null,
      }),
    );
    assert.equal(init.capabilities.hoverProvider, true, JSON.stringify(init));
    await connection.sendNotification(InitializedNotification.type, {});
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: LANGUAGE_ID, version: 1, text: fs.readFileSync(NAIVE_KERNELS, "utf8") },
    });

    const diagnostics = await within(20_000, "publishDiagnostics", published);
    assert.ok(
      diagnostics.some((d) => typeof d.code === "string" && d.code.startsWith("CL2") && d.source === "cudalint"),
      `a CL2xx finding from cudalint among ${JSON.stringify(diagnostics, null, 1)}`,
    );

    await within(10_000, "shutdown result", connection.sendRequest(ShutdownRequest.type));
    await connection.sendNotification(ExitNotification.type);
    assert.equal(await within(10_000, "exit", exited), 0, `exit code; stderr: ${stderr}`);
  } finally {
    connection.dispose();
    if (child.exitCode === null) {
      child.kill();
    }
  }
});
