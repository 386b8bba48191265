#!/usr/bin/env python3
"""How cudalint's impact estimate ranks against the hardware.

  impact_rank.py fixtures BIN            every measured fixture (fixtures/measured/*.json)
  impact_rank.py programs BIN DIR ROOT   ncu CSV exports DIR/*.csv of programs under ROOT/NAME

Per kernel: the Spearman rank correlation between cudalint's estimated excess and the
measured excess of each line both price (bytes: 32 a sector, 128 a wavefront). Per program
(fixture file): the same between its kernels' totals. Kernels with fewer than three such lines,
or whose lines do not differ on one side, have nothing to rank and are counted apart.
"""
import glob, json, os, re, statistics, subprocess, sys

def spearman(pairs):
    if len(pairs) < 3:
        return None
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in order[i:j + 1]:
                r[k] = (i + j) / 2 + 1
            i = j + 1
        return r
    a, b = ranks([p[0] for p in pairs]), ranks([p[1] for p in pairs])
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    return cov / (va * vb) ** 0.5 if va > 0 and vb > 0 else None

def summarize(within, across, label):
    ws = [r for r in within if r is not None]
    cs = [r for r in across if r is not None]
    print(f"{label}: within kernels: {len(ws)} ranked (of {len(within)} with lines both price), "
          f"median rho {statistics.median(ws):.2f}, mean {statistics.mean(ws):.2f}, "
          f"{sum(r >= 0.9 for r in ws)} at >= 0.9" if ws else f"{label}: no kernel to rank")
    if cs:
        print(f"{label}: across kernels: {len(cs)} programs ranked, median rho {statistics.median(cs):.2f}, "
              f"mean {statistics.mean(cs):.2f}, {sum(r >= 0.8 for r in cs)} at >= 0.8")

def fixtures(bin_):
    within, across = [], []
    for m in sorted(glob.glob("fixtures/measured/*.json")):
        data = json.load(open(m))
        if not isinstance(data, dict):
            continue  # the probe's own format: its kernels are one line each
        fixture = data["fixture"]
        out = subprocess.run([bin_, "audit", "--format", "json", "--sort", "impact", "--no-cache", fixture],
                             capture_output=True, text=True)
        est = {}
        for a in json.loads(out.stdout)["accesses"]:
            key = (a["kernel"], a["line"], a["space"], a["op"])
            est[key] = est.get(key, 0) + a["impact"]["excess_bytes"]
        # lines priced with no excess are in the ranking too
        out = subprocess.run([bin_, "audit", "--format", "json", "--no-cache", fixture], capture_output=True, text=True)
        for a in json.loads(out.stdout)["accesses"]:
            if a.get("impact"):
                est.setdefault((a["kernel"], a["line"], a["space"], a["op"]), 0.0)
        per_kernel, totals = {}, {}
        for r in data["records"]:
            key = (r["function"], r["line"], r["space"], r["op"])
            if key not in est:
                continue
            n = r["executed"]
            if r["space"] == "global":
                ideal = statistics.mean(r["ideal_sectors_per_request"]) if r["ideal_sectors_per_request"] else 0
                meas = max(0.0, r["mean_per_request"] - ideal) * n * 32
            else:
                ideal = {32: 1, 64: 2, 128: 4}.get(r["bits"], 1)
                meas = max(0.0, r["mean_per_request"] - ideal) * n * 128
            per_kernel.setdefault(r["function"], []).append((est[key], meas))
        for k, pairs in per_kernel.items():
            within.append(spearman(pairs))
            totals[k] = (sum(p[0] for p in pairs), sum(p[1] for p in pairs))
        across.append(spearman(list(totals.values())))
        print(f"{fixture}: " + ", ".join(f"{k} {len(p)} lines rho {spearman(p) if spearman(p) is None else round(spearman(p), 2)}"
                                        for k, p in per_kernel.items())
              + f"; across {len(totals)} kernels rho {across[-1] if across[-1] is None else round(across[-1], 2)}")
    summarize(within, across, "fixtures")

def programs(bin_, folder, root):
    within, across = [], []
    for csv in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        name = os.path.basename(csv)[:-4]
        out = subprocess.run([bin_, "ncu", csv, "--root", os.path.join(root, name), "--no-cache"],
                             capture_output=True, text=True).stdout
        ks = re.findall(r"^  kernel (\S+)\s+(\d+) lines  rho (\S+)$", out, re.M)
        for _, _, rho in ks:
            within.append(None if rho == "-" else float(rho))
        m = re.search(r"^  across (\d+) kernels \(their totals\): rho (\S+)$", out, re.M)
        if m:
            across.append(None if m.group(2) == "-" else float(m.group(2)))
        print(f"{name}: " + ", ".join(f"{k} {n} lines rho {r}" for k, n, r in ks)
              + (f"; across {m.group(1)} kernels rho {m.group(2)}" if m else ""))
    summarize(within, across, "programs")

if __name__ == "__main__":
    if sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    else:
        programs(sys.argv[2], sys.argv[3], sys.argv[4])
