"""Tabulates ab.sh's rounds: GB/s per round, new's share of the roof measured in the same
run, and base's median time over new's (> 1: new faster), per (dtype, n).
Usage: python3 compare.py OUT_DIR > compare.md"""

import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
rows = {}
for which in ("base", "new"):
    for path in sorted(out.glob(f"{which}-*.jsonl")):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            key = (r["dtype"], r["n"])
            rows.setdefault(key, {"base": [], "new": []})[which].append(r)

print("| sum | n | base GB/s | new GB/s | new % of roof | base / new time |")
print("|---|---:|---|---|---|---|")
for (dtype, n), got in sorted(rows.items()):
    base, new = got["base"], got["new"]
    gb = lambda rs: ", ".join(f"{r['gbps']:.1f}" for r in rs)
    roof = ", ".join(f"{100 * r['roof_fraction']:.0f}%" for r in new)
    ratios = [b["median_s"] / w["median_s"] for b, w in zip(base, new)]
    print(f"| {dtype} | 2^{n.bit_length() - 1} | {gb(base)} | {gb(new)} | {roof} | "
          f"{min(ratios):.2f}–{max(ratios):.2f} |")
