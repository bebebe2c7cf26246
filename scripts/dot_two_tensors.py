#!/usr/bin/env python3
"""The dot product of two f32 torch CUDA tensors of 2^28 elements through redlab (read in
place by a table of their addresses), four times, then torch.dot once, for ncu to
profile one launch of each (scripts/ncu_dot_paths.sh, scripts/gpu_dot_table.sh)."""
import redlab
import torch

n = 1 << 28
t = torch.randn(n, device="cuda")
u = torch.randn(n, device="cuda")
dot = redlab.Reduction(map="x * y", combine="sum")
for _ in range(4):
    r = dot(t, u)
torch.cuda.synchronize()
print(float(r), float(torch.dot(t, u)))
