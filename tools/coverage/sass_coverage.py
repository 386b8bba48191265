#!/usr/bin/env python3
"""The compiler as the judge of where memory is accessed, and how wide.

nvcc knows every global and shared memory instruction it emits: `nvcc -cubin -lineinfo` and
`nvdisasm -g -gi` give each SASS load, store and atomic with its source line and the chain of
call sites it was inlined through. This tool lists those sites and holds `cudalint audit`
against them:

  coverage   the share of the compiler's sites (file, line, space, op) for which cudalint
             reports an access of that space and op at that line or along its inline chain
  phantoms   cudalint accesses where the compiler emits no memory instruction of that space
             and op (a value kept in a register, a load hoisted out of its loop)
  widths     where both sides have an access, whether the bytes per thread cudalint prices
             are a width nvcc issues there (`LDG.E.128` is 16)

Usage:
  sass_coverage.py sites FILE.cu...                 the compiler's sites, one per line
  sass_coverage.py compare PATH... [--unit dir|file] [--cudalint BIN] [--list WHAT] [--json]
  sass_coverage.py fixtures [DIR]                   every fixture: an uncovered site, a phantom
                                                    or a width that differs fails unless the
                                                    line says why: `//~ sass-differs: reason`
  sass_coverage.py selftest                         the disassembly parser on a canned listing

nvcc and nvdisasm are taken from $NVCC / $NVDISASM, else PATH, else the PyPI install that
tools/compile-fixtures.sh makes (under ${CUDALINT_NVCC_PREFIX:-~/.cache/cudalint-nvcc}).
Compiled sites are cached by the file's text and flags (under ~/.cache/cudalint-sass), so a
second comparison after changing cudalint costs only cudalint's time.
"""

import argparse
import concurrent.futures
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

ARCH = os.environ.get("CUDALINT_NVCC_ARCH", "sm_90")
CACHE_VERSION = "1"

# ---------------------------------------------------------------------------------------------
# The toolchain


def find_tool(name, env):
    if os.environ.get(env):
        return os.environ[env]
    found = shutil.which(name)
    if found:
        return found
    prefix = os.environ.get(
        "CUDALINT_NVCC_PREFIX", os.path.expanduser("~/.cache/cudalint-nvcc")
    )
    for dirpath, _dirs, files in os.walk(prefix):
        if name in files and dirpath.endswith(os.path.join("bin")) and "nvidia" in dirpath:
            return os.path.join(dirpath, name)
    return None


def toolchain_digest(nvcc):
    """What the installed toolkit holds (its headers): a header installed later (cuRAND's, say)
    makes a file that did not compile compile, so the cache must not remember the failure."""
    inc = os.path.join(os.path.dirname(os.path.realpath(nvcc)), "..", "include")
    names = sorted(os.listdir(inc)) if os.path.isdir(inc) else []
    return hashlib.sha256(("\n".join([nvcc] + names)).encode()).hexdigest()[:16]


def toolchain():
    nvcc, nvdisasm = find_tool("nvcc", "NVCC"), find_tool("nvdisasm", "NVDISASM")
    missing = [n for n, p in (("nvcc", nvcc), ("nvdisasm", nvdisasm)) if not p]
    if missing:
        sys.exit(
            "sass_coverage: %s not found: run tools/compile-fixtures.sh once (it installs "
            "nvcc and nvdisasm from PyPI), or set NVCC / NVDISASM" % " and ".join(missing)
        )
    return nvcc, nvdisasm, toolchain_digest(nvcc)


# ---------------------------------------------------------------------------------------------
# SASS: which instructions touch which memory, and how wide

