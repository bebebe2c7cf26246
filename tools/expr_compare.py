#!/usr/bin/env python3
"""User-defined reductions on one CUDA GPU: torch and CuPy beside redlab's numbers.

Usage: tools/expr_compare.py [--n 268435456] [--reps 50] [--json OUT.jsonl]

Times, on f32 vectors of n elements already on the device:
  dot     torch.dot (cuBLAS), cupy.dot, a CuPy ReductionKernel 'x * y' / 'a + b';
  l2      torch.linalg.vector_norm, cupy.linalg.norm, a CuPy ReductionKernel 'x * x' with
          sqrt in the post step;
each per call (CUDA events around every call, median) and, for torch, per call inside a
CUDA graph of 20 calls (replayed, event time / 20). GB/s counts the input bytes read
(8n for dot, 4n for l2). Libraries that are not installed are left out with a note.
redlab's own rows come from `redlab bench --map ... --json` in the same job.
"""
import argparse
import json
import sys

from axis_compare import timed  # the same CUDA-event timing loop


def torch_rows(n, reps):
    try:
        import torch
    except ImportError as e:
        print(f"torch not available: {e}", file=sys.stderr)
        return []
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(n, device="cuda", generator=gen)
    y = torch.randn(n, device="cuda", generator=gen)
    event = lambda: torch.cuda.Event(enable_timing=True)
    rows = []
    for name, call, nbytes in [
        ("torch.dot", lambda: torch.dot(x, y), 8 * n),
        ("torch.linalg.vector_norm", lambda: torch.linalg.vector_norm(x), 4 * n),
    ]:
        per_call = timed(call, reps, torch.cuda.synchronize, event)
        graph_s = None
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    call()
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(20):
                    call()
            g.replay()
            torch.cuda.synchronize()
            graph_s = timed(g.replay, max(5, reps // 5), torch.cuda.synchronize, event) / 20
        except Exception as e:  # graphs are optional
            print(f"{name}: no CUDA graph ({e})", file=sys.stderr)
        rows.append({"library": name, "n": n, "per_call_s": per_call, "graph_s": graph_s,
                     "gbps": nbytes / per_call / 1e9,
                     "graph_gbps": nbytes / graph_s / 1e9 if graph_s else None})
    return rows


def cupy_rows(n, reps):
    try:
        import cupy as cp
    except ImportError as e:
        print(f"cupy not available: {e}", file=sys.stderr)
        return []
    rs = cp.random.RandomState(1)
    x = rs.standard_normal(n, dtype=cp.float32)
    y = rs.standard_normal(n, dtype=cp.float32)
    dot_kernel = cp.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "redlab_dot")
    l2_kernel = cp.ReductionKernel("T x", "T z", "x * x", "a + b", "z = sqrt(a)", "0", "redlab_l2")
    event = cp.cuda.Event
    sync = cp.cuda.Device().synchronize
    rows = []
    for name, call, nbytes in [
        ("cupy.dot", lambda: cp.dot(x, y), 8 * n),
        ("cupy ReductionKernel dot", lambda: dot_kernel(x, y), 8 * n),
        ("cupy.linalg.norm", lambda: cp.linalg.norm(x), 4 * n),
        ("cupy ReductionKernel l2", lambda: l2_kernel(x), 4 * n),
    ]:
        per_call = timed(call, reps, sync, event, cp.cuda.get_elapsed_time)
        rows.append({"library": name, "n": n, "per_call_s": per_call, "graph_s": None,
                     "gbps": nbytes / per_call / 1e9, "graph_gbps": None})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 28)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--json")
    a = p.parse_args()
    rows = torch_rows(a.n, a.reps) + cupy_rows(a.n, a.reps)
    print(f"{'library':<28} {'n':>11} {'per call':>11} {'GB/s':>8} {'graph':>11} {'GB/s':>8}")
    for r in rows:
        g = f"{r['graph_s'] * 1e6:9.1f}µs" if r["graph_s"] else "-"
        gg = f"{r['graph_gbps']:.0f}" if r["graph_gbps"] else "-"
        print(f"{r['library']:<28} {r['n']:>11} {r['per_call_s'] * 1e6:9.1f}µs {r['gbps']:8.0f} {g:>11} {gg:>8}")
    if a.json:
        with open(a.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
