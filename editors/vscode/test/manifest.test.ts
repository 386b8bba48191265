// package.json declares what the code reads: the same names, types and defaults.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLIENT_ID, DEFAULT_PATH, LANGUAGE_ID, RESTART_COMMAND, SETTINGS } from "../out/server";
import { EXTENSION_DIR, manifest } from "./paths";

const pkg = manifest();

/** The lowest VS Code an engines range like "^1.82.0" admits, as [major, minor]. */
function lowest(range: string): [number, number] {
  const m = /^\^?(\d+)\.(\d+)\.\d+$/.exec(range);
  assert.ok(m, `a simple version range: ${range}`);
  return [Number(m[1]), Number(m[2])];
}

test("main is the compiled extension", () => {
  assert.equal(pkg.main, "./out/extension.js");
  assert.ok(fs.existsSync(path.join(EXTENSION_DIR, pkg.main)), `${pkg.main} exists (npm run compile)`);
});

test("activation: on the language the client's documentSelector names", () => {
  assert.deepEqual(pkg.activationEvents, [`onLanguage:${LANGUAGE_ID}`]);
});

test("settings: exactly those the code reads, with their types and defaults", () => {
  const props = pkg.contributes.configuration.properties;
  assert.deepEqual(Object.keys(props).sort(), Object.values(SETTINGS).sort());
  assert.equal(props[SETTINGS.path]?.type, "string");
  assert.equal(props[SETTINGS.path]?.default, DEFAULT_PATH);
  assert.equal(props[SETTINGS.extraArgs]?.type, "array");
  assert.deepEqual(props[SETTINGS.extraArgs]?.items, { type: "string" });
  assert.deepEqual(props[SETTINGS.extraArgs]?.default, []);
  assert.equal(SETTINGS.trace, `${CLIENT_ID}.trace.server`, "the key vscode-languageclient reads");
  assert.deepEqual(props[SETTINGS.trace]?.enum, ["off", "messages", "verbose"]);
  assert.equal(props[SETTINGS.trace]?.default, "off");
  // the binary and its arguments are code to run: not taken from an untrusted workspace
  assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.sort(), [
    SETTINGS.extraArgs,
    SETTINGS.path,
  ]);
});

test("the restart command, shown as `cudalint: Restart server`", () => {
  const [cmd, ...others] = pkg.contributes.commands;
  assert.equal(others.length, 0);
  assert.equal(cmd?.command, RESTART_COMMAND);
  assert.equal(`${cmd?.category}: ${cmd?.title}`, "cudalint: Restart server");
});

test("engines.vscode admits no VS Code older than vscode-languageclient needs, nor than @types/vscode", () => {
  const client = JSON.parse(
    fs.readFileSync(path.join(EXTENSION_DIR, "node_modules", "vscode-languageclient", "package.json"), "utf8"),
  ) as { version: string; engines: { vscode: string } };
  assert.equal(pkg.dependencies["vscode-languageclient"], client.version, "a runtime dependency, pinned");
  const ours = lowest(pkg.engines.vscode);
  const [cMajor, cMinor] = lowest(client.engines.vscode);
  const [tMajor, tMinor] = lowest(pkg.devDependencies["@types/vscode"] ?? "");
  assert.ok(ours[0] === cMajor && ours[1] >= cMinor, `${pkg.engines.vscode} within ${client.engines.vscode}`);
  assert.ok(ours[0] === tMajor && ours[1] >= tMinor, `@types/vscode no newer than ${pkg.engines.vscode}`);
});
