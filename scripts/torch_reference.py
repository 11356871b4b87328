#!/usr/bin/env python3
"""A PyTorch reference of the Bayesian GPLVM's three bounds (MF, IWVI, VAIS), float64, written from
the paper's equations and the model's definition (docs/design.md), not from the Go code:

* the expected log-likelihood l_n(h) = sum_d E_q(f_d)[log N(x_nd | f_d(h), s^2)] of a whitened
  sparse GP (u = L v, Kuu + jitter * kernel variance * I = L L^T, q(v_d) = N(m_d, S_d S_d^T)),
  SE-ARD kernel, computed output by output with triangular solves;
* MF: (1/S) sum_s l_n(h_s) - KL(q0(h_n) || N(0, I)), h_s = a_n + L_n eps_s;
* IWVI: log (1/K) sum_k p(x_n, h_k) / q0(h_k);
* VAIS: log (1/S) sum_s of the AIS weight
      p(x_n, h_K) / q0(h_0) * prod_k B_k(h_{k-1} | h_k) / F_k(h_k | h_{k-1}),
  F_k the Langevin move under pi_k = q0^(1 - beta_k) p(x_n, .)^beta_k and B_k its time reversal,
  both written as Gaussian densities N(. | mean, 2 eta_k I) (not through the algebra of Eq. 15),
  optionally in q0's whitened coordinates (preconditioned) and with the tamed drift
  g / (1 + eta |g|), the two options the Go library uses by default;

each minus KL(q(u) || p(u)) summed over outputs.

    python3 scripts/torch_reference.py check IN.json        # values and gradients, JSON on stdout
    python3 scripts/torch_reference.py bench --case oilflow-vais-k5 --threads 2 --iters 7
    python3 scripts/torch_reference.py compare --vaisgplvm BIN --rounds 3 --threads 1,2

check: IN.json holds the model's values (x, z, q_mu, q_sqrt, lengthscales, kernel_variance,
noise_variance, jitter, a, scale) and cases (method, eps0, chain noise, betas, etas, options);
the answer gives, per case, the ELBO, the per-point terms and the gradients of the ELBO with
respect to Z, q_mu and the q0 means a, and the ELBO of the faster form the timing uses
(GP.expected_loglik_fast). The Go test vaisgplvm/train/torch_reference_test.go writes
IN.json from a trained model and compares (it skips, saying so, where torch is not installed, and
fails instead when VAISGPLVM_REQUIRE_TORCH=1, as in .ci/run).

bench: a training iteration (bound, backward pass, Adam step) of the same model in PyTorch on the
repository's embedded data (data/oilflow, data/frey), median seconds per iteration as JSON.
compare: ours (vaisgplvm bench, GOMAXPROCS = threads) and torch's (torch.set_num_threads) run
alternately, a markdown table of medians and ratios (docs/cpu-performance.md).
"""
import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch

LOG_2PI = math.log(2 * math.pi)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------
# The model.

def se_ard(x1, x2, lengthscales, variance):
    """k(x1, x2) = variance exp(-0.5 sum_q ((x1_q - x2_q) / l_q)^2): [N1, Q], [N2, Q] -> [N1, N2]."""
    d = (x1[:, None, :] - x2[None, :, :]) / lengthscales
    return variance * torch.exp(-0.5 * (d * d).sum(-1))


def std_normal_logpdf(z):
    """log N(z | 0, I) over the last axis."""
    return -0.5 * (z * z).sum(-1) - 0.5 * z.shape[-1] * LOG_2PI


