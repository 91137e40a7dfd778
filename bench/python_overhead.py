#!/usr/bin/env python3
"""The Python module's cost (issue 35): a prepared Matcher.run from Python against the same C++
call in a loop without Python (Matcher.time_cpp), and, where a GPU version is built, cuda-opt's
run on a NumPy array beside the peers a Python user would pick on the same arrays:
cv2.matchTemplate (TM_SQDIFF) and CuPy (SSD from cupyx fftconvolve and window sums).

  PYTHONPATH=. python3 bench/python_overhead.py [--machine NAME] [--csv bench/results/times.csv]

Prints times.csv rows (date,machine,version,workload,method,threads,ms; the median of --reps
calls after a warm-up) and appends them with --csv. Every peer's best position is checked
against parvis's."""
import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

import parvis


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def scene(h, w, th, tw, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (h, w), dtype=np.uint8)
    t = a[h // 3:h // 3 + th, w // 4:w // 4 + tw].copy()
    t[::7, ::5] = rng.integers(0, 256, t[::7, ::5].shape, dtype=np.uint8)  # not an exact copy
    return a, t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--csv")
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []

    def row(version, workload, method, threads, ms):
        rows.append("%s,%s,%s,%s,%s,%s,%.4f" % (date, args.machine, version, workload, method, threads, ms))
        print(rows[-1], flush=True)

    # The Python overhead: omp (one thread) where built, else the first version. The C++ call in
    # a loop (time_cpp) and Python's run() alternate in rounds; the medians are compared. On the
    # 640x480 source with a template of its size the compute is small, so the difference is not
    # lost in the noise of a long call; the 64x64 template is the call a user makes.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    have = parvis.versions()
    v = "omp" if "omp" in have else have[0]
    for th, tw in [(480, 640), (64, 64)]:
        a, t = scene(480, 640, th, tw, 1)
        if (th, tw) == (480, 640):
            t = a.copy()
            t[::9, ::7] ^= 0x55
        m = parvis.Matcher(t, version=v)
        m.run(a)
        k = 20 if th == 480 else 2
        cpp, py = [], []
        for _ in range(max(10, args.reps // k)):
            cpp.append(m.time_cpp(a, repeats=k) * 1e3)
            t0 = time.perf_counter()
            for _ in range(k):
                m.run(a)
            py.append((time.perf_counter() - t0) * 1e3 / k)
        wl = "640x480/%dx%d" % (tw, th)
        cpp_ms, py_ms = statistics.median(cpp), statistics.median(py)
        row(v, wl, "ssd-auto cpp-call", 1, cpp_ms)
        row(v, wl, "ssd-auto python-run", 1, py_ms)
        print("python overhead on %s: %.1f us a call (%s, 1 thread)" % (wl, (py_ms - cpp_ms) * 1e3, v),
              file=sys.stderr)

    if "cuda-opt" not in have:
        return finish(rows, args)
    try:
        parvis.device_name(version="cuda-opt")
    except RuntimeError as e:
        print("cuda-opt: %s" % e, file=sys.stderr)
        return finish(rows, args)
    a, t = scene(1025, 1326, 432, 479, 2)
    wl = "1326x1025/479x432"
    m = parvis.Matcher(t, version="cuda-opt")
    best = m.run(a).matches[0]
    row("cuda-opt", wl, "ssd-auto python-run", 1, median_ms(lambda: m.run(a), args.reps))
    row("cuda-opt", wl, "ssd-auto cpp-call", 1,
        statistics.median(m.time_cpp(a, repeats=20) * 1e3 for _ in range(10)))
    try:
        import cv2
        def cv():
            r = cv2.matchTemplate(a, t, cv2.TM_SQDIFF)
            return cv2.minMaxLoc(r)[2]
        assert cv() == (best.x, best.y), (cv(), best)
        row("opencv-%s" % cv2.__version__, wl, "TM_SQDIFF", cv2.getNumThreads(), median_ms(cv, max(5, args.reps // 20)))
    except ImportError:
        pass
    try:
        import cupy as cp
        from cupyx.scipy.signal import fftconvolve
        tt = cp.asarray(t, dtype=cp.float64)
        flipped = tt[::-1, ::-1].copy()
        tsq = float((tt * tt).sum())
        th, tw = t.shape
        def cu():
            g = cp.asarray(a).astype(cp.float64)
            ii = cp.pad(cp.cumsum(cp.cumsum(g * g, 0), 1), ((1, 0), (1, 0)))
            win = ii[th:, tw:] - ii[:-th, tw:] - ii[th:, :-tw] + ii[:-th, :-tw]
            ssd = win - 2 * fftconvolve(g, flipped, mode="valid") + tsq
            k = int(cp.argmin(ssd))
            return (k % ssd.shape[1], k // ssd.shape[1])
        assert cu() == (best.x, best.y), (cu(), best)
        row("cupy-%s" % cp.__version__, wl, "ssd fftconvolve", 1, median_ms(cu, max(20, args.reps // 5)))
    except ImportError:
        pass
    return finish(rows, args)


def finish(rows, args):
    if args.csv:
        with open(args.csv, "a") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
