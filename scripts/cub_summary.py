#!/usr/bin/env python3
"""Summarizes `redlab bench --compare cub` records: CUB's time over ours (> 1: ours faster),
in a CUDA graph and per call, per type and size, for one of our rows (`auto` by default,
or `canonical-one-launch`), and what the bit-reproducible float sums cost against the
same type's min/max in the same run.

Usage: cub_summary.py RECORDS.jsonl [VARIANT]
"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
ours_name = sys.argv[2] if len(sys.argv) > 2 else "auto"
ours = {(r["op"], r["dtype"], r["n"]): r for r in rows if r["variant"] == ours_name}
cub = {(r["op"], r["dtype"], r["n"]): r for r in rows if r["variant"] == "cub"}
sizes = sorted({n for (_, _, n) in ours})


def ratio(key, field):
    o, c = ours.get(key), cub.get(key)
    if not o or not c or not o.get(field) or not c.get(field):
        return None
    return c[field] / o[field]


def cell(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def power(n):
    return f"2^{n.bit_length() - 1}"


print(f"CUB time / {ours_name} time (> 1: ours faster); graph | per call")
print("| problem | " + " | ".join(power(n) for n in sizes) + " |")
print("|---|" + "---|" * len(sizes))
for dtype in ["i32", "f32", "f64"]:
    for label, ops in [("sum", ["sum"]), ("min/max", ["min", "max"])]:
        acc = "→i64" if dtype == "i32" and label == "sum" else ""
        for field, how in [("graph_s", "graph"), ("median_s", "per call")]:
            cells = [cell([ratio((op, dtype, n), field) for op in ops]) for n in sizes]
            print(f"| {label} {dtype}{acc}, {how} | " + " | ".join(cells) + " |")

print()
print(f"Canonical sum time / min-max time of the same type, {ours_name}, in a graph")
print("| type | " + " | ".join(power(n) for n in sizes) + " |")
print("|---|" + "---|" * len(sizes))
for dtype in ["f32", "f64"]:
    cells = []
    for n in sizes:
        s = ours.get(("sum", dtype, n))
        free = [ours.get((op, dtype, n)) for op in ["min", "max"]]
        free = [f["graph_s"] for f in free if f and f.get("graph_s")]
        cells.append(f"{s['graph_s'] / min(free):.2f}" if s and s.get("graph_s") and free else "-")
    print(f"| {dtype} | " + " | ".join(cells) + " |")