class GP:
    """The whitened sparse GP at fixed values: Z [M, Q], q_mu [M, D], q_sqrt [D or 1, M, M] (lower
    triangular, one shared root when its leading dimension is 1), SE-ARD hyperparameters, noise."""

    def __init__(self, z, q_mu, q_sqrt, lengthscales, kernel_variance, noise_variance, jitter, fast=False):
        self.z, self.q_mu, self.q_sqrt = z, q_mu, torch.tril(q_sqrt)
        self.fast = fast
        self.ls, self.kvar, self.noise = lengthscales, kernel_variance, noise_variance
        m = z.shape[0]
        kuu = se_ard(z, z, self.ls, self.kvar) + jitter * self.kvar * torch.eye(m, dtype=z.dtype)
        self.chol = torch.linalg.cholesky(kuu)

    def ell(self, x, mask, h):
        """l_n(h): expected_loglik_fast if the GP was built with fast=True, else expected_loglik."""
        return self.expected_loglik_fast(x, mask, h) if self.fast else self.expected_loglik(x, mask, h)

    def expected_loglik(self, x, mask, h):
        """l_n(h) for h [S, B, Q] and data x [B, D] (mask [B, D] or None): [S, B], output by output
        (the definition: the reference form)."""
        s, b, q = h.shape
        d = x.shape[1]
        hf = h.reshape(s * b, q)
        a = torch.linalg.solve_triangular(self.chol, se_ard(self.z, hf, self.ls, self.kvar), upper=False)
        mean = a.T @ self.q_mu  # [SB, D]
        resid = self.kvar - (a * a).sum(0)  # [SB]: k(h, h) - k^T Kuu^-1 k
        # The variance of f_d(h) adds |S_d^T L^-1 k(Z, h)|^2 for each output d.
        sa = torch.einsum("dmk,mn->dnk", self.q_sqrt, a)
        var = resid[None, :] + (sa * sa).sum(-1)  # [D or 1, SB]
        var = var.expand(d, s * b).T  # [SB, D]
        xs = x.repeat(s, 1)
        terms = -0.5 * LOG_2PI - 0.5 * torch.log(self.noise) - ((xs - mean) ** 2 + var) / (2 * self.noise)
        if mask is not None:
            terms = terms * mask.repeat(s, 1)
        return terms.sum(-1).reshape(s, b)

    def expected_loglik_fast(self, x, mask, h):
        """expected_loglik in the form a PyTorch user would write for speed (the timing's form): the
        kernel through one product, the summed variance sum_d var_nd = D resid_n + k_n^T L^-T Sigma
        L^-1 k_n with Sigma = sum_d S_d S_d^T (or count_n (resid_n + |S^T L^-1 k_n|^2) for one
        shared root and a mask), no [D, SB, M] tensor."""
        s, b, q = h.shape
        d = x.shape[1]
        hf = h.reshape(s * b, q) / self.ls
        zs = self.z / self.ls
        r2 = (hf * hf).sum(-1)[None, :] - 2 * zs @ hf.T + (zs * zs).sum(-1)[:, None]
        a = torch.linalg.solve_triangular(self.chol, self.kvar * torch.exp(-0.5 * r2), upper=False)  # [M, SB]
        mean = a.T @ self.q_mu
        resid = self.kvar - (a * a).sum(0)
        sq = ((x.repeat(s, 1) - mean) ** 2)
        if mask is None:
            sigma = torch.einsum("dmk,djk->mj", self.q_sqrt, self.q_sqrt)
            if self.q_sqrt.shape[0] == 1:
                sigma = sigma * d
            varsum = d * resid + ((sigma @ a) * a).sum(0)
            count = torch.full_like(resid, d)
        else:
            if self.q_sqrt.shape[0] != 1:
                raise ValueError("the fast form takes a mask only with one shared root of q(u)")
            ms = mask.repeat(s, 1)
            sq = sq * ms
            count = ms.sum(-1)
            sa = self.q_sqrt[0].T @ a  # one shared root
            varsum = count * (resid + (sa * sa).sum(0))
        ll = -0.5 * count * (LOG_2PI + torch.log(self.noise)) - (sq.sum(-1) + varsum) / (2 * self.noise)
        return ll.reshape(s, b)

    def kl(self, d):
        """KL(q(u) || p(u)) = sum_d 0.5 (tr(S_d S_d^T) + |m_d|^2 - M - log|S_d S_d^T|) (whitened)."""
        m = self.z.shape[0]
        per = (self.q_sqrt ** 2).sum((-1, -2)) - torch.log(torch.diagonal(self.q_sqrt, dim1=-2, dim2=-1) ** 2).sum(-1)
        if self.q_sqrt.shape[0] == 1:
            per = per * d
        return 0.5 * (per.sum() + (self.q_mu ** 2).sum() - m * d)


class Q0:
    """q0(h_n) = N(a_n, L_n L_n^T): a [B, Q], L [B, Q, Q] lower triangular."""

    def __init__(self, a, scale):
        self.a, self.L = a, scale
        self.logdet = torch.log(torch.diagonal(scale, dim1=-2, dim2=-1)).sum(-1)  # log|L_n| [B]

    def sample(self, eps):
        return self.a[None] + torch.einsum("bij,sbj->sbi", self.L, eps)

    def log_prob(self, h):
        diff = (h - self.a[None]).permute(1, 2, 0)  # [B, Q, S]
        z = torch.linalg.solve_triangular(self.L, diff, upper=False).permute(2, 0, 1)
        return std_normal_logpdf(z) - self.logdet[None]

    def kl_to_prior(self):
        q = self.a.shape[1]
        return 0.5 * ((self.L ** 2).sum((-1, -2)) + (self.a ** 2).sum(-1) - q - 2 * self.logdet)


