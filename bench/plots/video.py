"""The video pipeline: frames/s per version and template, end to end beside its two bounds."""
from _common import save, tag


def draw(rows, out_dir, plt):
    paths = []
    for machine in sorted({r["machine"] for r in rows}):
        mine = [r for r in rows if r["machine"] == machine and r["ms"] and r["ms"] > 0]
        per_template = sorted({r["workload"] for r in mine if r["workload"].count("/") == 1},
                              key=lambda w: int(w.rsplit("/", 1)[1].split("x")[0]))
        if not per_template:
            continue
        # One bar group per version and thread setting (omp runs as T threads and as 1*N jobs).
        versions = sorted({(r["version"], r["threads"]) for r in mine})
        methods = ["e2e", "match+color", "read+convert"]
        fig, axes = plt.subplots(1, len(per_template), figsize=(4.5 * len(per_template), 4), squeeze=False)
        for ax, workload in zip(axes[0], per_template):
            clip = workload.split("/")[0]
            width = 0.8 / len(methods)
            for i, method in enumerate(methods):
                ys = []
                for v in versions:
                    # e2e and match+color per template; the reader's bound per clip. Versions without
                    # the colour filter time the match alone (e2e:match-only, match).
                    want = {"e2e": ("e2e", "e2e:match-only"), "match+color": ("match+color", "match"),
                            "read+convert": ("read+convert",)}[method]
                    wl = clip if method == "read+convert" else workload
                    t = [r["ms"] for r in mine if (r["version"], r["threads"]) == v and r["workload"] == wl
                         and r["method"] in want]
                    ys.append(1000.0 / min(t) if t else float("nan"))
                ax.bar([j + i * width for j in range(len(versions))], ys, width, label=method)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(versions))])
            ax.set_xticklabels([f"{v}({t})" for v, t in versions], fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("frames/s")
            ax.set_title(workload.replace("video:", ""), fontsize=8)
            ax.axhline(30, color="grey", lw=0.6, ls=":")
            ax.legend(fontsize=6)
        fig.suptitle(f"video pipeline, 1920x1080 — {machine}", fontsize=8)
        save(fig, plt, out_dir, f"video_{tag(machine)}.png", paths)
    return paths
