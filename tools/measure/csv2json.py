#!/usr/bin/env python3
"""Turn ncu's per-source-line CSV (ncu -i rep --page source --csv --print-source cuda,sass)
into fixtures/measured/<fixture>.json: per (function, line, space, op) the distinct sectors per
request and ideal (global) and the n-way figure (shared), as ../shared/groundtruth does.

usage: csv2json.py FIXTURE.cu LINES.csv GPU.txt > fixtures/measured/NAME.json

Lines of the headers next to the fixture (a kernel or helper in `kernels.h`) are kept too,
each record naming its file. `source_sha256` is the fixture's bytes; `code_sha256` the same
with every `//~ ...` annotation left out (annotations are expectations, not code: adding one
does not call for measuring again); `headers` holds each header's code hash.
"""
import csv
import hashlib
import json
import os
import re
import sys
from collections import OrderedDict

HEADER_EXTENSIONS = (".h", ".cuh", ".hpp", ".inl")


def code_digest(text):
    """sha256 of a source with its `//~` annotations (to the end of their line) removed."""
    code = re.sub(r"[ \t]*//~[^\n]*", "", text)
    return hashlib.sha256(code.encode()).hexdigest()


def op_name(op):
    op = op.lower()
    if op.startswith("load") or op == "read":
        return "load"
    if op.startswith("store") or op == "write":
        return "store"
    return "atomic"


def records(csv_path, fixture_name, headers=()):
    recs = OrderedDict()
    fn = header = line = None
    path = ""
    seen = set()
    with open(csv_path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "File Path":
                path = row[1]
                continue
            if row[0] == "Function Name":
                name = row[1].replace("void ", "", 1).strip()
                fn = name[: min([i for i in (name.find("("), name.find("<")) if i >= 0] or [len(name)])]
                header = None
                continue
            if row[0] == "Line No":
                header = row
                continue
            if header is None:
                continue
            r = dict(zip(header, row))
            if row[0].strip().isdigit():
                line = int(row[0])
                continue
            space = r.get("Address Space", "")
            name = next((n for n in (fixture_name, *headers) if path.endswith("/" + n) or path == n), None)
            # an asynchronous copy (LDGSTS) is one instruction with a global and a shared side:
            # a global load and a shared store, each with its own figures
            parts = {"Global": [("Global", None)], "Shared": [("Shared", None)],
                     "Global,Shared": [("Global", "load"), ("Shared", "store")]}.get(space)
            if parts is None or line is None or name is None:
                continue
            executed = float(r.get("Instructions Executed") or 0)
            if executed == 0:
                continue
            # each kernel's block can appear twice in the export, and an instruction of an
            # inlined function is listed under its own line and again under the line that
            # calls it (a member function defined in its class, `node.num_points()`): count
            # an instruction once, at the first line it is listed under, the callee's, as
            # nvdisasm's line table has it
            ident = (fn, r.get("Address", ""), r.get("Source", ""))
            if ident in seen:
                continue
            seen.add(ident)
            for space, op in parts:
                add(recs, r, name, fn, line, space, op or op_name(r.get("Access Operation", "")),
                    executed, copy=len(parts) > 1)
    for rec in recs.values():
        for k in ("sectors_per_request", "ideal_sectors_per_request", "nway"):
            rec[k].sort()
        total, requests = rec.pop("_sum"), rec.pop("_requests")
        rec["mean_per_request"] = round(total / requests, 2) if requests else None
    return list(recs.values())


def add(recs, r, name, fn, line, space, op, executed, copy=False):
    key = (name, fn, line, space.lower(), op)
    rec = recs.setdefault(key, {"file": name, "function": fn, "line": line, "space": key[3],
                                "op": key[4], "bits": int(float(r.get("Access Size") or 0)),
                                "sectors_per_request": [], "ideal_sectors_per_request": [], "nway": [], "sass": [],
                                "executed": 0.0, "_sum": 0.0, "_requests": 0.0})
    # an unrolled loop is one instruction per iteration: the per-request mean over the
    # line's instructions, weighted by how often each ran, is what a model that averages
    # iterations predicts
    rec["executed"] += executed
    if space == "Global":
        s = round(float(r["L2 Theoretical Sectors Global"] or 0) / executed, 2)
        i = round(float(r["L2 Theoretical Sectors Global Ideal"] or 0) / executed, 2)
        for k, v in (("sectors_per_request", s), ("ideal_sectors_per_request", i)):
            if v not in rec[k]:
                rec[k].append(v)
        rec["_sum"] += float(r["L2 Theoretical Sectors Global"] or 0)
        rec["_requests"] += executed
    else:
        n = float(r["L1 Conflicts Shared N-Way"] or 0)
        requests = executed
        wavefronts = float(r.get("L1 Wavefronts Shared") or 0)
        ideal = float(r.get("L1 Wavefronts Shared Ideal") or 0)
        size = int(float(r.get("Access Size") or 32))
        if copy:
            # a copy's shared side: its wavefronts per request (what cudalint predicts)
            n = wavefronts / executed
        elif wavefronts > 0 and ideal > 0 and (n == 0 or (size <= 32 and op != "atomic")):
            # ncu's n-way column is the wavefronts per request rounded down (1 where 27,380
            # wavefronts over 14,060 requests are 1.95 a request), and a predicated
            # instruction that some warps run with every lane off (a loop nvcc did not
            # unroll, `if (index < n)` as a predicate) is counted as executed in those
            # warps too, its n-way then 0. The requests with a lane on are the ideal
            # wavefronts over the ideal of one request (1 for 4 bytes or less whatever
            # lanes are on; 2 for 8 bytes, 4 for 16 with enough lanes on), and the figure
            # is the wavefronts over those requests.
            requests = ideal / max(1, size // 32)
            n = wavefronts / requests
        elif wavefronts > 0 and op != "atomic":
            # (an atomic's wavefronts count its compare-and-swap retries, as its ideal does)
            n = wavefronts / executed
        if round(n, 2) not in rec["nway"]:
            rec["nway"].append(round(n, 2))
        rec["_sum"] += n * requests
        rec["_requests"] += requests
    # the mnemonic, after a predicate (`@!P1  LDS R3, [R5]`)
    words = [w for w in r.get("Source", "").split() if not w.startswith("@")]
    sass = words[0] if words else ""
    if sass and sass not in rec["sass"]:
        rec["sass"].append(sass)


def main():
    fixture, csv_path, gpu_path = sys.argv[1:4]
    name = fixture.rsplit("/", 1)[-1]
    gpu = [l.strip() for l in open(gpu_path) if l.strip()]
    with open(fixture, "rb") as f:
        raw = f.read()
    folder = os.path.dirname(fixture) or "."
    headers = sorted(h for h in os.listdir(folder) if h.endswith(HEADER_EXTENSIONS))
    recs = records(csv_path, name, headers)
    measured_headers = sorted({r["file"] for r in recs if r["file"] != name})
    out = {
        "fixture": fixture,
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "code_sha256": code_digest(raw.decode("utf-8", "replace")),
        "gpu": gpu[0] if gpu else "",
        "toolchain": gpu[1:],
        "records": recs,
    }
    if measured_headers:
        out["headers"] = {
            h: code_digest(open(os.path.join(folder, h), encoding="utf-8", errors="replace").read())
            for h in measured_headers
        }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