def log_mean_exp(x):
    return torch.logsumexp(x, 0) - math.log(x.shape[0])


# ---------------------------------------------------------------------------------------------
# The bounds: per-point terms [B]; the ELBO is (N/B) sum_n L_n - KL(q(u) || p(u)).

def mf(gp, q0, x, mask, eps0):
    ll = gp.ell(x, mask, q0.sample(eps0))
    return ll.mean(0) - q0.kl_to_prior()


def iwvi(gp, q0, x, mask, eps0):
    h = q0.sample(eps0)
    logw = gp.ell(x, mask, h) + std_normal_logpdf(h) - q0.log_prob(h)
    return log_mean_exp(logw)


def gaussian_logpdf(y, mean, var):
    """log N(y | mean, var I) over the last axis; var broadcasts like y without its last axis."""
    q = y.shape[-1]
    return -0.5 * ((y - mean) ** 2).sum(-1) / var - 0.5 * q * torch.log(2 * math.pi * var)


def vais(gp, q0, x, mask, eps0, chain, betas, etas, precondition, tamed, stop_grad):
    """The AIS weight of chains started at q0 (eps0 [S, B, Q]) moved by K Langevin steps with noise
    chain [K, S, B, Q]; returns log-mean-exp over the S chains: [B]."""
    if precondition:  # the chain runs in z = L_n^-1 (h - a_n)
        def log_p(z):
            h = q0.sample(z)
            return gp.ell(x, mask, h) + std_normal_logpdf(h)

        def log_ref(z):
            return std_normal_logpdf(z) - q0.logdet[None]

        state = eps0.clone().requires_grad_(True)
    else:
        def log_p(h):
            return gp.ell(x, mask, h) + std_normal_logpdf(h)

        log_ref = q0.log_prob
        state = q0.sample(eps0)
        if not state.requires_grad:
            state.requires_grad_(True)

    def evaluate(y):
        """log p(x, y), log q0(y) and their gradients in y: each state is evaluated once (K + 1
        evaluations per chain, as in the Go library)."""
        lp, lr = log_p(y), log_ref(y)
        gp_ = torch.autograd.grad(lp.sum(), y, create_graph=not stop_grad, retain_graph=True)[0]
        gr = torch.autograd.grad(lr.sum(), y, create_graph=not stop_grad, retain_graph=True)[0]
        return lp, lr, gp_, gr

    def drift(beta, ev, eta):
        g = beta * ev[2] + (1 - beta) * ev[3]
        if tamed:
            g = g / (1 + eta * torch.sqrt((g * g).sum(-1, keepdim=True) + 1e-30))
        return g

    cur = evaluate(state)
    logw = -cur[1]
    for k in range(chain.shape[0]):
        beta, eta = betas[k], etas[k]
        forward_mean = state + eta * drift(beta, cur, eta)
        new = forward_mean + torch.sqrt(2 * eta) * chain[k]
        cur = evaluate(new)
        backward_mean = new + eta * drift(beta, cur, eta)
        logw = logw + gaussian_logpdf(state, backward_mean, 2 * eta) - gaussian_logpdf(new, forward_mean, 2 * eta)
        state = new
    logw = logw + cur[0]
    return log_mean_exp(logw)


# ---------------------------------------------------------------------------------------------
# check: values and gradients at given parameters and noise.

def tensor(v):
    return torch.tensor(v, dtype=torch.float64)


