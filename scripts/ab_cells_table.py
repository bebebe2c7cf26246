#!/usr/bin/env python3
"""Per-round tables of A/B records beside CUB (gpu_binary_ab.sh, gpu_retune_cells.sh):
for each cell, CUB's time over ours in a graph and per call, and our graph time, every
round, for two record names side by side.

Usage: ab_cells_table.py DIR:NAME_A:NAME_B [...] > table.md
(DIR holds NAME-ROUND.jsonl files.)
"""
import collections
import glob
import json
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("CUB's time over ours (auto), per round; > 1: ours faster. `graph`: inside a CUDA")
    print("graph; `per call`: event-timed single calls; µs: our time in a graph.\n")
    for spec in sys.argv[1:]:
        folder, a, b = spec.split(":")
        cells = collections.defaultdict(lambda: collections.defaultdict(list))
        for path in sorted(glob.glob(os.path.join(folder, "*-[0-9]*.jsonl"))):
            name = os.path.basename(path).rsplit("-", 1)[0]
            for line in open(path):
                r = json.loads(line)
                if r.get("speedup_graph") is not None:
                    cell = (r["op"], r["dtype"], r["n"])
                    cells[cell][name].append(
                        (r["speedup_graph"], r["speedup_per_call"], r["graph_s"] * 1e6)
                    )
        print(f"## {os.path.basename(folder.rstrip('/'))}\n")
        print(f"| cell | {a} graph | {b} graph | {a} µs | {b} µs | {a} per call | {b} per call |")
        print("|---|---|---|---|---|---|---|")
        for cell in sorted(cells):
            rounds = cells[cell]

            def col(name, i, fmt):
                return " ".join(fmt.format(v[i]) for v in rounds[name])

            print(
                f"| {cell[0]} {cell[1]} {cell[2]} | {col(a, 0, '{:.3f}')} | {col(b, 0, '{:.3f}')} "
                f"| {col(a, 2, '{:.2f}')} | {col(b, 2, '{:.2f}')} "
                f"| {col(a, 1, '{:.2f}')} | {col(b, 1, '{:.2f}')} |"
            )
        print()


if __name__ == "__main__":
    main()
