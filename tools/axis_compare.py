#!/usr/bin/env python3
"""Axis reductions on one CUDA GPU: redlab beside torch and CuPy (with CUB), same shapes.

Usage: tools/axis_compare.py REDLAB_BINARY [--reps 30] [--json OUT.jsonl]
                              [--ops sum,max,min,argmax,argmin,var,std,logsumexp,nanmean,dot] [--shapes 0,1]
                              [--add 65536x1024:0,1024x65536:0] [--graph 100]

var and std are the population statistics (ddof 0) in every library. `dot` is a
user-defined reduction of two inputs of the shape, the sum of x*y along the axis: redlab
`run --map 'x * y'`, torch.linalg.vecdot, and a CuPy ReductionKernel; its GB/s counts both
inputs.

For every shape, axis and operator it prints the median time per call and the GB/s of
input read for each library, then a Markdown table. torch and CuPy are timed with CUDA
events around each call on random normal f32 data already on the device; redlab's time
is `redlab run --json`'s median of the kernels' device-event time (the input is uploaded
before and not counted, as the others' inputs are already on the device). Libraries that
are not installed are left out with a note.

With --graph N, operators and statistics are also timed in the steady state: N back-to-back calls
captured in one CUDA graph and replayed, one call's share of the replay (redlab through
`redlab run --graph-calls N`, torch through torch.cuda.CUDAGraph), and a second table
compares those. Timing one waited-for call at a time leaves the device idle between
calls; a graph keeps it busy, as a pipeline does.
"""
import argparse
import json
import statistics
import subprocess
import sys

SHAPES = [
    ((8192, 8192), 1),
    ((8192, 8192), 0),
    ((1 << 20, 32), 1),
    ((1 << 16, 1024), 1),
    ((32, 1 << 22), 1),
    ((1 << 22, 32), 0),
]
OPS = ["sum", "max", "argmax"]
# Statistics run with `redlab run --stat`, the others with `--op`.
STATS = {"var", "std", "logsumexp", "nanmean"}
# User-defined reductions: redlab's --map text and the number of inputs it reads.
MAPS = {"dot": ("x * y", 2)}


def inputs_of(op):
    return MAPS[op][1] if op in MAPS else 1
# Calls per CUDA graph for the steady-state timing (0: none; set by --graph).
GRAPH_CALLS = 0


def timed(call, reps, sync, event, elapsed_ms=lambda a, b: a.elapsed_time(b)):
    for _ in range(3):
        call()
    sync()
    times = []
    for _ in range(reps):
        start, stop = event(), event()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(elapsed_ms(start, stop) * 1e-3)
    return statistics.median(times)


