#!/usr/bin/env python3
"""Tables of tools/axis_compare.py records for several configurations measured in one
sitting (gpu_whole_rows.sh, gpu_nvrtc_switches.sh): per shape and operator, each
configuration's GB/s range over the rounds and torch's time over its time, in a CUDA
graph and per call, and the strategy it ran.

Usage: axis_ab_table.py DIR [NAME ...] > table.md
(DIR holds compare-NAME-ROUND.jsonl; NAMEs default to every one found, sorted.)
"""
import collections
import glob
import json
import os
import sys


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    order = []
    for path in sorted(glob.glob(os.path.join(folder, "compare-*-*.jsonl"))):
        name = os.path.basename(path)[len("compare-"):].rsplit("-", 1)[0]
        for line in open(path):
            r = json.loads(line)
            key = (tuple(r["shape"]), r["axis"], r["op"])
            if key not in order:
                order.append(key)
            cells[key][name].append(r)
    names = sys.argv[2:] or sorted({n for c in cells.values() for n in c})
    for mode, ours, theirs in [("In a CUDA graph", "redlab_graph_s", "torch_graph_s"),
                               ("Per call", "redlab_s", "torch_s")]:
        print(f"{mode}: GB/s of input (torch's time over ours), ranges over the rounds.\n")
        print("| shape, axis | op | " + " | ".join(names) + " | strategy (last) |")
        print("|---|---|" + "---|" * (len(names) + 1))
        for key in order:
            row = []
            for name in names:
                runs = [r for r in cells[key].get(name, []) if r.get(ours)]
                if not runs:
                    row.append("—")
                    continue
                gbps = [r["bytes"] / r[ours] / 1e9 for r in runs]
                ratio = [r[theirs] / r[ours] for r in runs if r.get(theirs)]
                row.append(f"{span(gbps, lambda v: f'{v:.0f}')} "
                           f"({span(ratio, lambda v: f'{v:.2f}') if ratio else '—'})")
            strategy = next((r["redlab_strategy"] for n in reversed(names)
                             for r in cells[key].get(n, [])), "") or ""
            (rows, cols), axis, op = key[0], key[1], key[2]
            print(f"| {rows}×{cols}, {axis} | {op} | " + " | ".join(row)
                  + f" | {strategy.split(':')[0]} |")
        print()


if __name__ == "__main__":
    main()
