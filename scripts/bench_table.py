#!/usr/bin/env python3
"""Renders the results directory of scripts/gpu-bench.sh as Markdown (docs/benchmarks.md).

    python3 scripts/bench_table.py RESULTS_DIR > docs/benchmarks.md

Reads device.txt, command.txt, oilflow_<dtype>.json (vaisgplvm bench), frey_<dtype>/table6.json
(vaisgplvm reproduce --table 6), gpytorch.json (scripts/gpytorch_bench.py; optional) and
prefetch_off.json / prefetch_on.json (vaisgplvm bench --prefetch=false / true; optional),
frey_f64exact/table6.json (float64 under the exact-float32 settings; optional). Standard
library only.
"""
import glob
import json
import math
import os
import sys

PAPER_A100 = {("iwvi", 5): 1.46, ("iwvi", 25): 7.03, ("vais", 5): 1.53, ("vais", 25): 5.93}


def host(r):
    """The row's mean host-side seconds per iteration (input preparation), "-" in older results."""
    return "%.4f" % r["host_seconds_per_iteration"] if "host_seconds_per_iteration" in r else "-"


def read(path, default=None):
    try:
        with open(path) as f:
            return json.load(f) if path.endswith(".json") else f.read().strip()
    except (OSError, ValueError):
        return default


