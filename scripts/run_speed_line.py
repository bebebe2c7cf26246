#!/usr/bin/env python3
"""One line of per-call and graph GB/s from `redlab run --json --graph-calls N` output.

Usage: run_speed_line.py NAME ARGS JSON_TEXT
Prints `speed NAME ARGS: per call X GB/s, graph Y GB/s, verified V, KERNEL`, or the first
300 characters of JSON_TEXT when it is not JSON (an error line), for the GPU scripts'
summaries.
"""
import json
import re
import sys

name, args, text = sys.argv[1:4]
try:
    run = json.loads(text)
except ValueError:
    print(f"speed {name} {args}: {text[:300]}")
    sys.exit()
graph = run.get("graph_seconds")
gigabytes = run["gbps"] * run["seconds"]
kernel = re.search(r"column_words|column_tiles|row_tiles|word_rows|short_rows_wide",
                   run.get("strategy") or "")
print(f"speed {name} {args}: per call {run['gbps']:.0f} GB/s, graph "
      f"{(gigabytes / graph if graph else float('nan')):.0f} GB/s, verified {run['verified']}, "
      f"{kernel.group(0) if kernel else '?'}")
