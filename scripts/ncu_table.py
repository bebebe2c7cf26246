#!/usr/bin/env python3
"""The analyzer's numbers beside ncu's, per launch (docs/analyzer.md).

Usage: scripts/ncu_table.py results/h100-ncu
Reads CASE.csv (ncu --csv, from scripts/ncu_crosscheck.sh) and sim-CASE.json
(redlab analyze --json) for each case and prints a Markdown table: one row per launch, each cell "H100 / simulator", or
the number in bold where both agree.
"""
import csv
import io
import json
import sys
from collections import OrderedDict
from pathlib import Path

ROWS = [
    ("shared load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", ("wavefronts", "local_load")),
    ("shared load conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", ("bank_conflicts", "local_load")),
    ("shared load requests", "smsp__sass_inst_executed_op_shared_ld.sum", ("local_requests", "local_load")),
    ("shared store wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", ("wavefronts", "local_store")),
    ("shared store conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", ("bank_conflicts", "local_store")),
    ("global load requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", ("global", "load_requests")),
    ("global load sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", ("global", "load_sectors")),
    ("global store requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", ("global", "store_requests")),
    ("global store sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", ("global", "store_sectors")),
    ("branches (SASS targets / source)", "smsp__sass_branch_targets.sum", ("branches",)),
    ("divergent branches", "smsp__sass_branch_targets_threads_divergent.sum", ("divergent_branches",)),
]


def ncu_launches(path):
    text = path.read_text()
    rows = csv.DictReader(io.StringIO(text[text.index('"ID"'):]))
    launches = OrderedDict()
    for r in rows:
        launches.setdefault(r["ID"], {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return list(launches.values())


def sim_launches(path):
    j = json.loads(path.read_text())
    return j["passes"] if j.get("passes") else [j]


def pick(obj, keys):
    for k in keys:
        obj = obj[k]
    return obj


def main():
    folder = Path(sys.argv[1])
    short = ["ld wavefronts", "ld conflicts", "ld requests", "st wavefronts", "st conflicts",
             "global ld req.", "ld sectors", "global st req.", "st sectors", "branches", "divergent"]
    print("| case, launch | " + " | ".join(short) + " |")
    print("|---|" + "---:|" * len(short))
    for csv_path in sorted(folder.glob("*.csv")):
        case = csv_path.stem
        hw = ncu_launches(csv_path)
        sim = sim_launches(folder / f"sim-{case}.json")
        for k, (h, s) in enumerate(zip(hw, sim)):
            cells = []
            for _, metric, keys in ROWS:
                hv = h.get(metric)
                hv = "—" if hv is None else f"{hv:.0f}"
                sv = pick(s, keys)
                cells.append(f"{hv} / {sv}" if str(hv) != str(sv) else f"**{sv}**")
            print(f"| {case} #{k + 1} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
