#!/usr/bin/python3
"""Plots of the H200 benchmark CSVs in this folder (tpmg-bench --csv, written by
tests/gpu/bench.sh). Needs matplotlib (Debian: python3-matplotlib); nothing in
the build or the tests uses it.

    /usr/bin/python3 doc/benchmarks/plot.py [folder]

Writes, into the folder:
  h200-smoother.png   smoothing-step throughput per kernel and degree (GDoF/s)
  h200-operator.png   operator apply, transfer and V-cycle throughput
  h200-roofs.png      the fastest fused smoothing step's share of the FP and
                      shared-memory roofs
  h200-breakdown.png  GMRES solve time by component (paper Figs. 11/12)
  gpu-mpi-4xh200.png  weak and strong scaling on 4 H200 (gpu-mpi-4xh200.jsonl),
                      with the 4-GPU efficiency of the overlapped smoothers
                      (gpu-mpi-4xh200-overlap.jsonl) as stars
  h200-brick.png      the 3D BRICK operator of 4d72c81, 3a6120d and the early
                      store of a per degree, measured in one call
                      (h200-brick-ab.csv), against issue 15's targets
"""
import csv
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def value(row, key):
    text = row.get(key, "")
    return float(text) if text not in ("", None) else float("nan")


blocks = {}
for dim in (2, 3):
    for precision in ("float", "double"):
        path = os.path.join(folder, f"h200-bench-{dim}d-{precision}.csv")
        if os.path.exists(path):
            blocks[(dim, precision)] = read(path)

kernels = [("basic", "o", "C0", "BASIC"), ("constant", "s", "C1", "CONSTANT"),
           ("tiled", "D", "C2", "TILED"), ("thread", "^", "C3", "THREAD"),
           ("brick", "*", "C5", "BRICK")]
variants = [("global", ":"), ("separate", "--"), ("fused", "-")]

if blocks:
    keys = sorted(blocks)
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 4), squeeze=False)
    for ax, key in zip(axes[0], keys):
        rows = blocks[key]
        degrees = [int(r["degree"]) for r in rows]
        for kernel, marker, colour, label in kernels:
            for variant, style in variants:
                ys = [value(r, f"smooth_{variant}_{kernel}_gdofs") for r in rows]
                if all(y != y for y in ys):
                    continue
                ax.plot(degrees, ys, style, marker=marker, color=colour,
                        label=f"{variant} {label}")
        ax.set_title(f"{key[0]}D {key[1]}: one smoothing step")
        ax.set_xlabel("degree k")
        ax.set_ylabel("GDoF/s")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "h200-smoother.png"), dpi=120)

    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 4), squeeze=False)
    for ax, key in zip(axes[0], keys):
        rows = blocks[key]
        degrees = [int(r["degree"]) for r in rows]
        for kernel, marker, colour, label in kernels:
            ys = [value(r, f"apply_{kernel}_gdofs") for r in rows]
            if not all(y != y for y in ys):
                ax.plot(degrees, ys, marker=marker, color=colour, label=f"apply {label}")
        ax.plot(degrees, [value(r, "transfer_gdofs") for r in rows], "--", color="C4", label="P+R")
        ax.plot(degrees, [value(r, "vcycle_gdofs") for r in rows], "k-", label="V-cycle")
        ax.set_title(f"{key[0]}D {key[1]}")
        ax.set_xlabel("degree k")
        ax.set_ylabel("GDoF/s")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "h200-operator.png"), dpi=120)

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for key in keys:
        rows = blocks[key]
        degrees = [int(r["degree"]) for r in rows]
        label = f"{key[0]}D {key[1]}"
        axes[0].plot(degrees, [100 * value(r, "fused_best_fp_fraction") for r in rows],
                     marker="o", label=label)
        axes[1].plot(degrees, [100 * value(r, "fused_best_shared_fraction") for r in rows],
                     marker="o", label=label)
    axes[0].set_title("fastest fused step: % of the FMA roof")
    axes[1].set_title("% of the shared-memory roof (own traffic)")
    for ax in axes:
        ax.set_xlabel("degree k")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "h200-roofs.png"), dpi=120)

