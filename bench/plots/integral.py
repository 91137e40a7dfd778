"""Integral image (seed 004's plots): time by matrix size per version (log scale) and the speedup
over seq, one set per machine; GB/s of the GPU rows (u8 read + output written once)."""
import statistics

from _common import save, tag


def _side(workload):  # "integral:10000x10000" -> pixels, "10000x10000"
    dims = workload.split(":", 1)[1]
    w, h = dims.split("x")
    return int(w) * int(h), dims


def draw(rows, out_dir, plt):
    paths = []
    for machine in sorted({r["machine"] for r in rows}):
        mrows = [r for r in rows if r["machine"] == machine]
        series = {}
        for r in mrows:
            label = r["version"] + ("" if r["threads"] in ("1", "gpu") else " " + r["threads"] + "t") + " " + r["method"]
            series.setdefault(label, {}).setdefault(_side(r["workload"])[0], []).append(r["ms"])
        fig, ax = plt.subplots(figsize=(8, 5))
        for label, by in sorted(series.items()):
            pts = sorted((px, statistics.median(v)) for px, v in by.items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("pixels (seed 004: 10000^2 ... 60000^2)")
        ax.set_ylabel("ms (median)")
        ax.set_title("integral image — " + machine, fontsize=9)
        ax.legend(fontsize=7)
        save(fig, plt, out_dir, "integral_time_" + tag(machine) + ".png", paths)
        gpu = {k: v for k, v in series.items() if " u8-u64" in k and any(r["threads"] == "gpu" for r in mrows)}
        if gpu:
            fig, ax = plt.subplots(figsize=(8, 5))
            for label, by in sorted(gpu.items()):
                pts = sorted((px, 9 * px / (statistics.median(v) / 1000) / 1e9) for px, v in by.items())
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            ax.axhline(3000, color="grey", linestyle="--", label="3.0 TB/s (H100 HBM3)")
            ax.set_xscale("log")
            ax.set_xlabel("pixels")
            ax.set_ylabel("GB/s (1 B read + 8 B written a pixel)")
            ax.set_title("integral u8 -> u64 bandwidth — " + machine, fontsize=9)
            ax.legend(fontsize=7)
            save(fig, plt, out_dir, "integral_gbs_" + tag(machine) + ".png", paths)
    return paths
