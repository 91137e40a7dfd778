"""Template matching: milliseconds per version for each workload and method (log scale)."""
from _common import save, tag


def draw(rows, out_dir, plt):
    paths = []
    for machine in sorted({r["machine"] for r in rows}):
        mine = [r for r in rows if r["machine"] == machine and "/" not in r["method"]]
        if not mine:
            continue
        keys = sorted({(r["workload"], r["method"]) for r in mine})
        versions = sorted({r["version"] for r in mine})
        fig, ax = plt.subplots(figsize=(max(6, len(keys) * 0.9), 4.5))
        width = 0.8 / max(1, len(versions))
        for i, v in enumerate(versions):
            ys = []
            for k in keys:
                t = [r["ms"] for r in mine if r["version"] == v and (r["workload"], r["method"]) == k]
                ys.append(min(t) if t else float("nan"))
            ax.bar([j + i * width for j in range(len(keys))], ys, width, label=v)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
        ax.set_xticklabels([f"{w}\n{m}" for w, m in keys], fontsize=6, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("ms (median)")
        ax.set_title(f"template matching — {machine}", fontsize=8)
        ax.legend(fontsize=7)
        save(fig, plt, out_dir, f"match_{tag(machine)}.png", paths)
    return paths