def torch_graph(torch, f, calls):
    """Seconds per call of `calls` calls of `f` captured in one CUDA graph and replayed."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            f()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kept = [f() for _ in range(calls)]
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    stop.record()
    stop.synchronize()
    del kept, graph
    return start.elapsed_time(stop) * 1e-3 / calls


def torch_rows(reps):
    try:
        import torch
    except ImportError as e:
        print(f"torch not available: {e}", file=sys.stderr)
        return {}
    out = {}
    fns = {"sum": torch.sum, "max": lambda x, dim: torch.amax(x, dim=dim),
           "min": lambda x, dim: torch.amin(x, dim=dim), "argmax": torch.argmax,
           "argmin": torch.argmin,
           "var": lambda x, dim: torch.var(x, dim=dim, correction=0),
           "std": lambda x, dim: torch.std(x, dim=dim, correction=0),
           "logsumexp": torch.logsumexp, "nanmean": torch.nanmean}
    for shape, axis in SHAPES:
        x = torch.randn(shape, device="cuda", dtype=torch.float32)
        y = torch.randn(shape, device="cuda", dtype=torch.float32)
        for op in OPS:
            if op == "dot":
                call = lambda: torch.linalg.vecdot(x, y, dim=axis)
            else:
                call = lambda: fns[op](x, dim=axis)
            out[(shape, axis, op)] = timed(call, reps, torch.cuda.synchronize,
                                           lambda: torch.cuda.Event(enable_timing=True))
            if GRAPH_CALLS:
                out[(shape, axis, op, "graph")] = torch_graph(torch, call, GRAPH_CALLS)
        del x, y
        torch.cuda.empty_cache()
    return out


def cupy_rows(reps):
    try:
        import cupy as cp
        from cupy._core import set_reduction_accelerators, set_routine_accelerators
    except ImportError as e:
        print(f"cupy not available: {e}", file=sys.stderr)
        return {}
    set_reduction_accelerators(["cub"])
    set_routine_accelerators(["cub"])
    out = {}
    fns = {"sum": cp.sum, "max": cp.max, "min": cp.min, "argmax": cp.argmax,
           "argmin": cp.argmin, "var": cp.var,
           "std": cp.std, "nanmean": cp.nanmean}
    try:
        from cupyx.scipy.special import logsumexp
        fns["logsumexp"] = logsumexp
    except ImportError:
        pass
    dot = cp.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "redlab_dot")
    fns["dot"] = lambda x, y, axis: dot(x, y, axis=axis)
    for shape, axis in SHAPES:
        x = cp.random.standard_normal(shape, dtype=cp.float32)
        y = cp.random.standard_normal(shape, dtype=cp.float32)
        for op in OPS:
            if op not in fns:
                continue
            f = fns[op]
            call = (lambda: f(x, y, axis=axis)) if op in MAPS else (lambda: f(x, axis=axis))
            out[(shape, axis, op)] = timed(call, reps, cp.cuda.Device().synchronize,
                                           cp.cuda.Event, cp.cuda.get_elapsed_time)
        del x, y
        cp.get_default_memory_pool().free_all_blocks()
    return out


def redlab_rows(binary, reps):
    out = {}
    for shape, axis in SHAPES:
        for op in OPS:
            if op in MAPS:
                what = ["--map", MAPS[op][0]]
            else:
                what = ["--stat", op] if op in STATS else ["--op", op]
            graph = ["--graph-calls", str(GRAPH_CALLS)] if GRAPH_CALLS else []
            cmd = [binary, "run", "--device", "cuda:0", *what, "--dtype", "f32", "--shape",
                   f"{shape[0]}x{shape[1]}", "--axis", str(axis), "--repeat", str(reps), "--json",
                   "--explain", *graph]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"redlab failed: {' '.join(cmd)}\n{p.stderr}", file=sys.stderr)
                continue
            j = json.loads(p.stdout.strip().splitlines()[-1])
            if not j.get("verified"):
                print(f"redlab result not verified: {' '.join(cmd)}", file=sys.stderr)
            out[(shape, axis, op)] = (j["seconds"], j.get("strategy", ""))
            if "graph_seconds" in j:
                out[(shape, axis, op, "graph")] = (j["graph_seconds"], j.get("strategy", ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("redlab")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--ops", help="comma-separated operators and statistics")
    ap.add_argument("--shapes", help="comma-separated indices into the shape list")
    ap.add_argument("--add", help="more 2-D shapes, ROWSxCOLS:AXIS, comma-separated")
    ap.add_argument("--graph", type=int, default=0,
                    help="also time this many calls in one CUDA graph")
    args = ap.parse_args()
    global GRAPH_CALLS
    GRAPH_CALLS = args.graph
    if args.ops:
        OPS[:] = args.ops.split(",")
    if args.shapes:
        SHAPES[:] = [SHAPES[int(k)] for k in args.shapes.split(",")]
    for spec in args.add.split(",") if args.add else []:
        dims, axis = spec.split(":")
        rows, cols = dims.split("x")
        SHAPES.append(((int(rows), int(cols)), int(axis)))
    ours = redlab_rows(args.redlab, args.reps)
    torch_t = torch_rows(args.reps)
    cupy_t = cupy_rows(args.reps)
    sink = open(args.json, "w") if args.json else None
    print("| shape, axis | op | redlab GB/s | torch GB/s | CuPy+CUB GB/s | torch time / redlab | CuPy time / redlab | redlab strategy |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for shape, axis in SHAPES:
        for op in OPS:
            nbytes = shape[0] * shape[1] * 4 * inputs_of(op)
            key = (shape, axis, op)
            r = ours.get(key)
            t = torch_t.get(key)
            c = cupy_t.get(key)
            rate = lambda s: nbytes / s / 1e9 if s else None
            cells = [rate(r[0]) if r else None, rate(t), rate(c)]
            # speed-up of redlab: the other library's time over redlab's
            ratio = lambda ours_s, other_s: f"{other_s / ours_s:.2f}" if ours_s and other_s else "—"
            fmt = lambda g: f"{g:.0f}" if g else "—"
            print(f"| {shape[0]}×{shape[1]}, {axis} | {op} | {fmt(cells[0])} | {fmt(cells[1])} | {fmt(cells[2])} "
                  f"| {ratio(r[0] if r else None, t)} | {ratio(r[0] if r else None, c)} "
                  f"| {(r[1].split(':')[0] if r else '—')} |")
            if sink:
                sink.write(json.dumps({"shape": shape, "axis": axis, "op": op, "dtype": "f32",
                                       "redlab_s": r[0] if r else None, "redlab_strategy": r[1] if r else None,
                                       "torch_s": t, "cupy_cub_s": c, "bytes": nbytes,
                                       "redlab_graph_s": (ours.get(key + ("graph",)) or [None])[0],
                                       "torch_graph_s": torch_t.get(key + ("graph",)),
                                       "graph_calls": GRAPH_CALLS}) + "\n")
    if GRAPH_CALLS:
        print()
        print(f"In a CUDA graph of {GRAPH_CALLS} calls, per call:")
        print()
        print("| shape, axis | op | redlab GB/s | torch GB/s | torch time / redlab |")
        print("|---|---|---:|---:|---:|")
        for shape, axis in SHAPES:
            for op in OPS:
                nbytes = shape[0] * shape[1] * 4 * inputs_of(op)
                r = ours.get((shape, axis, op, "graph"))
                t = torch_t.get((shape, axis, op, "graph"))
                if not r and not t:
                    continue
                fmt = lambda sec: f"{nbytes / sec / 1e9:.0f}" if sec else "—"
                ratio = f"{t / r[0]:.2f}" if r and t else "—"
                print(f"| {shape[0]}×{shape[1]}, {axis} | {op} | {fmt(r[0] if r else None)} "
                      f"| {fmt(t)} | {ratio} |")


if __name__ == "__main__":
    main()
