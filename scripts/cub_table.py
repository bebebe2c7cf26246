#!/usr/bin/env python3
"""Prints the production-vs-CUB table (markdown) from `redlab bench --compare cub` records."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
ours = {(r["op"], r["dtype"], r["n"]): r for r in rows if r["variant"] != "cub"}
cub = {(r["op"], r["dtype"], r["n"]): r for r in rows if r["variant"] == "cub"}


def us(seconds):
    return f"{seconds * 1e6:.2f}" if seconds else "-"


print("| problem | n | ours per call (µs) | CUB per call (µs) | speed-up per call | ours in graph (µs) | CUB in graph (µs) | speed-up in graph | ours GB/s | ours % of roof |")
print("|---|---|---|---|---|---|---|---|---|---|")
for key, r in ours.items():
    c = cub[key]
    acc = "→i64" if r["op"] == "sum" and r["dtype"] == "i32" else ""
    print(
        f"| {r['op']} {r['dtype']}{acc} | 2^{r['n'].bit_length() - 1} | {us(r['median_s'])} | {us(c['median_s'])} "
        f"| {r['speedup_per_call']:.2f}× | {us(r.get('graph_s'))} | {us(c.get('graph_s'))} "
        f"| {r['speedup_graph']:.2f}× | {r['gbps']:.0f} | {r['roof_fraction'] * 100:.1f}% |"
    )
