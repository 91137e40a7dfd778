#!/usr/bin/env python3
"""Charts of bench/results/times.csv as PNG files, one family per operation.

  bench/plot.py [OP ...] [--csv FILE] [--out DIR] [--machine TEXT]

OP: the operations to draw (default: every module in bench/plots/ that has rows). Each
operation's charts live in bench/plots/<op>.py as `draw(rows, out_dir, plt)`; rows are dicts
of the CSV's columns (date, machine, version, workload, method, threads, ms), already limited
to that operation: its rows carry workloads that start with "<op>:" (template matching, whose
rows came first, has none: every row without such a prefix is "match"). Charts are written to
DIR (default bench/results/) as <op>_<what>.png. Needs matplotlib (Debian python3-matplotlib);
without it the script says so and exits 0, since charts are optional.
"""
import argparse
import csv
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "plots"))  # the modules share plots/_common.py


def op_of(row):
    w = row["workload"]
    return w.split(":", 1)[0] if ":" in w else "match"


def load(csv_path, machine=None):
    with open(csv_path, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    for r in rows:
        try:
            r["ms"] = float(r["ms"])
        except ValueError:
            r["ms"] = None
    rows = [r for r in rows if r["ms"] is not None]
    if machine:
        rows = [r for r in rows if machine in r["machine"]]
    return rows


def latest(rows):
    """The rows of the newest run (date) for each (machine, version, workload, method, threads)."""
    best = {}
    for r in rows:
        k = (r["machine"], r["version"], r["workload"], r["method"], r["threads"])
        if k not in best or r["date"] > best[k]["date"]:
            best[k] = r
    return list(best.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="*")
    ap.add_argument("--csv", default=os.path.join(HERE, "results", "times.csv"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--machine", default=None, help="only rows whose machine contains TEXT")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: matplotlib is not installed (apt-get install python3-matplotlib); no charts drawn")
        return 0
    rows = latest(load(a.csv, a.machine))
    available = sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "plots")) if f.endswith(".py") and not f.startswith("_"))
    ops = a.ops or available
    os.makedirs(a.out, exist_ok=True)
    status = 0
    for op in ops:
        if op not in available:
            print(f"plot: no bench/plots/{op}.py (have: {' '.join(available)})", file=sys.stderr)
            status = 1
            continue
        mine = [r for r in rows if op_of(r) == op]
        if not mine:
            print(f"plot: {op}: no rows in {a.csv}")
            continue
        spec = importlib.util.spec_from_file_location(f"plots_{op}", os.path.join(HERE, "plots", f"{op}.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for path in mod.draw(mine, a.out, plt) or []:
            print(f"plot: wrote {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
