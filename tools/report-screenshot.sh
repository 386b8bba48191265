#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of `cudalint audit --format html`: the
# report of one fixture (default fixtures/bank_conflicts.cu) rendered by headless Chromium
# (Debian's `chromium`). Uses the release build (cargo build --release -p cudalint), or
# $CUDALINT_BIN.
#   tools/report-screenshot.sh [FIXTURE] [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=${1:-fixtures/bank_conflicts.cu}
out=${2:-docs/report.png}
bin=${CUDALINT_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cudalint}
[ -x "$bin" ] || cargo build --release -p cudalint
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium is not installed (apt-get install chromium)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" audit --format html --no-cache --quiet "$fixture" > "$work/report.html" || [ -s "$work/report.html" ]
mkdir -p "$(dirname "$out")"
"$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
  --force-device-scale-factor=1 --user-data-dir="$work/profile" \
  --window-size=1100,1500 --screenshot="$work/report.png" "file://$work/report.html" 2>/dev/null
cp "$work/report.png" "$out"
echo "$out: $(wc -c < "$out") bytes"
