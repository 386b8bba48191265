#!/usr/bin/env python3
"""Hold cudalint against whole programs profiled on a GPU (tools/measure/ncu-programs.sh):
`cudalint ncu` on each program's per-line CSV, with the program's own folder as the root, and
the verdict counts per program and in total, as JSON.

usage: program_verdicts.py CUDALINT PROFILES_DIR SOURCES_DIR [PROGRAMS_TSV] > results.json

PROFILES_DIR holds NAME.csv (and gpu.txt); SOURCES_DIR/NAME is the program's code.
"""
import json
import os
import re
import subprocess
import sys

FIELDS = ["measured_lines", "agree", "differ_in_figure", "missed", "false_alarms",
          "not_priced", "no_access"]


def main():
    cudalint, profiles, sources = sys.argv[1:4]
    args = {}
    if len(sys.argv) > 4:
        for line in open(sys.argv[4]):
            name, _, a = line.rstrip("\n").partition("\t")
            args[name] = a
    programs, total = [], dict.fromkeys(FIELDS, 0)
    for csv in sorted(f for f in os.listdir(profiles) if f.endswith(".csv")):
        name = csv[:-4]
        out = subprocess.run([cudalint, "ncu", os.path.join(profiles, csv), "--root",
                              os.path.join(sources, name), "--no-cache"],
                             capture_output=True, text=True).stdout
        m = re.search(r"(\d+) measured lines: (\d+) agree, (\d+) differ in figure, (\d+) missed"
                      r".*?, (\d+) false alarms.*?, (\d+) not priced by cudalint, (\d+) with no "
                      r"access", out)
        if not m:
            programs.append({"program": name, "args": args.get(name), "error": out.strip()[-300:]})
            continue
        counts = dict(zip(FIELDS, map(int, m.groups())))
        for k, v in counts.items():
            total[k] += v
        programs.append({"program": name, "args": args.get(name), **counts})
    n = total["measured_lines"] or 1
    compared = (total["agree"] + total["differ_in_figure"]) or 1
    gpu = open(os.path.join(profiles, "gpu.txt")).read().split("\n") if os.path.exists(
        os.path.join(profiles, "gpu.txt")) else []
    json.dump({
        "gpu": [g for g in gpu if g],
        "programs": programs,
        "total": total,
        "shares": {
            "verdict_agrees": round(100 * (total["agree"] + total["differ_in_figure"]) / n, 1),
            "no_access": round(100 * total["no_access"] / n, 1),
            "false_alarms": round(100 * total["false_alarms"] / n, 1),
            "missed": round(100 * total["missed"] / n, 1),
            "not_priced": round(100 * total["not_priced"] / n, 1),
            "figures_within_10_percent_of_compared": round(100 * total["agree"] / compared, 1),
        },
    }, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
