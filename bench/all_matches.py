#!/usr/bin/env python3
"""Every match against the best one (issue 34): a prepared parvis.Matcher in a loop, top 1 and
--all with --min-distance, SSD and NCC, on one source and template (default: the capsule
workload's, `bin/cuda-opt bench match --workload 1326x1025/479x432 --save-inputs DIR`). Prints
the wall time a run, the version's compute time and the explain's list: how many positions the
device listed (after the --min-distance prune; PARVIS_TUNING=match.prune_from=1073741824 lists
them all to the host unpruned), re-scored and chose. Several --ssd-max values show how the cost
of --all grows with the list.

    make python && PYTHONPATH=. python3 bench/all_matches.py DIR/1326x1025_479x432_source.pgm \\
        DIR/1326x1025_479x432_template.pgm [--version cuda-opt] [--reps 30] [--ssd-max S ...] \\
        [--csv bench/results/times.csv] [--machine NAME] [--workload 1326x1025/479x432]

With --csv, appends a times.csv row a run (method "<metric>-auto <run> python-run", the wall ms;
a PARVIS_TUNING in the environment is named in the method). The machine defaults to the label
bench/lib.sh gives (host, CPU model, cores, GPU).
"""
import argparse
import datetime
import os
import socket
import subprocess
import time

import parvis


def machine_label():
    """bench/lib.sh's label: short host name, CPU model, cores, and the GPU's name."""
    cpu = "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.SubprocessError):
        gpu = ""
    label = f"{socket.gethostname().split('.')[0]} {cpu} {os.cpu_count()}c" + (f" + {gpu}" if gpu else "")
    return label.replace(",", " ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("template")
    ap.add_argument("--version", default="cuda-opt")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ssd-max", type=int, nargs="+", default=[166767994],
                    help="SSD --all thresholds (one run each)")
    ap.add_argument("--distance", type=int, default=40)
    ap.add_argument("--csv", help="append a times.csv row a run to this file")
    ap.add_argument("--machine", help="the rows' machine (default: bench/lib.sh's label)")
    ap.add_argument("--workload", default="1326x1025/479x432", help="the rows' workload")
    a = ap.parse_args()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    machine = a.machine or machine_label()
    tuning = os.environ.get("PARVIS_TUNING", "")
    rows = []
    src, tpl = parvis.read_image(a.source), parvis.read_image(a.template)
    d = a.distance
    runs = [("ssd top1", {})]
    runs += [(f"ssd --all S={s} D={d}", dict(max_score=s, min_distance=d)) for s in a.ssd_max]
    runs += [("ncc top1", dict(metric="ncc")),
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
        metric, run = name.split(" ", 1)
        method = f"{metric}-auto {run} python-run" + (f" (PARVIS_TUNING={tuning})" if tuning else "")
        rows.append(f"{date},{machine},{a.version},{a.workload},{method.replace(',', ' ')},1,{ms:.4f}")
    if a.csv:
        with open(a.csv, "a") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
