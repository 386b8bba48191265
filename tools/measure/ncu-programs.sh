#!/usr/bin/env bash
# On a machine with a GPU, nvcc and ncu: build whole programs (each folder of SRC named in
# SRC/programs.tsv, "NAME<TAB>ARGS" per line, with its own Makefile) with -lineinfo for sm_90,
# run each under Nsight Compute's SourceCounters (the first launch of every kernel only, so a
# program's repetitions cost nothing), and export the per-source-line CSVs into a tarball:
# OUT/profiles.tgz holds p/NAME.csv and p/gpu.txt (one archive: the device tool returns few
# files). Then, here: tools/measure/program_verdicts.py.
# Usage: tools/measure/ncu-programs.sh SRC OUT [SECONDS_PER_PROGRAM] [SECONDS_IN_ALL]
# Programs not started within SECONDS_IN_ALL (default 540, under the device tool's 600 s a
# call) are skipped and named, so the profiles taken so far still come back.
set -uo pipefail
src="$1"; out="$2"; limit="${3:-60}"; budget="${4:-540}"
work=/tmp/ncu-programs; mkdir -p "$work/p" "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$work/p/gpu.txt"
nvcc --version | tail -2 >> "$work/p/gpu.txt"; ncu --version | tail -1 >> "$work/p/gpu.txt"
cut -f1 "$src/programs.tsv" | xargs -P 12 -I{} sh -c \
  "make -s -C '$src/{}' CC=nvcc ARCH=sm_90 EXTRA_CFLAGS='-lineinfo' > '$work/p/{}.build.log' 2>&1 || echo 'build failed: {}'"
while IFS=$'\t' read -r p args; do
  if [ "$SECONDS" -ge "$budget" ]; then echo "not profiled (out of time): $p"; continue; fi
  [ -x "$src/$p/main" ] || { echo "no binary: $p"; continue; }
  # shellcheck disable=SC2086
  ( cd "$src/$p" && timeout "$limit" ncu --clock-control none --section SourceCounters --import-source yes \
      --kernel-id ::regex:.:1 -f -o "$work/$p" ./main $args > "$work/p/$p.run.log" 2>&1 ) \
    || echo "profile failed or timed out: $p"
  [ -f "$work/$p.ncu-rep" ] && ncu -i "$work/$p.ncu-rep" --page source --csv --print-source cuda,sass > "$work/p/$p.csv" 2>/dev/null
done < "$src/programs.tsv"
tar czf "$out/profiles.tgz" -C "$work" p