def main():
    res = sys.argv[1]
    gpy = {(r["dataset"], r["dtype"]): r for r in read(os.path.join(res, "gpytorch.json"), [])}
    out = ["# Benchmarks", ""]
    out.append("Device: %s. Produced by `%s` (see the script's header for the build steps); every "
               "time is the median of the timed iterations after one warm-up (ours: each step returns its loss "
               "to the host; GPyTorch: CUDA synchronised); seconds per epoch = median seconds per iteration x ceil(N / B)." % (read(os.path.join(res, "device.txt"), "?"),
                                                                       read(os.path.join(res, "command.txt"), "?")))
    out.append("")
    # A run may time some dtypes on one data set only (oilflow_<dtype>.json or frey_<dtype>/);
    # frey_f64exact/ is the float64 settings comparison below, not a dtype.
    oil = {os.path.basename(p)[len("oilflow_"):-len(".json")] for p in glob.glob(os.path.join(res, "oilflow_*.json"))}
    frey = {os.path.basename(os.path.dirname(p))[len("frey_"):] for p in glob.glob(os.path.join(res, "frey_*", "table6.json"))}
    dtypes = sorted(oil | (frey - {"f64exact"}))
    checks = []
    out += ["## Oilflow (N 1000, D 12, Q 10, M 50, K 5, batch 100)", "",
            "| dtype | method | s/iter | host s/iter | s/epoch | graph ops | GPyTorch MF s/iter | ours / GPyTorch MF |",
            "|---|---|---|---|---|---|---|---|"]
    for dt in dtypes:
        g = gpy.get(("oilflow", dt))
        for r in read(os.path.join(res, "oilflow_%s.json" % dt), []):
            per = math.ceil(1000 / r["batch"])
            ratio = r["median_iteration_seconds"] / g["median_iteration_seconds"] if g else None
            out.append("| %s | %s | %.4f | %s | %.3f | %d | %s | %s |" % (dt, r["method"], r["median_iteration_seconds"],
                       host(r), r["median_iteration_seconds"] * per, r.get("graph_ops", 0),
                       "%.4f" % g["median_iteration_seconds"] if g else "-", "%.2f" % ratio if ratio else "-"))
            if r["method"] == "vais" and ratio:
                checks.append("oilflow %s: VAIS K = 5 iteration / GPyTorch MF iteration = %.2f (target <= 1.5): %s"
                              % (dt, ratio, "met" if ratio <= 1.5 else "missed"))
    out += ["", "## Frey faces (N 1965, D 560, Q 20, M 50, batch 100, the Table 2 missing-data task)", "",
            "| dtype | method | K | s/iter | host s/iter | s/epoch | paper A100 s/epoch | paper / ours | GPyTorch MF s/iter |",
            "|---|---|---|---|---|---|---|---|---|"]
    for dt in dtypes:
        g = gpy.get(("frey", dt))
        for r in read(os.path.join(res, "frey_%s" % dt, "table6.json"), {}).get("rows", []):
            paper = PAPER_A100.get((r["method"], r["k"]))
            speed = paper / r["seconds_per_epoch"] if paper else None
            out.append("| %s | %s | %s | %.4f | %s | %.3f | %s | %s | %s |" % (dt, r["method"], r["k"] or "-", r["median_iteration_seconds"],
                       host(r), r["seconds_per_epoch"], paper or "-", "%.1fx" % speed if speed else "-",
                       "%.4f" % g["median_iteration_seconds"] if g else "-"))
            if speed:
                checks.append("Frey %s %s K = %d: %.1fx faster per epoch than the paper's A100 (target >= 10x): %s"
                              % (dt, r["method"], r["k"], speed, "met" if speed >= 10 else "missed"))
            if g and r["method"] == "vais" and r["k"] == 5:
                ratio = r["median_iteration_seconds"] / g["median_iteration_seconds"]
                checks.append("Frey %s: VAIS K = 5 iteration / GPyTorch MF iteration = %.2f (target <= 1.5): %s"
                              % (dt, ratio, "met" if ratio <= 1.5 else "missed"))
    pre = [(r, name) for name in ("off", "on") for r in read(os.path.join(res, "prefetch_%s.json" % name), [])]
    if pre:
        out += ["", "## Input prefetch (Frey, float64, K 5, batch 100; `bench --prefetch=false` / `true`)", "",
                "Host s/iter is the time a step waited for its inputs before its graph ran; without prefetch it is "
                "their whole cost (batch, noise, tensors), with it only what the background goroutine had not "
                "finished.", "",
                "| method | prefetch | s/iter | host s/iter |", "|---|---|---|---|"]
        for r, name in pre:
            out.append("| %s | %s | %.4f | %s |" % (r["method"], name, r["median_iteration_seconds"], host(r)))
    ab = read(os.path.join(res, "frey_f64exact", "table6.json"), {}).get("rows", [])
    if ab:
        base = {(r["method"], r["k"]): r for r in read(os.path.join(res, "frey_float64", "table6.json"), {}).get("rows", [])}
        out += ["", "## float64 with and without the exact-float32 settings (Frey, batch 100)", "",
                "XLA's defaults: the float64 rows above (the command adds `,f64`). Exact-float32 settings: "
                "`NVIDIA_TF32_OVERRIDE=0 XLA_FLAGS=--xla_gpu_enable_triton_gemm=false` in the environment, as the "
                "backend set them for float64 too from b9e33fb to 4773487.", "",
                "| method | K | s/iter, XLA defaults | s/iter, exact-float32 settings | settings / defaults |",
                "|---|---|---|---|---|"]
        for r in ab:
            b = base.get((r["method"], r["k"]))
            out.append("| %s | %s | %s | %.4f | %s |" % (r["method"], r["k"] or "-",
                       "%.4f" % b["median_iteration_seconds"] if b else "-", r["median_iteration_seconds"],
                       "%.2f" % (r["median_iteration_seconds"] / b["median_iteration_seconds"]) if b else "-"))
    if gpy:
        r = next(iter(gpy.values()))
        out += ["", "GPyTorch: %s, torch %s, its tutorial Bayesian GPLVM (one GP per output with its own M inducing "
                "inputs, whitened, Gaussian latents, VariationalELBO, Adam)." % (r["library"], r["torch"])]
    else:
        out += ["", "GPyTorch: no results (not run, or it failed)."]
    out += ["", "## Targets (issue 5)", ""] + ["- " + c for c in checks] + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