def check(path):
    with open(path) as f:
        spec = json.load(f)
    x = tensor(spec["x"])
    n, d = x.shape
    out = []
    for case in spec["cases"]:
        ans = {}
        for fast in (False, True):
            z = tensor(spec["z"]).requires_grad_(True)
            q_mu = tensor(spec["q_mu"]).requires_grad_(True)
            a = tensor(spec["a"]).requires_grad_(True)
            gp = GP(z, q_mu, tensor(spec["q_sqrt"]), tensor(spec["lengthscales"]), tensor(spec["kernel_variance"]),
                    tensor(spec["noise_variance"]), spec["jitter"], fast=fast)
            q0 = Q0(a, tensor(spec["scale"]))
            eps0 = tensor(case["eps0"])
            if case["method"] == "mf":
                per = mf(gp, q0, x, None, eps0)
            elif case["method"] == "iwvi":
                per = iwvi(gp, q0, x, None, eps0)
            elif case["method"] == "vais":
                per = vais(gp, q0, x, None, eps0, tensor(case["chain"]), tensor(case["betas"]), tensor(case["etas"]),
                           case["precondition"], case["tamed"], case["stop_grad"])
            else:
                raise SystemExit("unknown method %r" % case["method"])
            elbo = per.sum() - gp.kl(d)
            if fast:  # the timing's form: its value only
                ans["elbo_fast"] = elbo.item()
                continue
            gz, gmu, ga = torch.autograd.grad(elbo, [z, q_mu, a])
            ans.update({"name": case["name"], "elbo": elbo.item(), "per_point": per.tolist(),
                        "grad_z": gz.tolist(), "grad_q_mu": gmu.tolist(), "grad_a": ga.tolist()})
        out.append(ans)
    json.dump({"torch": torch.__version__, "cases": out}, sys.stdout)


# ---------------------------------------------------------------------------------------------
# bench: a training iteration in PyTorch, parameterised as the Go model is (softplus for positive
# values, a lower-triangular q0 root with a softplus diagonal), Adam with lr 0.02.

CASES = {  # name: dataset, method, K, S (MF samples or VAIS chains), batch, stop_grad
    "oilflow-mf": ("oilflow", "mf", 5, 1, 0, False),
    "oilflow-iwvi-k5": ("oilflow", "iwvi", 5, 1, 0, False),
    "oilflow-vais-k5": ("oilflow", "vais", 5, 1, 0, False),
    "oilflow-vais-k25": ("oilflow", "vais", 25, 1, 0, False),
    "frey-vais-k25-b100": ("frey", "vais", 25, 1, 100, True),
}
Q_OF = {"oilflow": 10, "frey": 20}


def load(name):
    if name == "oilflow":
        with gzip.open(os.path.join(ROOT, "data", "oilflow", "oilflow.csv.gz"), "rt") as f:
            rows = [[float(v) for v in line.split(",")] for line in f.read().splitlines()[1:]]
        return tensor(rows), None
    with gzip.open(os.path.join(ROOT, "data", "frey", "frey_rawface.u8.gz"), "rb") as f:
        raw = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
    x = raw.reshape(1965, 560).to(torch.float64) / 255.0
    # Table 2's task: 5% of the images lose 75% of their pixels (a seeded draw; the Go bench's
    # draw differs, the cost does not).
    g = torch.Generator().manual_seed(1)
    mask = torch.ones_like(x)
    for i in torch.randperm(1965, generator=g)[: round(0.05 * 1965)]:
        mask[i, torch.randperm(560, generator=g)[: round(0.75 * 560)]] = 0
    return x * mask, mask


def softplus_inv(v):
    return math.log(math.expm1(v))


class Trainable(torch.nn.Module):
    def __init__(self, x, q, m, shared_sqrt, seed=1):
        super().__init__()
        n, d = x.shape
        g = torch.Generator().manual_seed(seed)
        xc = x - x.mean(0)
        _, _, v = torch.linalg.svd(xc, full_matrices=False)
        a0 = xc @ v[:q].T
        a0 = a0 / a0.std(0)
        dvar = x.var(0).mean().item()
        self.a = torch.nn.Parameter(a0)
        self.raw_scale = torch.nn.Parameter(torch.eye(q, dtype=x.dtype).repeat(n, 1, 1) * softplus_inv(0.1))
        self.z = torch.nn.Parameter(a0[torch.randperm(n, generator=g)[:m]].clone())
        self.q_mu = torch.nn.Parameter(torch.zeros(m, d, dtype=x.dtype))
        self.q_sqrt = torch.nn.Parameter(torch.eye(m, dtype=x.dtype).repeat(1 if shared_sqrt else d, 1, 1))
        self.raw_ls = torch.nn.Parameter(torch.full((q,), softplus_inv(1.0), dtype=x.dtype))
        self.raw_kvar = torch.nn.Parameter(torch.tensor(softplus_inv(dvar), dtype=x.dtype))
        self.raw_noise = torch.nn.Parameter(torch.tensor(softplus_inv(0.1 * dvar), dtype=x.dtype))

    def parts(self, idx):
        sp = torch.nn.functional.softplus
        gp = GP(self.z, self.q_mu, self.q_sqrt, sp(self.raw_ls), sp(self.raw_kvar), sp(self.raw_noise) + 1e-6, 1e-6,
                fast=True)
        raw = self.raw_scale[idx]
        scale = torch.tril(raw, -1) + torch.diag_embed(sp(torch.diagonal(raw, dim1=-2, dim2=-1)))
        return gp, Q0(self.a[idx], scale)


