#!/usr/bin/env python3
"""Per-call and graph GB/s of each `redlab run` record in speed.jsonl.txt (NAME ARGS JSON)."""
import json
import sys

for line in open(sys.argv[1] if len(sys.argv) > 1 else "speed.jsonl.txt"):
    head, text = line[: line.index("{")].strip(), line[line.index("{"):]
    run = json.loads(text)
    graph = run.get("graph_seconds")
    gigabytes = run["gbps"] * run["seconds"]
    print(f"{head}: per call {run['gbps']:.0f} GB/s, graph "
          f"{gigabytes / graph if graph else float('nan'):.0f}, verified {run['verified']}")
