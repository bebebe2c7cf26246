#!/usr/bin/env python3
"""Prints the README's CUB table from rounds of `redlab bench --compare cub` records:
CUB's time over ours (> 1: ours faster) per problem and size, in a graph and per call,
each cell the range over the rounds (and over min and max, which share a row).

Usage: cub_range_table.py ROUND.jsonl [ROUND.jsonl ...]
"""
import json
import sys

cells = {}
sizes = set()
for path in sys.argv[1:]:
    rows = [json.loads(line) for line in open(path)]
    cub = {(r["op"], r["dtype"], r["n"]): r for r in rows if r["variant"] == "cub"}
    for r in rows:
        if r["variant"] != "auto" or r.get("status") != "ok":
            continue
        c = cub.get((r["op"], r["dtype"], r["n"]))
        if not c:
            continue
        ops = "min/max" if r["op"] in ("min", "max") else r["op"]
        acc = "→" + r["acc"] if r["op"] == "sum" and r["acc"] != r["dtype"] and r["dtype"] == "i32" else ""
        name = f"{ops} {r['dtype']}{acc}"
        sizes.add(r["n"])
        for kind, ours_s, cub_s in (
            ("graph", r.get("graph_s"), c.get("graph_s")),
            ("per call", r["median_s"], c["median_s"]),
        ):
            if ours_s and cub_s:
                cells.setdefault((name, kind), {}).setdefault(r["n"], []).append(cub_s / ours_s)


def power(n):
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


order = sorted(sizes)
print("| problem | " + " | ".join(power(n) for n in order) + " |")
print("|---|" + "---|" * len(order))
for (name, kind), by_size in cells.items():
    out = []
    for n in order:
        v = by_size.get(n)
        if not v:
            out.append("-")
            continue
        lo, hi = f"{min(v):.2f}", f"{max(v):.2f}"
        out.append(lo if lo == hi else f"{lo}–{hi}")
    print(f"| {name}, {kind} | " + " | ".join(out) + " |")