def bench(case, threads, iters, warmup=1):
    torch.set_num_threads(threads)
    dataset, method, k, s, batch, stop_grad = CASES[case]
    x, mask = load(dataset)
    n, d = x.shape
    q = Q_OF[dataset]
    model = Trainable(x, q, 50, shared_sqrt=mask is not None)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    betas = torch.arange(1, k + 1, dtype=torch.float64) / k
    etas = torch.full((k,), 0.25 / k, dtype=torch.float64)
    g = torch.Generator().manual_seed(2)
    times = []
    for it in range(warmup + iters):
        t0 = time.perf_counter()
        idx = torch.arange(n) if batch == 0 else torch.randperm(n, generator=g)[:batch]
        b = len(idx)
        xb, mb = x[idx], None if mask is None else mask[idx]
        gp, q0 = model.parts(idx)
        if method == "mf":
            per = mf(gp, q0, xb, mb, torch.randn(s, b, q, generator=g, dtype=x.dtype))
        elif method == "iwvi":
            per = iwvi(gp, q0, xb, mb, torch.randn(k, b, q, generator=g, dtype=x.dtype))
        else:
            per = vais(gp, q0, xb, mb, torch.randn(s, b, q, generator=g, dtype=x.dtype),
                       torch.randn(k, s, b, q, generator=g, dtype=x.dtype), betas, etas, True, True, stop_grad)
        loss = -(per.sum() * n / b - gp.kl(d)) / n
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it >= warmup:
            times.append(time.perf_counter() - t0)
    return {"case": case, "threads": threads, "median_iteration_seconds": statistics.median(times),
            "min_iteration_seconds": min(times), "timed_iterations": iters, "loss_last": loss.item(),
            "torch": torch.__version__}


# ---------------------------------------------------------------------------------------------
# compare: ours and torch's, alternating.

def ours(binary, case, threads, iters):
    dataset, method, k, s, batch, _ = CASES[case]
    env = dict(os.environ, GOMAXPROCS=str(threads))
    cmd = [binary, "bench", "--dataset", dataset, "--methods", method, "--k", str(k), "--batch", str(batch),
           "--iters", str(iters)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)[0]["median_iteration_seconds"]


def theirs(case, threads, iters):
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "bench", "--case", case, "--threads",
                          str(threads), "--iters", str(iters)], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)["median_iteration_seconds"]


def compare(binary, rounds, threads_list, iters, cases):
    print("| run | threads | vaisgplvm s/iter | torch s/iter | torch / vaisgplvm |")
    print("|---|---|---|---|---|")
    for case in cases:
        for threads in threads_list:
            a, b = [], []
            for _ in range(rounds):
                a.append(ours(binary, case, threads, iters))
                b.append(theirs(case, threads, iters))
            ma, mb = statistics.median(a), statistics.median(b)
            print("| %s | %d | %.4f | %.4f | %.2f |" % (case, threads, ma, mb, mb / ma), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("input")
    b = sub.add_parser("bench")
    b.add_argument("--case", choices=sorted(CASES), required=True)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--iters", type=int, default=7)
    m = sub.add_parser("compare")
    m.add_argument("--vaisgplvm", required=True, help="the vaisgplvm binary (built with GOEXPERIMENT=simd)")
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--threads", default="1,2")
    m.add_argument("--iters", type=int, default=7)
    m.add_argument("--cases", default=",".join(CASES))
    args = p.parse_args()
    torch.set_default_dtype(torch.float64)
    if args.cmd == "check":
        check(args.input)
    elif args.cmd == "bench":
        json.dump(bench(args.case, args.threads, args.iters), sys.stdout)
        print()
    else:
        compare(args.vaisgplvm, args.rounds, [int(t) for t in args.threads.split(",")], args.iters,
                args.cases.split(","))


if __name__ == "__main__":
    main()
