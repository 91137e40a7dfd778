"""Blur map: compute milliseconds per version for each workload (log scale), and the
threads-per-block sweep of seed 002's ladder (compute ms against threads per block)."""
import re

from _common import save, tag


def draw(rows, out_dir, plt):
    paths = []
    for machine in sorted({r["machine"] for r in rows}):
        mine = [r for r in rows if r["machine"] == machine]
        plain = [r for r in mine if r["method"] == "compute"]
        if plain:
            workloads = sorted({r["workload"] for r in plain})
            order = ["seq", "simd", "omp", "blur-v1", "blur-v2", "blur-v3", "blur-v4", "blur-v5", "cuda-naive", "cuda-opt"]
            versions = [v for v in order if any(r["version"] == v for r in plain)]
            fig, ax = plt.subplots(figsize=(max(6, len(workloads) * 2.5), 4.5))
            width = 0.8 / max(1, len(versions))
            for i, v in enumerate(versions):
                ys = []
                for w in workloads:
                    t = [r["ms"] for r in plain if r["version"] == v and r["workload"] == w]
                    ys.append(min(t) if t else float("nan"))
                ax.bar([j + i * width for j in range(len(workloads))], ys, width, label=v)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))])
            ax.set_xticklabels([w.split(":", 1)[1] for w in workloads], fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("compute ms (median)")
            ax.set_title(f"blur map — {machine}", fontsize=8)
            ax.legend(fontsize=6, ncol=2)
            save(fig, plt, out_dir, f"blur_versions_{tag(machine)}.png", paths)
        sweep = [r for r in mine if re.fullmatch(r"compute-tpb\d+", r["method"])]
        for w in sorted({r["workload"] for r in sweep}):
            rows_w = [r for r in sweep if r["workload"] == w]
            fig, ax = plt.subplots(figsize=(6, 4.5))
            for v in sorted({r["version"] for r in rows_w}):
                pts = sorted((int(r["method"].split("tpb")[1]), r["ms"]) for r in rows_w if r["version"] == v)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("threads per block (same total threads)")
            ax.set_ylabel("compute ms")
            ax.set_title(f"{w} threads-per-block sweep — {machine}", fontsize=8)
            ax.legend(fontsize=7)
            save(fig, plt, out_dir, f"blur_tpb_{w.split(':', 1)[1]}_{tag(machine)}.png", paths)
    return paths
