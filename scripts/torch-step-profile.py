#!/usr/bin/env python3
"""PyTorch's non-private training step, op by op (torch.profiler), to set beside dpdl4j's own profile
(scripts/jfr-breakdown.py of `bench dpsgd --modes engine`).

    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 \
        OMP_NUM_THREADS=2 /usr/bin/python3 scripts/torch-step-profile.py --model standard-cnn --batch 256 --steps 60

(the environment of the side-by-side benchmark's PyTorch runs: without the OpenMP OpenBLAS, aten::mm alone is ten times
slower and the step a third slower.)

Models: standard-cnn (Opacus's MNIST SampleConvNet, 26,010 parameters, as dpdl4j's standard-cnn) and cifar-cnn
(Papernot et al. 2020's tanh CNN for CIFAR-10). Inputs are random (the speed does not depend on the pixels); plain SGD,
cross-entropy, as the side-by-side benchmark's non-private mode. Needs Debian's python3-torch.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def build(name):
    if name == "standard-cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 8, stride=2, padding=3), nn.ReLU(), nn.MaxPool2d(2, 1),
                             nn.Conv2d(16, 32, 4, stride=2), nn.ReLU(), nn.MaxPool2d(2, 1), nn.Flatten(),
                             nn.Linear(512, 32), nn.ReLU(), nn.Linear(32, 10)), (1, 28, 28)
    if name == "cifar-cnn":
        layers, c_in = [], 3
        for c in (32, 64, 128):
            layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.Tanh(), nn.Conv2d(c, c, 3, padding=1), nn.Tanh(), nn.MaxPool2d(2, 2)]
            c_in = c
        layers += [nn.Flatten(), nn.Linear(128 * 16, 128), nn.Tanh(), nn.Linear(128, 10)]
        return nn.Sequential(*layers), (3, 32, 32)
    raise SystemExit("--model must be standard-cnn or cifar-cnn, got " + name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="standard-cnn")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=60, help="profiled steps (default 60)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first (default 20)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model, shape = build(a.model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(a.batch, *shape)
    y = torch.randint(0, 10, (a.batch,))

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    seconds = time.perf_counter() - t0
    print("%s, batch %d, %d threads: %.2f ms/step, %.0f examples/s (unprofiled)"
          % (a.model, a.batch, a.threads, 1e3 * seconds / a.steps, a.batch * a.steps / seconds))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(a.steps):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    print("self CPU time by op over %d profiled steps (%.2f ms/step in all):" % (a.steps, total / 1e3 / a.steps))
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:a.top]:
        print("  %5.1f %%  %8.3f ms/step  %s" % (100.0 * e.self_cpu_time_total / total, e.self_cpu_time_total / 1e3 / a.steps, e.key))


if __name__ == "__main__":
    main()
