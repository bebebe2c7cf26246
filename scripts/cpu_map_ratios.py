#!/usr/bin/env python3
"""User-defined maps against the built-in sum on the CPU, binaries alternating.

    python3 scripts/cpu_map_ratios.py ROUNDS N 'MAP;MAP;...' name=BINARY ...

Each round runs, for every map and every binary in turn, `redlab run --map MAP --dtype
f32 --n N --repeat 15 --json` (the built-in sum first, as `--op sum`). A machine whose
bandwidth drifts within minutes gives noisy single runs, so the table reports each
configuration's best GB/s over the rounds and the ratio of a map's best to the built-in
sum's best with the same binary, then every round's GB/s.
"""

import collections
import json
import subprocess
import sys


def gbps(binary, n, what):
    args = [binary, "run", "--dtype", "f32", "--n", n, "--repeat", "15", "--json"]
    args += ["--op", "sum"] if what == "sum" else ["--map", what]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["gbps"]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, n, maps = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(";")
    binaries = [arg.split("=", 1) for arg in sys.argv[4:]]
    runs = collections.defaultdict(list)
    for _ in range(rounds):
        for what in ["sum"] + maps:
            for name, binary in binaries:
                runs[(name, what)].append(gbps(binary, n, what))
    print(f"n = {n}, {rounds} rounds; best GB/s, best / built-in sum's best, every round")
    print("| map | " + " | ".join(f"{name} best | {name} ratio" for name, _ in binaries) + " |")
    print("|---|" + "---|---|" * len(binaries))
    for what in ["sum"] + maps:
        cells = []
        for name, _ in binaries:
            best = max(runs[(name, what)])
            cells.append(f"{best:.1f} | {best / max(runs[(name, 'sum')]):.3f}")
        print(f"| `{what}` | " + " | ".join(cells) + " |")
    for (name, what), values in runs.items():
        print(name, what, [round(v, 1) for v in values])


if __name__ == "__main__":
    main()
