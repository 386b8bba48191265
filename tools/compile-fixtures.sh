#!/usr/bin/env bash
# Compile every CUDA fixture under fixtures/ with nvcc, to prove each one is
# valid CUDA: nvcc -arch=sm_90 -lineinfo --extended-lambda [-I DIR/include] -c FILE. Fails, listing them, if any
# fixture does not compile.
#
# nvcc is taken from $NVCC, else from PATH, else installed from PyPI (the
# nvidia-cuda-nvcc, nvidia-cuda-crt, nvidia-nvvm, nvidia-cuda-runtime,
# nvidia-cuda-cccl, nvidia-cuda-nvdisasm and nvidia-curand wheels; nvdisasm is what
# tools/coverage/sass_coverage.py reads the compiled fixtures with, and cuRAND's
# headers are what fixtures with per-thread generator states include) into a
# virtual environment under
# ${CUDALINT_NVCC_PREFIX:-$HOME/.cache/cudalint-nvcc} (or, where python3 has no
# venv module, into a plain `pip install --target` folder there). The install is
# reused by later runs. nvcc needs a host C++ compiler: g++ (or c++) on PATH; as
# root on Debian the script installs g++ with apt-get when none is found.
#
# Usage: tools/compile-fixtures.sh [FIXTURE.cu ...]   (default: fixtures/**/*.cu)
#        tools/compile-fixtures.sh --print-nvcc       (install if needed, print nvcc's path:
#                                                      tests/compile_commands.rs configures
#                                                      CMake's CUDA language with it)
# Environment:
#   NVCC                    nvcc to use (skips PATH and the install)
#   CUDALINT_NVCC_PREFIX    where the PyPI install lives
#   CUDALINT_CUDA_MAJOR     CUDA major version of the wheels (default 13)
#   CUDALINT_NVCC_ARCH      target architecture (default sm_90)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${CUDALINT_NVCC_PREFIX:-$HOME/.cache/cudalint-nvcc}"
MAJOR="${CUDALINT_CUDA_MAJOR:-13}"
ARCH="${CUDALINT_NVCC_ARCH:-sm_90}"
PACKAGES=(nvidia-cuda-nvcc nvidia-cuda-crt nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-cccl nvidia-cuda-nvdisasm)
# versioned as the library, not the toolkit: the unsuffixed wheels are CUDA 13's (12's are
# nvidia-curand-cu12)
LIBRARIES=(nvidia-curand)

log() { printf 'compile-fixtures: %s\n' "$*" >&2; }

# The pip wheels put the toolkit in <site-packages>/nvidia/cu<MAJOR>/{bin,include,nvvm,lib};
# bin/nvcc.profile points nvcc at ../include, ../include/cccl and ../nvvm, so the
# binary works in place.
find_installed_nvcc() {
  [ -d "$PREFIX" ] || return 1
  local found
  found="$(find "$PREFIX" -path "*/nvidia/cu${MAJOR}/bin/nvcc" -type f 2>/dev/null | head -n 1)"
  [ -n "$found" ] && [ -x "$found" ] || return 1
  printf '%s\n' "$found"
}

install_nvcc() {
  command -v python3 >/dev/null || { log "python3 is needed to install nvcc from PyPI"; return 1; }
  local specs=() p
  for p in "${PACKAGES[@]}"; do specs+=("${p}>=${MAJOR},<$((MAJOR + 1))"); done
  specs+=("${LIBRARIES[@]}")
  mkdir -p "$PREFIX"
  log "nvcc not found; installing ${PACKAGES[*]} (CUDA ${MAJOR}.x) and ${LIBRARIES[*]} from PyPI into $PREFIX"
  if python3 -m venv "$PREFIX/venv" >/dev/null 2>&1 && [ -x "$PREFIX/venv/bin/python" ]; then
    PIP_ROOT_USER_ACTION=ignore "$PREFIX/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${specs[@]}" >&2
  else
    rm -rf "$PREFIX/venv"
    command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 \
      || { log "python3 has neither venv nor pip; install python3-venv or python3-pip"; return 1; }
    # A folder install is not the system environment: allow it on Debian's
    # externally managed python3 (older pip ignores the variable).
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check \
      --upgrade --target "$PREFIX/site" "${specs[@]}" >&2
  fi
}

ensure_host_compiler() {
  if command -v g++ >/dev/null || command -v c++ >/dev/null; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "no host C++ compiler; installing g++ with apt-get"
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >&2
  else
    log "nvcc needs a host C++ compiler (g++) on PATH"; return 1
  fi
}

resolve_nvcc() {
  if [ -n "${NVCC:-}" ]; then printf '%s\n' "$NVCC"; return 0; fi
  if command -v nvcc >/dev/null; then command -v nvcc; return 0; fi
  local found
  # an install from before nvdisasm or cuRAND was one of the wheels gets them added
  if found="$(find_installed_nvcc)" && [ -x "$(dirname "$found")/nvdisasm" ] \
    && [ -f "$(dirname "$found")/../include/curand_kernel.h" ]; then
    printf '%s\n' "$found"; return 0
  fi
  install_nvcc || return 1
  find_installed_nvcc || { log "installed the wheels but found no nvidia/cu${MAJOR}/bin/nvcc under $PREFIX"; return 1; }
}

ensure_host_compiler
NVCC_BIN="$(resolve_nvcc)" || exit 1
if [ "${1:-}" = "--print-nvcc" ]; then
  printf '%s\n' "$NVCC_BIN"
  exit 0
fi
log "using $NVCC_BIN ($("$NVCC_BIN" --version | grep -o 'release [0-9.]*' || true)), -arch=$ARCH"

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(cd "$ROOT" && find fixtures -type f -name '*.cu' | LC_ALL=C sort)
fi
[ "${#files[@]}" -gt 0 ] || { log "no fixtures found under $ROOT/fixtures"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
n=0
for f in "${files[@]}"; do
  n=$((n + 1))
  src="$f"; [ -e "$src" ] || src="$ROOT/$f"
  # a fixture laid out as a library has its headers under include/, as its build's -I says
  inc=(); [ -d "$(dirname "$src")/include" ] && inc=(-I "$(dirname "$src")/include")
  if "$NVCC_BIN" -arch="$ARCH" -lineinfo --extended-lambda "${inc[@]}" -c "$src" -o "$work/fixture.o" >"$work/log" 2>&1; then
    printf 'ok      %s\n' "$f"
  else
    printf 'FAILED  %s\n' "$f"
    sed 's/^/        /' "$work/log"
    failed+=("$f")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  printf '\n%d of %d fixtures did not compile:\n' "${#failed[@]}" "$n"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
printf '\nall %d fixtures compile (nvcc -arch=%s -lineinfo --extended-lambda -c)\n' "$n" "$ARCH"
