"""Convolution filters (seed 001's plots): speedup over seq by resolution, time by OpenMP thread
count, and time by threads per block for the CUDA kernels (the seed's sweep), one set per machine."""
import statistics

from _common import save, tag


def _res(workload):  # "filter:7680x4320-rgb" -> (7680 * 4320, "7680x4320")
    dims = workload.split(":", 1)[1].split("-")[0]
    w, h = dims.split("x")
    return int(w) * int(h), dims


def _mean_by(rows, key):
    """{key(row): mean ms} as sorted (x, mean) pairs."""
    by = {}
    for r in rows:
        by.setdefault(key(r), []).append(r["ms"])
    return sorted((x, statistics.mean(v)) for x, v in by.items())


def draw(rows, out_dir, plt):
    paths = []
    for machine in sorted({r["machine"] for r in rows}):
        mine = [r for r in rows if r["machine"] == machine]
        mtag = tag(machine)
        main = [r for r in mine if "/" not in r["method"]]
        seq = {(r["workload"], r["method"]): r["ms"] for r in main if r["version"] == "seq"}

        # 1. Mean speedup over seq (over the kernels both ran) by resolution, per version(threads).
        series = {}
        for r in main:
            key = (r["workload"], r["method"])
            if r["version"] == "seq" or key not in seq:
                continue
            label = f"{r['version']} ({r['threads']})"
            series.setdefault(label, {}).setdefault(r["workload"], []).append(seq[key] / r["ms"])
        if series:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for label, by in sorted(series.items()):
                pts = sorted((_res(w)[0], _res(w)[1], statistics.mean(v)) for w, v in by.items())
                ax.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("pixels")
            ax.set_ylabel("speedup over seq (mean over kernels)")
            ax.set_title(f"convolution filters — {machine}", fontsize=8)
            ax.legend(fontsize=7)
            save(fig, plt, out_dir, f"filter_speedup_{mtag}.png", paths)

        # 2. omp: time by thread count, per resolution (mean over kernels).
        omp = [r for r in main if r["version"] == "omp" and r["threads"].isdigit()]
        if omp:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for wl in sorted({r["workload"] for r in omp}, key=lambda w: _res(w)[0]):
                pts = _mean_by([r for r in omp if r["workload"] == wl], lambda r: int(r["threads"]))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=_res(wl)[1])
            ax.set_yscale("log")
            ax.set_xlabel("OpenMP threads")
            ax.set_ylabel("ms (mean over kernels)")
            ax.set_title(f"filter, omp — {machine}", fontsize=8)
            ax.legend(fontsize=7)
            save(fig, plt, out_dir, f"filter_threads_{mtag}.png", paths)

        # 3. CUDA: time by threads per block, per variant and resolution.
        sweep = [r for r in mine if "/" in r["method"] and r["threads"].isdigit()]
        if sweep:
            fig, ax = plt.subplots(figsize=(8, 5))
            keys = sorted({(r["version"], r["method"].split("/", 1)[1], r["workload"]) for r in sweep},
                          key=lambda k: (k[0], k[1], _res(k[2])[0]))
            for version, variant, wl in keys:
                mine_k = [r for r in sweep
                          if (r["version"], r["method"].split("/", 1)[1], r["workload"]) == (version, variant, wl)]
                pts = _mean_by(mine_k, lambda r: int(r["threads"]))
                ax.plot([p[0] for p in pts], [1000 * p[1] for p in pts], marker=".",
                        label=f"{version} {variant} {_res(wl)[1]}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("threads per block")
            ax.set_ylabel("us (mean over the sweep kernels)")
            ax.set_title(f"filter, CUDA block sizes — {machine}", fontsize=8)
            ax.legend(fontsize=5, ncol=2)
            save(fig, plt, out_dir, f"filter_blocks_{mtag}.png", paths)
    return paths
