#!/usr/bin/env python3
"""Reverts cells of a re-tuned database to a base database, to keep only the cells an A/B
showed faster. Each named cell takes the entry the base would use at that size
(`Database::entry`: the one whose range holds it, the nearest measured size where ranges
overlap), so the cell runs exactly as it did with the base; it is dropped where the base
has none. An entry moved from another size takes its GB/s from the base's own run of
`redlab bench --variants auto` at that cell (RECORDS, e.g. the A/B's), so the database
says what was measured at the size it names. Each problem's size ranges are then drawn
again as `redlab tune --merge-from` draws them (split at the geometric mean of
neighbouring sizes).

Usage: tuning_revert.py TUNED.json BASE.json RECORDS.jsonl OUT.json OP,DTYPE,N [...]
"""
import json
import math
import sys

src, base_path, records_path, dst, *cells = sys.argv[1:]
drop = set()
for cell in cells:
    op, dtype, n = cell.split(",")
    drop.add((op, dtype, int(n)))
db = json.load(open(src))
base = json.load(open(base_path))["entries"]


def base_entry(op, dtype, n):
    """The base's entry for this cell, as redlab chooses it, moved to size n."""
    held = [
        e
        for e in base
        if e["op"] == op and e["dtype"] == dtype and e["n_min"] <= n <= e["n_max"]
    ]
    if not held:
        return None
    best = min(held, key=lambda e: abs(math.log(max(n, 1)) - math.log(max(e["n"], 1))))
    if best["n"] == n:
        return best
    runs = [
        r["gbps"]
        for r in map(json.loads, open(records_path))
        if (r["variant"], r["op"], r["dtype"], r["n"]) == ("auto", op, dtype, n) and r["gbps"]
    ]
    if not runs:
        sys.exit(f"{records_path} has no `auto` run of {op} {dtype} at {n}")
    median = round(sorted(runs)[len(runs) // 2], 1)
    return dict(best, n=n, gbps=median, default_gbps=None, tried=1)


missing = drop - {(e["op"], e["dtype"], e["n"]) for e in db["entries"]}
if missing:
    sys.exit(f"no such cells in {src}: {sorted(missing)}")
entries = [e for e in db["entries"] if (e["op"], e["dtype"], e["n"]) not in drop]
entries += [e for e in (base_entry(*cell) for cell in drop) if e is not None]
problems = {}
for e in entries:
    problems.setdefault((e["op"], e["dtype"]), []).append(e)
out = []
for key in sorted(problems):
    group = sorted(problems[key], key=lambda e: e["n"])
    for k, e in enumerate(group):
        e["n_min"] = 0 if k == 0 else int(math.sqrt(group[k - 1]["n"] * e["n"])) + 1
        e["n_max"] = (
            2**64 - 1 if k + 1 == len(group) else int(math.sqrt(e["n"] * group[k + 1]["n"]))
        )
        out.append(e)
db["entries"] = out
db["command"] += "; then reverted to the base: " + " ".join(sorted(cells))
with open(dst, "w") as out_file:
    json.dump(db, out_file, indent=2)
    out_file.write("\n")
print(f"{dst}: {len(out)} entries ({len(drop)} cells reverted)")
