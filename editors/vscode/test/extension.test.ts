// out/extension.js itself, activated against stand-ins for `vscode` and vscode-languageclient
// (VS Code cannot run here): which client it starts, with what, and when it restarts.
import { beforeEach, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Module = require("node:module");
import type * as vscode from "vscode";
import type { LanguageClientOptions } from "vscode-languageclient/node";
import { CLIENT_ID, LANGUAGE_ID, RESTART_COMMAND, SETTINGS, serverCommand } from "../out/server";
import { EXTENSION_DIR, cudalintBin, manifest } from "./paths";

type Listener = (e: { affectsConfiguration(section: string): boolean }) => void;

class FakeClient {
  state: "new" | "running" | "failed" | "stopped" = "new";
  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: Record<string, unknown>,
    readonly clientOptions: LanguageClientOptions,
  ) {
    world.clients.push(this);
  }
  async start(): Promise<void> {
    if (world.startError) {
      this.state = "failed";
      throw world.startError;
    }
    this.state = "running";
  }
  async stop(): Promise<void> {
    if (this.state !== "running") {
      throw new Error(`stop in state ${this.state}`); // as the real client does
    }
    this.state = "stopped";
  }
  dispose(): Promise<void> {
    return this.stop();
  }
}

/** What the extension sees and does, fresh for each test. */
let world: {
  settings: Map<string, unknown>;
  read: Set<string>;
  errors: string[];
  commands: Map<string, () => unknown>;
  listeners: Listener[];
  clients: FakeClient[];
  startError?: Error;
};

const fakeVscode = {
  window: {
    createOutputChannel: () => ({ append() {}, appendLine() {}, dispose() {} }),
    showErrorMessage: (message: string) => {
      world.errors.push(message);
      return Promise.resolve(undefined);
    },
  },
  commands: {
    registerCommand: (id: string, run: () => unknown) => {
      world.commands.set(id, run);
      return { dispose() {} };
    },
    executeCommand: () => Promise.resolve(undefined),
  },
  workspace: {
    workspaceFolders: undefined,
    getConfiguration: (section?: string) => ({
      get: (key: string) => {
        const full = section ? `${section}.${key}` : key;
        world.read.add(full);
        return world.settings.get(full);
      },
    }),
    onDidChangeConfiguration: (listener: Listener) => {
      world.listeners.push(listener);
      return { dispose() {} };
    },
  },
};
const fakeClientModule = { LanguageClient: FakeClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } };

const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const load = loader._load;
loader._load = function (request, parent, isMain) {
  if (request === "vscode") return fakeVscode;
  if (request === "vscode-languageclient/node") return fakeClientModule;
  return load.call(this, request, parent, isMain);
};

const extensionPath = path.join(EXTENSION_DIR, "out", "extension.js");
type Extension = typeof import("../out/extension");

/** A fresh copy of the extension (its module state is per activation), activated. */
async function activate(settings: Record<string, unknown>): Promise<Extension> {
  for (const [k, v] of Object.entries(settings)) world.settings.set(k, v);
  delete require.cache[extensionPath];
  const extension = require(extensionPath) as Extension;
  const context = { subscriptions: [] as { dispose(): unknown }[] };
  await extension.activate(context as unknown as vscode.ExtensionContext);
  return extension;
}

function changeSetting(key: string, value: unknown): void {
  world.settings.set(key, value);
  for (const l of world.listeners) {
    l({ affectsConfiguration: (s) => key === s || key.startsWith(`${s}.`) });
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), what);
}

beforeEach(() => {
  world = { settings: new Map(), read: new Set(), errors: [], commands: new Map(), listeners: [], clients: [] };
});

test("activate starts one client for cuda-cpp files: the configured binary with `lsp`, over stdio", async () => {
  const bin = cudalintBin();
  await activate({ [SETTINGS.path]: bin, [SETTINGS.extraArgs]: [] });
  assert.deepEqual(world.errors, []);
  assert.equal(world.clients.length, 1);
  const [c] = world.clients;
  assert.equal(c?.id, CLIENT_ID, "the id vscode-languageclient derives `cudalint.trace.server` from");
  assert.equal(c?.state, "running");
  // vscode-languageclient appends `--stdio` for TransportKind.stdio, and `cudalint lsp` exits
  // on it; without a transport it spawns command + args as they are, on stdio
  assert.equal(c?.serverOptions.transport, undefined);
  assert.deepEqual(c?.serverOptions, { ...serverCommand({ path: bin }, process.env), command: bin });
  assert.deepEqual(c?.clientOptions.documentSelector, [
    { scheme: "file", language: LANGUAGE_ID },
    { scheme: "untitled", language: LANGUAGE_ID },
  ]);
  assert.ok(world.commands.has(RESTART_COMMAND));
  const contributed = Object.keys(manifest().contributes.configuration.properties);
  assert.ok(world.read.size > 0);
  for (const key of world.read) assert.ok(contributed.includes(key), `package.json contributes ${key}`);
});

test("a change of cudalint.path or cudalint.extraArgs restarts the server with it; other settings do not", async () => {
  const bin = cudalintBin();
  const other = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cudalint-")), "cudalint-other");
  fs.symlinkSync(bin, other);
  await activate({ [SETTINGS.path]: bin });

  changeSetting("editor.fontSize", 20);
  changeSetting(SETTINGS.trace, "verbose"); // vscode-languageclient applies that one itself
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(world.clients.length, 1);

  changeSetting(SETTINGS.path, other);
  await until("a second client", () => world.clients[1]?.state === "running");
  assert.equal(world.clients[0]?.state, "stopped");
  assert.equal(world.clients[1]?.serverOptions.command, other);

  changeSetting(SETTINGS.extraArgs, ["--x"]);
  await until("a third client", () => world.clients[2]?.state === "running");
  assert.deepEqual(world.clients[2]?.serverOptions.args, ["lsp", "--x"]);
  assert.equal(world.clients.filter((c) => c.state === "running").length, 1);
});

test("cudalint.restart stops the server and starts a new one; deactivate stops it", async () => {
  const extension = await activate({ [SETTINGS.path]: cudalintBin() });
  await world.commands.get(RESTART_COMMAND)?.();
  assert.deepEqual(
    world.clients.map((c) => c.state),
    ["stopped", "running"],
  );
  await extension.deactivate();
  assert.equal(world.clients[1]?.state, "stopped");
});

test("a binary that is not there: an error naming it and the setting, and no client", async () => {
  await activate({ [SETTINGS.path]: "/nonexistent/cudalint" });
  assert.equal(world.clients.length, 0);
  assert.equal(world.errors.length, 1);
  assert.match(world.errors[0] ?? "", /\/nonexistent\/cudalint/);
  assert.match(world.errors[0] ?? "", /"cudalint\.path"/);

  world.errors = [];
  await activate({ [SETTINGS.path]: "no-such-cudalint-binary" });
  assert.match(world.errors[0] ?? "", /no-such-cudalint-binary.*not found on PATH.*"cudalint\.path"/);
});

test("a server that fails to start: an error naming the binary and the failure", async () => {
  const bin = cudalintBin();
  world.startError = new Error("the server exited during initialize");
  await activate({ [SETTINGS.path]: bin });
  assert.equal(world.errors.length, 1);
  assert.ok(world.errors[0]?.includes(bin), world.errors[0]);
  assert.match(world.errors[0] ?? "", /exited during initialize.*"cudalint\.path"/);
  // and the restart command tries again, now successfully
  world.startError = undefined;
  await world.commands.get(RESTART_COMMAND)?.();
  assert.equal(world.clients.at(-1)?.state, "running");
});