CHAIN_RE = re.compile(r'//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
INSN_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")
FUNC_RE = re.compile(r"^\.text\.(\S+):$")


def classify(opcode):
    """(space, op, bytes) for each memory access an opcode makes, or [] for none.

    op is load, store or atomic (reductions and compare-and-swap loops included); an async
    copy (LDGSTS, what cp.async becomes) is a global load and a shared store; ldmatrix (LDSM)
    is a shared load of 16-byte rows."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    width = 4
    for m in mods:
        if m in ("U8", "S8"):
            width = 1
        elif m in ("U16", "S16"):
            width = 2
        elif m in ("64", "F64", "U64", "S64"):
            width = 8
        elif m == "128":
            width = 16
    if base == "LDSM" or base == "STSM":
        count = next((int(m) for m in mods if m in ("1", "2", "4")), 1)
        return [("shared", "load" if base == "LDSM" else "store", 4 * count)]
    table = {
        "LDG": [("global", "load")],
        "STG": [("global", "store")],
        "LDS": [("shared", "load")],
        "STS": [("shared", "store")],
        "LD": [("generic", "load")],
        "ST": [("generic", "store")],
        "ATOMG": [("global", "atomic")],
        "REDG": [("global", "atomic")],
        "RED": [("global", "atomic")],
        "ATOMS": [("shared", "atomic")],
        "ATOM": [("generic", "atomic")],
        "LDGSTS": [("global", "load"), ("shared", "store")],
    }
    return [(s, o, width) for s, o in table.get(base, [])]


def parse_disassembly(text):
    """Every memory instruction of an `nvdisasm -g -gi` listing: (function, chain, space, op,
    bytes, opcode), the chain innermost first as (file, line) pairs.

    Before an instruction, nvdisasm prints its location as `//## File "f", line 4 inlined at
    "f", line 7`, `//## File "f", line 7 inlined at "f", line 15`, `//## File "f", line 15`:
    one chain, innermost first, ended by a line with no `inlined at`. Several chains can
    precede one instruction (locations of code that was folded away); the last is its own."""
    out = []
    chain, complete, function = [], True, None
    for raw in text.splitlines():
        line = raw.strip()
        m = FUNC_RE.match(line)
        if m:
            function = m.group(1)
            chain, complete = [], True
            continue
        m = CHAIN_RE.search(line)
        if m:
            if complete:
                chain, complete = [], False
            if not chain:
                chain.append((m.group(1), int(m.group(2))))
            if m.group(3) is not None:
                chain.append((m.group(3), int(m.group(4))))
            else:
                complete = True
            continue
        m = INSN_RE.match(raw)
        if not m:
            continue
        # `@!PT LDS RZ, [RZ]`: predicated on never, emitted as padding (nvcc puts three before
        # an LDGSTS); no memory is accessed
        if re.match(r"^\s*/\*[0-9a-f]+\*/\s+@!U?PT\s", raw):
            continue
        for space, op, width in classify(m.group(1)):
            out.append((function, tuple(chain), space, op, width, m.group(1)))
    return out


# ---------------------------------------------------------------------------------------------
# Compiling


SYSTEM_INCLUDE = ("/usr/include", "/usr/include/x86_64-linux-gnu")


def shadows_system_header(folder):
    """A folder holding a header named like a system one (popsift's `features.h`) cannot be
    passed with -I: glibc's own `#include <features.h>` would find it. Its files still find
    each other, since a quoted include is looked for beside the includer first."""
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".h")]
    except OSError:
        return False
    return any(os.path.isfile(os.path.join(s, n)) for s in SYSTEM_INCLUDE for n in names)


def include_dirs(path, root, extra):
    """-I folders for one file: its own, then each folder up to the root and the common
    include folders beside them (projects build with -I at their source root), then extra."""
    dirs = []
    d = os.path.dirname(os.path.abspath(path))
    root = os.path.abspath(root)
    while True:
        if not shadows_system_header(d):
            dirs.append(d)
        for sub in ("include", "inc", "common", "Common", "common/inc", "utils", "src"):
            if os.path.isdir(os.path.join(d, sub)):
                dirs.append(os.path.join(d, sub))
        if d == root or os.path.dirname(d) == d or not d.startswith(root):
            break
        d = os.path.dirname(d)
    return dirs + list(extra)


def cache_dir():
    return os.environ.get("CUDALINT_SASS_CACHE", os.path.expanduser("~/.cache/cudalint-sass"))


def compile_sites(path, root, extra_includes=(), defines=(), tools=None, nvcc_args=()):
    """The memory instructions nvcc emits for one translation unit: a dict with `sites`
    (function, chain, space, op, bytes, opcode), `functions` and `error` (None if it
    compiled)."""
    nvcc, nvdisasm, digest = tools
    with open(path, "rb") as f:
        text = f.read()
    incs = include_dirs(path, root, extra_includes)
    flags = ["-cubin", "-O3", "-lineinfo", "-arch=" + ARCH, "-std=c++17", "-w",
             "--expt-relaxed-constexpr", "--extended-lambda"]
    flags += ["-D" + d for d in defines] + ["-I" + i for i in incs] + list(nvcc_args)
    if not path.endswith(".cu"):
        # Bazel's `.cu.cc`: CUDA by name, which nvcc only reads as CUDA when told
        flags += ["-x", "cu"]
    key = hashlib.sha256(
        b"\0".join([CACHE_VERSION.encode(), digest.encode(), os.path.abspath(path).encode(), text]
                   + [x.encode() for x in flags] + headers_digest(path, incs))
    ).hexdigest()
    cached = os.path.join(cache_dir(), key[:2], key)
    # the listing is kept, not what this script read from it: a better reading needs no
    # recompiling
    if os.path.exists(cached + ".err"):
        with open(cached + ".err") as f:
            return {"sites": [], "functions": [], "error": f.read()}
    if os.path.exists(cached + ".sass.gz"):
        with gzip.open(cached + ".sass.gz", "rt") as f:
            return read_listing(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "x.cubin")
        err = None
        for attempt in (flags, flags + ["-rdc=true"]):
            p = subprocess.run([nvcc] + attempt + ["-o", cubin, path],
                               capture_output=True, text=True)
            if p.returncode == 0:
                err = None
                break
            err = (p.stderr or p.stdout).strip().splitlines()
            err = " | ".join([l for l in err if "error" in l][:3] or err[:3])
        listing = None
        if err is None:
            d = subprocess.run([nvdisasm, "-g", "-gi", "-c", cubin],
                               capture_output=True, text=True)
            if d.returncode != 0:
                err = "nvdisasm: " + d.stderr.strip()[:300]
            else:
                listing = d.stdout
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    if err is not None:
        with open(cached + ".err", "w") as f:
            f.write(err)
        return {"sites": [], "functions": [], "error": err}
    with gzip.open(cached + ".sass.gz", "wt") as f:
        f.write(listing)
    return read_listing(listing)


def read_listing(listing):
    insns = parse_disassembly(listing)
    return {
        "sites": [list(x[:1]) + [[list(c) for c in x[1]]] + list(x[2:]) for x in insns],
        "functions": sorted(set(m.group(1) for m in re.finditer(r"^\.text\.(\S+):$",
                                                                listing, re.M))),
        "error": None,
    }


def headers_digest(path, incs):
    """The quoted includes the file names, as found: a changed header recompiles."""
    out = []
    try:
        with open(path, errors="replace") as f:
            names = re.findall(r'^\s*#\s*include\s*"([^"]+)"', f.read(), re.M)
    except OSError:
        return out
    for n in names:
        for d in incs:
            p = os.path.join(d, n)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    out.append(hashlib.sha256(f.read()).hexdigest().encode())
                break
    return out


# ---------------------------------------------------------------------------------------------
# Sites: where the compiler files each instruction in the program's own code


def real(p):
    return os.path.realpath(p)


def own_site(chain, root):
    """The innermost frame in the program's own code (an atomicAdd is filed in CUDA's
    sm_20_atomic_functions.hpp, inlined at the user's line) and the frames outside it."""
    frames = [(real(f), l) for f, l in chain]
    for i, (f, l) in enumerate(frames):
        if f.startswith(root + os.sep) or f == root:
            return (f, l), [x for x in frames[i + 1:]]
    return None, []


def collect_sites(results, root):
    """Distinct sites (file, line, space, op) with the widths nvcc issues there and the
    chains they were inlined through."""
    sites = {}
    for r in results:
        for function, chain, space, op, width, opcode in r["sites"]:
            at, outer = own_site(chain, root)
            if at is None:
                continue
            key = (at[0], at[1], space, op)
            s = sites.setdefault(key, {"widths": set(), "chains": set(), "opcodes": set(),
                                       "count": 0})
            s["widths"].add(width)
            s["chains"].add(tuple(outer))
            s["opcodes"].add(opcode)
            s["count"] += 1
    # (the load of a compare-and-swap loop, atomicAdd on a shared float being LDS then
    # ATOMS.CAST.SPIN, is a site of its own: ncu files it as a shared load, and cudalint
    # reports it beside the atomic)
    return sites


# ---------------------------------------------------------------------------------------------
# cudalint's side


def audit(cudalint, target, extra_args=()):
    p = subprocess.run([cudalint, "audit", "--format", "json", *extra_args, target],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return None, p.stderr.strip()
    try:
        return json.loads(p.stdout), None
    except json.JSONDecodeError as e:
        return None, "audit output is not JSON: %s" % e


def accesses_of(report, base):
    out = []
    for a in report.get("accesses", []):
        f = real(os.path.join(base, a["file"]))
        chain = [(real(os.path.join(base, c["file"])), c["line"])
                 for c in a.get("inlined_at", [])]
        out.append({
            "file": f, "line": a["line"], "end_line": a.get("end_line", a["line"]),
            "space": a["space"], "op": a["op"], "bytes": a["bytes"], "kernel": a["kernel"],
            "chain": chain, "class": a["class"], "text": a.get("text", ""),
            "elem_type": a.get("elem_type", ""),
            # a load hoisted out of its loop: nvcc files it under a line from the loop's head
            # to its own
            "issued": [(real(os.path.join(base, i["file"])), l)
                       for i in [a.get("issued_at")] if i
                       for l in range(i["line"], a["line"])
                       if real(os.path.join(base, i["file"])) == f],
        })
    return out


SPACE_MATCH = {"global": {"global", "unknown"}, "shared": {"shared", "unknown"},
               "generic": {"global", "shared", "unknown"}}


def match(sites, accesses, compiled_kernels, root=None):
    """Covered sites, phantoms and width agreement."""
    # cudalint accesses by (file, line) over every line of their statement
    by_line = defaultdict(list)
    for a in accesses:
        for l in range(a["line"], max(a["line"], a["end_line"]) + 1):
            by_line[(a["file"], l)].append(a)
        for fr in a.get("issued", []):
            by_line[fr].append(a)
        # an access in a header outside the program's folder (FasterTransformer's `ldg` in
        # utils/, inlined into kernels/), filed where nvcc files it: at the innermost call
        # site in the program's own code, as `own_site` does for the compiler's chains
        if root is not None and not (a["file"].startswith(root + os.sep) or a["file"] == root):
            own, _ = own_site(a["chain"], root)
            if own is not None:
                by_line[own].append(a)
    covered, uncovered, width_ok, width_bad = {}, {}, [], []
    used = set()
    for key, s in sites.items():
        f, l, space, op = key
        frames = [(f, l)] + [fr for ch in s["chains"] for fr in ch]
        found = []
        for fr in frames:
            for a in by_line.get(fr, []):
                if a["space"] in SPACE_MATCH[space] and a["op"] == op:
                    found.append(a)
            if found:
                break
        if found:
            covered[key] = found
            for a in found:
                used.add(id(a))
            widths = {a["bytes"] for a in found if a["space"] != "unknown"}
            if widths:
                (width_ok if widths <= s["widths"] else width_bad).append((key, widths, found))
        else:
            uncovered[key] = s
    # a phantom: an access of a kernel the compiler emitted whose line (or a line of its
    # statement, or a call site on its chain) has no instruction of that space and op
    site_lines = defaultdict(set)
    for (f, l, space, op), s in sites.items():
        for fr in [(f, l)] + [fr for ch in s["chains"] for fr in ch]:
            site_lines[fr].add((space, op))
    phantoms = []
    priced = 0
    for a in accesses:
        if a["space"] not in ("global", "shared"):
            continue
        if compiled_kernels is not None and a["kernel"] not in compiled_kernels:
            continue
        priced += 1
        if id(a) in used:
            continue
        lines = [(a["file"], l) for l in range(a["line"], max(a["line"], a["end_line"]) + 1)]
        lines += a["chain"] + a.get("issued", [])
        ok = any((sp, a["op"]) in site_lines.get(fr, ()) for fr in lines
                 for sp in (a["space"], "generic"))
        if not ok:
            phantoms.append(a)
    return covered, uncovered, phantoms, priced, width_ok, width_bad


def kernel_names(functions):
    """Plain names of the compiled functions (`_Z11sgemm_naiveiiiPKfS0_Pf` -> sgemm_naive;
    nested names give their last component)."""
    out = set()
    for fn in functions:
        if not fn.startswith("_Z"):
            out.add(fn)
            continue
        s = fn[2:]
        if s.startswith("N"):
            s = s[1:]
        name = None
        while s and s[0].isdigit():
            n = int(re.match(r"\d+", s).group(0))
            digits = len(str(n))
            name = s[digits:digits + n]
            s = s[digits + n:]
            if not s.startswith(tuple("0123456789")):
                break
        if name:
            out.add(name)
    return out


# ---------------------------------------------------------------------------------------------
# Reports


CUDA_SUFFIXES = (".cu", ".cu.cc", ".cu.cpp", ".cu.cxx")


def cu_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, dirs, files in os.walk(p):
                dirs[:] = sorted(x for x in dirs if not x.startswith("."))
                out += [os.path.join(d, f) for f in sorted(files) if f.endswith(CUDA_SUFFIXES)]
        elif p.endswith(CUDA_SUFFIXES):
            out.append(p)
    return out


def units_of(files, unit):
    """Programs to audit alone: each .cu file's folder (`dir`) or each file (`file`)."""
    units = defaultdict(list)
    for f in files:
        units[f if unit == "file" else os.path.dirname(f)].append(f)
    return units


def uncovered_reason(key, s, accesses_by_file, analysed_files):
    f, l, space, op = key
    if f not in analysed_files:
        return "file never analysed"
    if any(ch for ch in s["chains"]):
        return "inlined function"
    return "line"


def run_compare(args):
    tools = toolchain()
    root = real(args.root or os.path.commonpath([os.path.abspath(p) for p in args.paths]))
    if os.path.isfile(root):
        root = os.path.dirname(root)
    files = cu_files(args.paths)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(
            lambda f: (f, compile_sites(f, root, args.include, args.define, tools, args.nvcc_arg)), files))
    failed = [(f, r["error"]) for f, r in results if r["error"]]
    compiled = [r for _, r in results if not r["error"]]
    sites = collect_sites(compiled, root)
    kernels = set()
    for r in compiled:
        kernels |= kernel_names(r["functions"])
    # cudalint, each program alone
    accesses, audit_errors, analysed_files = [], [], set()
    ok_units = defaultdict(list)
    for f, r in results:
        if not r["error"]:
            ok_units[f if args.unit == "file" else os.path.dirname(f)].append(f)
    for unit in sorted(ok_units):
        # the build's flags are the program's for cudalint as for nvcc: a header found only
        # through -I (AutoDock-GPU's common/defines.h) and the branch a -D selects
        flags = ["-I" + i for i in args.include] + ["-D" + d for d in args.define]
        report, err = audit(args.cudalint, unit, flags + args.audit_arg)
        if report is None:
            audit_errors.append((unit, err))
            continue
        accs = accesses_of(report, os.getcwd())
        accesses += accs
        for fr in report.get("files", []):
            analysed_files.add(real(fr["file"]) if "file" in fr else real(fr.get("path", "")))
        for a in accs:
            analysed_files.add(a["file"])
    # one access per distinct (file, line, column, space, op, bytes, kernel, inline chain): the
    # same program audited under two units must not count twice (a helper's one load inlined
    # at several call sites is several accesses)
    seen, uniq = set(), []
    for a in accesses:
        k = (a["file"], a["line"], a["text"], a["space"], a["op"], a["bytes"], a["kernel"],
             tuple(a["chain"]))
        if k not in seen:
            seen.add(k)
            uniq.append(a)
    # a file nvcc could not compile, and no compiled file includes, has no sites: its accesses
    # (in a kernel named as one compiled elsewhere in the unit) would all be phantoms
    site_files = {k[0] for k in sites}
    did_not_compile = {real(f) for f, _ in failed} - site_files
    accesses = [a for a in uniq if a["file"] not in did_not_compile]
    covered, uncovered, phantoms, priced, width_ok, width_bad = match(sites, accesses, kernels,
                                                                      root)
    reasons = defaultdict(int)
    for key, s in uncovered.items():
        reasons[uncovered_reason(key, s, None, analysed_files)] += 1
    summary = {
        "root": root,
        "translation_units": len(files),
        "compiled": len(compiled),
        "did_not_compile": len(failed),
        "sites": len(sites),
        "covered": len(covered),
        "coverage": round(100.0 * len(covered) / max(1, len(sites)), 1),
        "uncovered_by_reason": dict(sorted(reasons.items(), key=lambda x: -x[1])),
        "cudalint_accesses": priced,
        "phantoms": len(phantoms),
        "phantom_share": round(100.0 * len(phantoms) / max(1, priced), 1),
        "width_compared": len(width_ok) + len(width_bad),
        "width_agree": len(width_ok),
        "width_agreement": round(100.0 * len(width_ok) / max(1, len(width_ok) + len(width_bad)), 1),
    }
    rel = lambda p: os.path.relpath(p, root)
    detail = {
        "uncovered": sorted("%s:%d %s %s %s" % (rel(k[0]), k[1], k[2], k[3],
                                                "/".join(sorted(s["opcodes"])))
                            for k, s in uncovered.items()),
        "phantoms": sorted("%s:%d %s %s %s `%s`" % (rel(a["file"]), a["line"], a["space"],
                                                    a["op"], a["kernel"], a["text"])
                           for a in phantoms),
        "widths": sorted("%s:%d %s %s sass %s cudalint %s %s" % (
            rel(k[0]), k[1], k[2], k[3], sorted(sites[k]["widths"]), sorted(w),
            "; ".join(sorted({"`%s` (%s)" % (a["text"], a["elem_type"]) for a in found})))
            for k, w, found in width_bad),
        "failed": ["%s: %s" % (rel(f), e) for f, e in failed],
    }
    if args.json:
        json.dump({"summary": summary, **detail}, sys.stdout, indent=1)
        print()
    else:
        for k, v in summary.items():
            print("%-22s %s" % (k, v))
        for what in args.list:
            print("\n%s:" % what)
            for line in detail[what]:
                print("  " + line)
    return summary, detail, sites, covered, uncovered, phantoms, width_bad


# ---------------------------------------------------------------------------------------------
# Fixtures: every difference is explained next to its line


def explained_lines(path):
    """Lines carrying `//~ sass-differs: reason` (`//~^` for the line above)."""
    out = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            for part in line.split("//~")[1:]:
                carets = len(part) - len(part.lstrip("^"))
                rest = part[carets:].strip()
                if rest.startswith("sass-differs:"):
                    out[i - carets] = rest[len("sass-differs:"):].strip()
    return out


def run_fixtures(args):
    fixtures = args.dir
    tools = toolchain()
    files = cu_files([fixtures])
    failures, checked, explained = [], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = dict(pool.map(
            lambda f: (f, compile_sites(f, os.path.dirname(real(f)), (), (), tools)), files))
    for f in files:
        r = compiled[f]
        if r["error"]:
            failures.append("%s: does not compile: %s" % (f, r["error"]))
            continue
        # a top-level fixture is its own program; a folder's files launch each other's kernels
        top = os.path.dirname(real(f)) == real(fixtures)
        unit = f if top else os.path.dirname(f)
        report, err = audit(args.cudalint, unit)
        if report is None:
            failures.append("%s: cudalint audit failed: %s" % (f, err))
            continue
        root = real(os.path.dirname(f))
        sites = collect_sites([r], root)
        accesses = [a for a in accesses_of(report, os.getcwd())
                    if a["file"] == real(f) or not top]
        covered, uncovered, phantoms, _, _, width_bad = match(
            sites, accesses, kernel_names(r["functions"]))
        notes = {}
        for x in cu_files([os.path.dirname(f)]) if not top else [f]:
            for l, why in explained_lines(x).items():
                notes[(real(x), l)] = why
        for x in [os.path.join(os.path.dirname(f), h) for h in os.listdir(os.path.dirname(f))
                  if h.endswith((".h", ".cuh", ".hpp", ".inl"))] if not top else []:
            for l, why in explained_lines(x).items():
                notes[(real(x), l)] = why
        problems = []
        for (sf, sl, space, op), s in uncovered.items():
            problems.append(((sf, sl), "uncovered: nvcc emits %s %s %s here, cudalint reports "
                             "no such access" % (space, op, "/".join(sorted(s["opcodes"])))))
        for a in phantoms:
            problems.append(((a["file"], a["line"]), "phantom: cudalint's %s %s `%s` has no "
                             "instruction of that space and op here" % (
                                 a["space"], a["op"], a["text"])))
        for (sf, sl, space, op), w, _ in width_bad:
            problems.append(((sf, sl), "width: nvcc issues %s bytes for the %s %s here, "
                             "cudalint prices %s" % (sorted(sites[(sf, sl, space, op)]["widths"]),
                                                     space, op, sorted(w))))
        checked += 1
        for (pf, pl), what in problems:
            if (pf, pl) in notes:
                explained += 1
                continue
            failures.append("%s:%d: %s" % (os.path.relpath(pf), pl, what))
        print("%-8s %s: %d sites, %d covered, %d phantoms, %d width differences" % (
            "ok" if not any(os.path.relpath(p) in x for p in [f] for x in failures) else "FAILED",
            f, len(sites), len(covered), len(phantoms), len(width_bad)))
    print()
    for x in failures:
        print("  " + x)
    print("sass coverage of the fixtures: %d checked, %d differences explained next to their "
          "lines, %d unexplained" % (checked, explained, len(failures)))
    return 1 if failures else 0


# ---------------------------------------------------------------------------------------------


SELFTEST = """\
.text._Z1kPKfPf:
	//## File "/p/k.cu", line 12
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/p/k.cu", line 4 inlined at "/p/k.cu", line 7
	//## File "/p/k.cu", line 7 inlined at "/p/k.cu", line 15
	//## File "/p/k.cu", line 15
        /*00a0*/                   IMAD.WIDE R8, R9, 0x4, R2 ;
        /*00b0*/                   LDG.E.128 R4, desc[UR6][R8.64] ;
	//## File "/cuda/include/sm_20_atomic_functions.hpp", line 84 inlined at "/p/k.cu", line 17
	//## File "/p/k.cu", line 17
	//## File "/p/k.cu", line 16
	//## File "/cuda/include/sm_20_atomic_functions.hpp", line 84 inlined at "/p/k.cu", line 18
	//## File "/p/k.cu", line 18
        /*0210*/              @!P0 REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR6][R12.64], R23 ;
	//## File "/p/k.cu", line 21
        /*02a0*/                   LDS R10, [R0] ;
        /*02c0*/                   ATOMS.CAST.SPIN R11, [R0], R10, R11 ;
        /*02d0*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR6][R4.64] ;
        /*02e0*/                   LDG.E.U16 R2, desc[UR6][R2.64] ;
"""


def run_selftest(_args):
    insns = parse_disassembly(SELFTEST)
    got = [(c[0][1] if c else None, [l for _, l in c[1:]], s, o, w) for _, c, s, o, w, _ in insns]
    want = [
        (4, [7, 15], "global", "load", 16),
        (84, [18], "global", "atomic", 4),
        (21, [], "shared", "load", 4),
        (21, [], "shared", "atomic", 4),
        (21, [], "global", "load", 16),
        (21, [], "shared", "store", 16),
        (21, [], "global", "load", 2),
    ]
    assert got == want, "parse_disassembly:\n got  %s\n want %s" % (got, want)
    sites = collect_sites([{"sites": [list(x[:1]) + [[list(c) for c in x[1]]] + list(x[2:])
                                      for x in insns]}], "/p")
    keys = sorted(sites)
    assert ("/p/k.cu", 18, "global", "atomic") in keys, keys
    assert ("/p/k.cu", 21, "shared", "load") in keys, "CAS loop load dropped: %s" % keys
    assert sites[("/p/k.cu", 4, "global", "load")]["chains"] == {(("/p/k.cu", 7), ("/p/k.cu", 15))}
    assert sites[("/p/k.cu", 21, "global", "load")]["widths"] == {16, 2}
    assert kernel_names(["_Z11sgemm_naiveiiiPKfS0_Pf", "_ZN2ns3putILi32EEEvPfi",
                         "_Z1kIdEvPKfPfPT_i"]) == {"sgemm_naive", "put", "k"}
    print("selftest: ok")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "..", "target", "release", "cudalint")
    s = sub.add_parser("sites")
    s.add_argument("paths", nargs="+")
    s.add_argument("--root")
    s.add_argument("-I", "--include", action="append", default=[])
    s.add_argument("-D", "--define", action="append", default=[])
    s.add_argument("--nvcc-arg", action="append", default=[])
    c = sub.add_parser("compare")
    c.add_argument("paths", nargs="+")
    c.add_argument("--root", help="the program's own code (default: the paths' common folder)")
    c.add_argument("--unit", choices=["dir", "file"], default="dir")
    c.add_argument("--cudalint", default=default_bin)
    c.add_argument("--audit-arg", action="append", default=[],
                   help="passed to `cudalint audit` (e.g. --audit-arg=--block=256)")
    c.add_argument("-I", "--include", action="append", default=[],
                   help="an include folder, for nvcc and cudalint")
    c.add_argument("-D", "--define", action="append", default=[],
                   help="a macro definition, for nvcc and cudalint")
    c.add_argument("--nvcc-arg", action="append", default=[],
                   help="passed to nvcc only, not to cudalint (e.g. --nvcc-arg=-include "
                        "--nvcc-arg=compat.h for a shim the build needs with this nvcc)")
    c.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    c.add_argument("--list", action="append", default=[],
                   choices=["uncovered", "phantoms", "widths", "failed"])
    c.add_argument("--json", action="store_true")
    fx = sub.add_parser("fixtures")
    fx.add_argument("dir", nargs="?",
                    default=os.path.relpath(os.path.join(here, "..", "..", "fixtures")))
    fx.add_argument("--cudalint", default=default_bin)
    fx.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    sub.add_parser("selftest")
    args = ap.parse_args()
    if args.cmd == "sites":
        tools = toolchain()
        files = cu_files(args.paths)
        root = real(args.root or os.path.commonpath([os.path.abspath(p) for p in files]))
        if os.path.isfile(root):
            root = os.path.dirname(root)
        for f in files:
            r = compile_sites(f, root, args.include, args.define, tools, args.nvcc_arg)
            if r["error"]:
                print("%s: did not compile: %s" % (f, r["error"]), file=sys.stderr)
                continue
            for (sf, sl, space, op), s in sorted(collect_sites([r], root).items()):
                chain = " ".join("<- %s:%d" % (os.path.relpath(cf, root), cl)
                                 for ch in sorted(s["chains"]) for cf, cl in ch)
                print("%s:%d %s %s %s %s %s" % (os.path.relpath(sf, root), sl, space, op,
                                                 "/".join(map(str, sorted(s["widths"]))),
                                                 "/".join(sorted(s["opcodes"])), chain))
        return 0
    if args.cmd == "compare":
        run_compare(args)
        return 0
    if args.cmd == "fixtures":
        return run_fixtures(args)
    return run_selftest(args)


if __name__ == "__main__":
    sys.exit(main())
