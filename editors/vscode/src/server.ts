// What the extension decides without the `vscode` module, so plain Node can test it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

// The names package.json must declare; test/manifest.test.ts holds the two together.
export const CLIENT_ID = "cudalint";
export const LANGUAGE_ID = "cuda-cpp";
export const RESTART_COMMAND = "cudalint.restart";
export const SETTINGS = {
  path: "cudalint.path",
  extraArgs: "cudalint.extraArgs",
  // read by vscode-languageclient itself, as `${CLIENT_ID}.trace.server`
  trace: `${CLIENT_ID}.trace.server`,
} as const;
export const DEFAULT_PATH = "cudalint";

/** Settings as read from the configuration, where any value may have any type. */
export interface Settings {
  path?: unknown;
  extraArgs?: unknown;
}

/** How to spawn the server: the `Executable` shape of vscode-languageclient's ServerOptions. */
export interface ServerCommand {
  command: string;
  args: string[];
  options: { env: NodeJS.ProcessEnv };
}

/**
 * The command for `cudalint lsp` under these settings. `~/` is the home folder and
 * `${workspaceFolder}` the given folder; a relative path with a slash is taken from that folder
 * (the extension host's own working directory means nothing to the user). A bare name is left
 * for findExecutable to look up on PATH.
 */
export function serverCommand(settings: Settings, env: NodeJS.ProcessEnv, workspaceFolder?: string): ServerCommand {
  let command = typeof settings.path === "string" && settings.path.trim() !== "" ? settings.path.trim() : DEFAULT_PATH;
  if (workspaceFolder !== undefined) {
    command = command.split("${workspaceFolder}").join(workspaceFolder);
  }
  if (command === "~" || command.startsWith("~/") || command.startsWith("~\\")) {
    command = path.join(env.HOME ?? env.USERPROFILE ?? os.homedir(), command.slice(1));
  }
  if (!path.isAbsolute(command) && hasSeparator(command) && workspaceFolder !== undefined) {
    command = path.resolve(workspaceFolder, command);
  }
  const extra = Array.isArray(settings.extraArgs)
    ? settings.extraArgs.filter((a): a is string => typeof a === "string")
    : [];
  return { command, args: ["lsp", ...extra], options: { env: { ...env } } };
}

/** The executable file `command` names (a path, or a bare name looked up on env's PATH), if any. */
export function findExecutable(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const windows = process.platform === "win32";
  // a copied environment object is case-sensitive, and Windows spells it `Path`
  const pathVar = Object.entries(env).find(([k]) => (windows ? k.toUpperCase() === "PATH" : k === "PATH"))?.[1];
  const candidates = hasSeparator(command)
    ? [command]
    : (pathVar ?? "").split(path.delimiter).filter((d) => d !== "").map((d) => path.join(d, command));
  const suffixes = windows ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
  for (const candidate of candidates) {
    for (const suffix of suffixes) {
      if (isExecutableFile(candidate + suffix)) {
        return path.resolve(candidate + suffix);
      }
    }
  }
  return undefined;
}

/**
 * The message shown when the server cannot be started, naming the binary and the setting;
 * without an error, the binary was not found.
 */
export function cannotStartMessage(command: string, error?: string): string {
  const reason = error ?? (hasSeparator(command) ? "no executable file there" : "not found on PATH");
  return (
    `cudalint: cannot start the language server \`${command} lsp\`: ${reason}. ` +
    `Set "${SETTINGS.path}" to the cudalint binary (e.g. target/release/cudalint after ` +
    `\`cargo build --release -p cudalint\`), or put cudalint on PATH.`
  );
}

function hasSeparator(p: string): boolean {
  return p.includes("/") || (process.platform === "win32" && p.includes("\\"));
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
