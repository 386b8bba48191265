import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

// Compiled to out-test/, one level below the extension folder, like test/.
export const EXTENSION_DIR = path.resolve(__dirname, "..");
export const REPO_ROOT = path.resolve(EXTENSION_DIR, "..", "..");
export const NAIVE_KERNELS = path.join(REPO_ROOT, "fixtures", "examples", "naive_kernels.cu");

/** The real cudalint: $CUDALINT_BIN, else the repository's target/release/cudalint. */
export function cudalintBin(): string {
  const bin = process.env.CUDALINT_BIN
    ? path.resolve(process.env.CUDALINT_BIN)
    : path.join(REPO_ROOT, "target", "release", process.platform === "win32" ? "cudalint.exe" : "cudalint");
  assert.ok(
    fs.existsSync(bin),
    `no cudalint binary at ${bin}: run \`cargo build --release -p cudalint\` in ${REPO_ROOT}, or set CUDALINT_BIN`,
  );
  return bin;
}

export interface Manifest {
  main: string;
  engines: { vscode: string };
  activationEvents: string[];
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: {
    commands: { command: string; title: string; category?: string }[];
    configuration: { properties: Record<string, Record<string, unknown>> };
  };
}

export function manifest(): Manifest {
  return JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, "package.json"), "utf8")) as Manifest;
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
