#!/usr/bin/env python3
"""Times GPyTorch's Bayesian GPLVM (GPyTorch's own tutorial model: variational Gaussian latents,
whitened SVGP with learned inducing inputs, one GP per output, Gaussian likelihood, VariationalELBO)
on oilflow (N 1000, D 12, Q 10) and Frey faces (N 1965, D 560, Q 20, pixels on [0, 1]) with M = 50
inducing points and mini-batches of B points, in float64 and float32, on CUDA when available.

Prints one JSON list: per (dataset, dtype) the median seconds of one training iteration (Adam step
on one mini-batch, after warm-up, CUDA synchronised) and the seconds per epoch = median x ceil(N/B).

    python3 scripts/gpytorch_bench.py [--data DIR] [--batch 100] [--iters 20] [--warmup 5]

DIR (default: the repository's data/ folder) holds oilflow/oilflow.csv.gz and frey/frey_rawface.u8.gz,
the gzip-compressed copies the Go module embeds (data/README.md).
Part of scripts/gpu-bench.sh; it needs torch and gpytorch and is not run by the Go tests.
"""
import argparse
import gzip
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import gpytorch
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean
from gpytorch.mlls import VariationalELBO
from gpytorch.models.gplvm.bayesian_gplvm import BayesianGPLVM
from gpytorch.models.gplvm.latent_variable import VariationalLatentVariable
from gpytorch.priors import NormalPrior
from gpytorch.variational import CholeskyVariationalDistribution, VariationalStrategy


def load(data_dir, name):
    if name == "oilflow":
        return np.loadtxt(os.path.join(data_dir, "oilflow", "oilflow.csv.gz"), delimiter=",", skiprows=1)
    with gzip.open(os.path.join(data_dir, "frey", "frey_rawface.u8.gz"), "rb") as f:
        raw = np.frombuffer(f.read(), dtype=np.uint8)
    return raw.reshape(1965, 560).astype(np.float64) / 255.0


class GPLVM(BayesianGPLVM):
    """GPyTorch's tutorial Bayesian GPLVM: q(u_d) per output with its own inducing inputs [D, M, Q]."""

    def __init__(self, y, q, m):
        n, d = y.shape
        self.n = n
        self.batch_shape = batch = torch.Size([d])
        z = torch.randn(d, m, q, dtype=y.dtype, device=y.device)
        q_u = CholeskyVariationalDistribution(m, batch_shape=batch)
        q_f = VariationalStrategy(self, z, q_u, learn_inducing_locations=True)
        # PCA initialisation of the latent means, as ours.
        yc = y - y.mean(0)
        _, _, v = torch.linalg.svd(yc, full_matrices=False)
        x_init = torch.nn.Parameter(yc @ v[:q].T)
        prior = NormalPrior(torch.zeros(n, q, dtype=y.dtype, device=y.device), torch.ones(n, q, dtype=y.dtype, device=y.device))
        x = VariationalLatentVariable(n, d, q, x_init, prior)
        super().__init__(x, q_f)
        self.mean_module = ZeroMean()
        self.covar_module = ScaleKernel(RBFKernel(ard_num_dims=q))

    def forward(self, x):
        return MultivariateNormal(self.mean_module(x), self.covar_module(x))


def time_run(y, q, m, batch, iters, warmup, seed):
    torch.manual_seed(seed)
    model = GPLVM(y, q, m).to(y.device, y.dtype)
    lik = GaussianLikelihood(batch_shape=model.batch_shape).to(y.device, y.dtype)
    mll = VariationalELBO(lik, model, num_data=y.shape[0])
    opt = torch.optim.Adam([{"params": model.parameters()}, {"params": lik.parameters()}], lr=0.02)
    gen = torch.Generator().manual_seed(seed)
    sync = torch.cuda.synchronize if y.is_cuda else (lambda: None)
    times = []
    for i in range(warmup + iters):
        idx = torch.randperm(y.shape[0], generator=gen)[:batch].to(y.device)
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        sample = model.sample_latent_variable()
        out = model(sample[idx])
        loss = -mll(out, y[idx].T).sum()
        loss.backward()
        opt.step()
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), float(loss.item()) / batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--datasets", default="oilflow,frey")
    ap.add_argument("--dtypes", default="float64,float32",
                    help="comma-separated: float64, float32 (TF32 matmuls off) and tf32 (float32 with TF32 matmuls)")
    a = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    rows = []
    for ds in a.datasets.split(","):
        q = {"oilflow": 10, "frey": 20}[ds]
        for dt in a.dtypes.split(","):
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            y = torch.tensor(load(a.data, ds), dtype=torch.float32 if dt == "tf32" else getattr(torch, dt), device=dev)
            med, mn, loss = time_run(y, q, a.m, a.batch, a.iters, a.warmup, 1)
            per = math.ceil(y.shape[0] / a.batch)
            rows.append({"library": "gpytorch " + gpytorch.__version__, "torch": torch.__version__, "device": name,
                         "dataset": ds, "method": "mf", "dtype": dt, "n": y.shape[0], "d": y.shape[1], "q": q, "m": a.m,
                         "batch": a.batch, "median_iteration_seconds": med, "min_iteration_seconds": mn,
                         "seconds_per_epoch": med * per, "iterations_per_epoch": per, "timed_iterations": a.iters,
                         "neg_elbo_per_point_last": loss})
            print(f"{ds} {dt}: {med:.4f} s/iter", file=sys.stderr)
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
