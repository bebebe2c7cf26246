#!/usr/bin/env python3
"""ncu's counters for redlab's production choice and for CUB side by side (docs/cuda.md).

Usage: scripts/ncu_evidence_table.py results/h200-ncu-cub
Reads ours-CASE.csv and cub-CASE.csv (ncu --csv, from scripts/ncu_evidence.sh) and prints
a Markdown table, one row per kernel launch: time, DRAM throughput as % of peak, achieved
and theoretical occupancy, eligible and issuing warps per cycle, and the three stall
reasons with the most warps stalled per issued instruction.
"""
import csv
import io
import sys
from collections import OrderedDict
from pathlib import Path

STALL = "smsp__average_warps_issue_stalled_"


def launches(path):
    text = path.read_text()
    if '"ID"' not in text:
        return []
    rows = csv.DictReader(io.StringIO(text[text.index('"ID"'):]))
    found = OrderedDict()
    for r in rows:
        entry = found.setdefault(r["ID"], {"kernel": r["Kernel Name"]})
        try:
            value = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        # times come in whatever unit ncu picked; keep microseconds
        value *= {"ns": 1e-3, "nsecond": 1e-3, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}.get(r.get("Metric Unit", ""), 1.0)
        entry[r["Metric Name"]] = value
    return list(found.values())


def cell(launch, metric, fmt="{:.1f}"):
    value = launch.get(metric)
    return "—" if value is None else fmt.format(value)


def stalls(launch):
    reasons = [(v, k[len(STALL):].replace("_per_issue_active.ratio", ""))
               for k, v in launch.items() if k.startswith(STALL)]
    reasons.sort(reverse=True)
    return ", ".join(f"{name} {v:.1f}" for v, name in reasons[:3])


def main():
    folder = Path(sys.argv[1])
    print("| case | who | kernel | regs, grid × block | µs | DRAM % of peak | occupancy achieved / theoretical % "
          "| eligible warps / cycle | issue / cycle | top stalls (warps per issue) |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|")
    cases = sorted({p.stem.split("-", 1)[1] for p in folder.glob("*-*.csv")},
                   key=lambda c: (int(c.rsplit("pow", 1)[1]), c))
    for case in cases:
        for who in ("ours", "cub"):
            path = folder / f"{who}-{case}.csv"
            if not path.exists():
                continue
            for launch in launches(path):
                kernel = launch["kernel"].split("<")[0].split("(")[0]
                print(f"| {case} | {who} | {kernel} "
                      f"| {cell(launch, 'Registers Per Thread', '{:.0f}')}, "
                      f"{cell(launch, 'Grid Size', '{:.0f}')} × {cell(launch, 'Block Size', '{:.0f}')} "
                      f"| {cell(launch, 'gpu__time_duration.sum')} "
                      f"| {cell(launch, 'dram__throughput.avg.pct_of_peak_sustained_elapsed')} "
                      f"| {cell(launch, 'sm__warps_active.avg.pct_of_peak_sustained_active')} / "
                      f"{cell(launch, 'Theoretical Occupancy')} "
                      f"| {cell(launch, 'smsp__warps_eligible.avg.per_cycle_active', '{:.2f}')} "
                      f"| {cell(launch, 'smsp__issue_active.avg.per_cycle_active', '{:.2f}')} "
                      f"| {stalls(launch)} |")


if __name__ == "__main__":
    main()
