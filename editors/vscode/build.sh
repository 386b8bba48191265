#!/usr/bin/env bash
# Builds, tests and packages the VS Code extension as editors/vscode/cudalint-<version>.vsix.
# Needs Node.js with npm (the npm registry is the only thing fetched) and, for the tests, a
# cudalint binary: $CUDALINT_BIN, else target/release/cudalint (built with cargo if missing).
set -euo pipefail
cd "$(dirname "$0")"

# node:test's beforeEach (18.8); @vscode/vsce 2.x needs 16, TypeScript 5 needs 14.17.
# Tested on 18.19 (Debian bookworm, Ubuntu 24.04) and 20.
min_node=18.8.0
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "build.sh: Node.js >= $min_node with npm is needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
if ! node -e '
  const [have, need] = [process.versions.node, process.argv[1]].map((v) => v.split(".").map(Number));
  const i = have.findIndex((x, j) => x !== need[j]);
  process.exit(i === -1 || have[i] > need[i] ? 0 : 1);' "$min_node"; then
  echo "build.sh: Node.js $(node --version) is too old; the extension's tools need >= $min_node" >&2
  exit 1
fi

echo "build.sh: node $(node --version), npm $(npm --version)"

repo=$(cd ../.. && pwd)
if [ -z "${CUDALINT_BIN:-}" ] && [ ! -x "$repo/target/release/cudalint" ]; then
  if command -v cargo >/dev/null; then
    (cd "$repo" && cargo build --release -p cudalint)
  else
    echo "build.sh: the tests run the real server: set CUDALINT_BIN to a cudalint binary, or install Rust to build one" >&2
    exit 1
  fi
fi

# --ignore-scripts: the tree's only install scripts are keytar's and @vscode/vsce-sign's, native
# helpers for publishing and signing (not for packaging) that would download prebuilt binaries.
npm ci --ignore-scripts --no-audit --no-fund
npm run compile
npm test

version=$(node -p 'require("./package.json").version')
vsix="cudalint-$version.vsix"
rm -f cudalint-*.vsix
npm run package -- --out "$vsix"

# The listing (a zip's central directory, read with node alone: unzip is not everywhere), the
# files the extension needs, and a load of the packaged out/extension.js, which fails if a
# runtime dependency was left out; `vscode` itself is a stand-in that answers everything.
node - "$vsix" <<'EOF'
const fs = require("fs");
const os = require("os");
const path = require("path");
const zlib = require("zlib");
const file = process.argv[2];
const zip = fs.readFileSync(file);
let end = zip.length - 22;
while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
if (end < 0) throw new Error(`${file} is not a zip`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cudalint-vsix-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const names = [];
let total = 0;
for (let i = 0, at = zip.readUInt32LE(end + 16); i < zip.readUInt16LE(end + 10); i++) {
  if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory`);
  const [method, packed, size] = [zip.readUInt16LE(at + 10), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 24)];
  const nameLength = zip.readUInt16LE(at + 28);
  const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
  const local = zip.readUInt32LE(at + 42);
  const data = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
  const bytes = zip.subarray(data, data + packed);
  if (!name.endsWith("/")) {
    const target = path.join(dir, name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, method === 8 ? zlib.inflateRawSync(bytes) : bytes);
  }
  console.log(`${String(size).padStart(9)}  ${name}`);
  names.push(name);
  total += size;
  at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
}
console.log(`${String(total).padStart(9)}  ${names.length} files, ${zip.length} bytes packed: ${file}`);
const needed = ["extension/package.json", "extension/out/extension.js", "extension/out/server.js"];
const missing = needed.filter((n) => !names.includes(n));
if (missing.length > 0) {
  console.error(`build.sh: ${file} lacks ${missing.join(", ")}`);
  process.exit(1);
}
const Module = require("module");
const load = Module._load;
const any = new Proxy(function () {}, { get: () => any, apply: () => any, construct: () => any });
Module._load = function (request, ...rest) {
  return request === "vscode" ? any : load.call(this, request, ...rest);
};
const main = require(path.join(dir, "extension", "package.json")).main;
const extension = require(path.join(dir, "extension", main));
if (typeof extension.activate !== "function") throw new Error(`${main} exports no activate`);
console.log(`build.sh: ${file} holds ${main}, which loads with its dependencies`);
EOF
