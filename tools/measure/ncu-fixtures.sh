#!/usr/bin/env bash
# On a machine with a GPU, nvcc and ncu: build each fixture with -lineinfo, profile it with
# Nsight Compute's SourceCounters section, and export the per-source-line CSV (with SASS rows
# carrying sectors and shared n-way figures) as in ../shared/groundtruth/README.md.
# Usage: tools/measure/ncu-fixtures.sh OUTDIR FIXTURE.cu...
set -euo pipefail
out="$1"; shift
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" || true
nvcc --version | tail -2 >> "$out/gpu.txt"
ncu --version | tail -1 >> "$out/gpu.txt"
for f in "$@"; do
  name=$(basename "$f" .cu)
  inc=(); [ -d "$(dirname "$f")/include" ] && inc=(-I "$(dirname "$f")/include")
  nvcc -O3 -lineinfo -arch=sm_90 --extended-lambda "${inc[@]}" -o "/tmp/$name" "$f"
  ncu --clock-control none --section SourceCounters --import-source yes -f -o "/tmp/$name" "/tmp/$name" > "/tmp/$name.log" 2>&1 \
    || { echo "ncu failed on $f"; tail -20 "/tmp/$name.log"; continue; }
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source cuda,sass > "$out/$name.csv"
  echo "measured $f: $(wc -l < "$out/$name.csv") lines"
done