breakdowns = sorted(glob.glob(os.path.join(folder, "breakdown-q*.csv")))
if breakdowns:
    components = ["levels < L", "level L smooth", "level L mat-vec",
                  "level L restrict & prolongate", "level L vector update", "GMRES mat-vec",
                  "GMRES vector ops"]
    rows = [read(p)[0] for p in breakdowns]
    labels = [f"Q{r['degree']} L{r['level']}\n{r['arithmetic']}, {r['iterations']} it" for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    bottom = [0.0] * len(rows)
    bottom_share = [0.0] * len(rows)
    for c in components:
        ys = [value(r, f"{c}_s") for r in rows]
        total = [value(r, "model_s") for r in rows]
        share = [100 * y / t for y, t in zip(ys, total)]
        axes[0].bar(labels, ys, bottom=bottom, label=c)
        axes[1].bar(labels, share, bottom=bottom_share, label=c)
        bottom = [b + y for b, y in zip(bottom, ys)]
        bottom_share = [b + y for b, y in zip(bottom_share, share)]
    axes[0].plot(labels, [value(r, "solve_s") for r in rows], "k*", markersize=10,
                 label="measured solve")
    axes[0].set_ylabel("s")
    axes[0].set_title("GMRES solve by component")
    axes[1].set_ylabel("%")
    axes[1].set_title("share of the solve")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "h200-breakdown.png"), dpi=120)

scaling = os.path.join(folder, "gpu-mpi-4xh200.jsonl")
if os.path.exists(scaling):
    with open(scaling) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    # weak: P coarse cells along z on P ranks; strong: one coarse cell on P ranks
    weak, strong = {}, {}
    for r in runs:
        key = (r["degree"], r["level"], r["solver"])
        cells = r["cells"][0] * r["cells"][1] * r["cells"][2]
        if cells == r["ranks"]:
            weak.setdefault(key, {})[r["ranks"]] = r["solve_seconds"]
        if cells == 1:
            strong.setdefault(key, {})[r["ranks"]] = r["solve_seconds"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for (k, level, solver), times in sorted(weak.items()):
        ps = sorted(times)
        label = f"Q{k} L{level} {solver}"
        axes[0].plot(ps, [times[p] for p in ps], "o-", label=label)
        axes[1].plot(ps, [times[1] / times[p] for p in ps], "o-", label=label)
    for (k, level, solver), times in sorted(strong.items()):
        ps = sorted(times)
        if len(ps) < 2:
            continue
        axes[2].plot(ps, [times[1] / times[p] for p in ps], "o-", label=f"Q{k} L{level} {solver}")
    # the same weak problems with the smoothers' exchanges overlapped (commit
    # 04dcb10, one run of each on the same 4 H200): efficiency on 4 GPUs
    overlap = os.path.join(folder, "gpu-mpi-4xh200-overlap.jsonl")
    if os.path.exists(overlap):
        with open(overlap) as f:
            later = [json.loads(line) for line in f if line.strip()]
        for r in later:
            cells = r["cells"][0] * r["cells"][1] * r["cells"][2]
            if r["ranks"] != 4 or cells != 4 or r.get("overlap") != 1:
                continue
            one = [s for s in later if s["ranks"] == 1 and s["degree"] == r["degree"]
                   and s["solver"] == r["solver"]]
            if one:
                axes[1].plot([4], [one[0]["solve_seconds"] / r["solve_seconds"]], "*", markersize=10,
                             label=f"Q{r['degree']} {r['solver']}, overlap")
    axes[2].plot([1, 4], [1, 4], "k:", label="ideal")
    axes[0].set_title("weak scaling: solve time")
    axes[0].set_ylabel("s")
    axes[1].set_title("weak scaling: efficiency t(1) / t(P)")
    axes[1].axhline(0.9, color="k", linestyle=":", label="target 0.90")
    axes[2].set_title("strong scaling: speed-up t(1) / t(P)")
    for ax in axes:
        ax.set_xlabel("GPUs (H200)")
        ax.set_xticks([1, 2, 4])
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "gpu-mpi-4xh200.png"), dpi=120)

brick = os.path.join(folder, "h200-brick-ab.csv")
if os.path.exists(brick):
    rows = read(brick)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, precision, target in zip(axes, ("double", "float"), (120, 200)):
        mine = [r for r in rows if r["precision"] == precision and r["mesh"] == "cube"]
        degrees = [int(r["degree"]) for r in mine]
        for key, style, label in (("base_gdofs", "o--", "4d72c81"), ("3a6120d_gdofs", "x:", "3a6120d"),
                                  ("final_gdofs", "o-", "3a6120d + early store where faster")):
            ax.plot(degrees, [value(r, key) for r in mine], style, label=label)
        ax.axhline(target, color="k", linestyle=":", label=f"issue 15 target {target}")
        ax.set_title(f"3D {precision}: BRICK operator, one H200")
        ax.set_xlabel("degree k")
        ax.set_ylabel("GDoF/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "h200-brick.png"), dpi=120)
