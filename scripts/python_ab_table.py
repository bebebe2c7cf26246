#!/usr/bin/env python3
"""Tables from scripts/gpu_python_ab.sh's records: torch.sum time over redlab.sum time
per round for builds A and B (pipelined and one waiting call), and the breakdown's
pieces side by side.

Usage: python_ab_table.py OUT_DIR
"""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
rows = [json.loads(line) for line in open(out / "overhead-ab.jsonl")]
rows = [r for r in rows if "what" in r]
sizes = sorted({r["n"] for r in rows})
rounds = sorted({r["round"] for r in rows})


def ratio(n, version, rnd, key):
    cell = [r for r in rows if r["n"] == n and r["version"] == version and r["round"] == rnd]
    torch = next(r for r in cell if r["call"] == "torch.sum")[key]
    ours = next(r for r in cell if r["call"] == "redlab.sum")[key]
    return torch / ours


for key, title in (("pipelined_s", "pipelined"), ("latency_s", "one call + synchronize")):
    print(f"\ntorch.sum / redlab.sum, {title}, rounds {rounds[0]}–{rounds[-1]} (> 1: redlab faster)\n")
    print("| n | A | B | A median | B median |")
    print("|---|---|---|---|---|")
    for n in sizes:
        a = [ratio(n, "A", r, key) for r in rounds]
        b = [ratio(n, "B", r, key) for r in rounds]
        print(f"| 2^{n.bit_length() - 1} | {' '.join(f'{x:.2f}' for x in a)} | "
              f"{' '.join(f'{x:.2f}' for x in b)} | {statistics.median(a):.2f} | "
              f"{statistics.median(b):.2f} |")

pieces = [json.loads(line) for line in open(out / "breakdown-ab.jsonl")]
print("\nbreakdown, n = 1024, µs per call (pipelined)\n")
print("| piece | A | B |")
print("|---|---|---|")
by = {}
for p in pieces:
    if "piece" in p and p.get("n") == 1024:
        by.setdefault(p["piece"], {})[p["version"]] = p["us_per_call"]
for piece, cells in by.items():
    print(f"| {piece} | {cells.get('A', float('nan')):.2f} | {cells.get('B', float('nan')):.2f} |")
