#!/usr/bin/env python3
"""Every match against the best one (issue 34): a prepared parvis.Matcher in a loop, top 1 and
--all with --min-distance, SSD and NCC, on one source and template (default: the capsule
workload's, `bin/cuda-opt bench match --workload 1326x1025/479x432 --save-inputs DIR`). Prints
the wall time a run, the version's compute time and the explain's list: how many positions the
device listed, re-scored and chose.

    make python && PYTHONPATH=. python3 bench/all_matches.py DIR/1326x1025_479x432_source.pgm \\
        DIR/1326x1025_479x432_template.pgm [--version cuda-opt] [--reps 30]
"""
import argparse
import time

import parvis


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("template")
    ap.add_argument("--version", default="cuda-opt")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ssd-max", type=int, default=166767994, help="SSD --all threshold")
    ap.add_argument("--distance", type=int, default=40)
    a = ap.parse_args()
    src, tpl = parvis.read_image(a.source), parvis.read_image(a.template)
    d = a.distance
    runs = [("ssd top1", {}), (f"ssd --all S={a.ssd_max} D={d}", dict(max_score=a.ssd_max, min_distance=d)),
            ("ncc top1", dict(metric="ncc")),
            (f"ncc --all S=0.8 D={d}", dict(metric="ncc", min_score=0.8, min_distance=d)),
            (f"ncc --all S=0.3 D={d}", dict(metric="ncc", min_score=0.3, min_distance=d))]
    for name, kw in runs:
        m = parvis.Matcher(tpl, version=a.version, **kw)
        r = m.run(src)  # warm-up: plans, buffers
        t0 = time.perf_counter()
        for _ in range(a.reps):
            r = m.run(src)
        ms = (time.perf_counter() - t0) / a.reps * 1e3
        at = r.explain.find("--all on the device")
        listed = r.explain[at:].rstrip(")") if at >= 0 else ""
        print(f"{name}: {ms:.3f} ms a run (compute {r.compute_ms:.3f} ms), {len(r.matches)} matches; {listed}")


if __name__ == "__main__":
    main()
