#!/usr/bin/env python3
"""OpenCV's matchTemplate(TM_SQDIFF, and TM_CCOEFF_NORMED) on the inputs of `./main bench match --save-inputs DIR`.

    python3 bench/opencv_compare.py DIR

Prints lines in the bench's format (version workload method threads median_ms reps x y score
used), so bench/run_match.sh puts OpenCV in the same table. Not part of the build: OpenCV
is only a yardstick. Its TM_SQDIFF works in float32 (a DFT for large templates), so its
score is rounded; the position is what must agree. TM_CCOEFF_NORMED is timed as
ncc-opencv (beside ncc-direct) on the workloads small enough for a direct run (templates up
to 64x64), its best being the largest score.
"""
import glob
import os
import sys
import time

import cv2
import numpy as np


def median_ms(fn, seconds=1.0, max_reps=25):
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (len(times) < 3 or time.perf_counter() - start < seconds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    n = len(times)
    return (times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])), n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    version = "opencv-" + cv2.__version__
    threads = cv2.getNumThreads()
    for src_path in sorted(glob.glob(os.path.join(d, "*_source.pgm"))):
        stem = os.path.basename(src_path)[: -len("_source.pgm")]
        workload = stem.replace("_", "/", 1)
        src = cv2.imread(src_path, cv2.IMREAD_GRAYSCALE)
        tpl = cv2.imread(os.path.join(d, stem + "_template.pgm"), cv2.IMREAD_GRAYSCALE)
        res = None

        def run():
            nonlocal res
            res = cv2.matchTemplate(src, tpl, cv2.TM_SQDIFF)

        ms, reps = median_ms(run)
        min_val, _, min_loc, _ = cv2.minMaxLoc(res)
        print(f"{version} {workload} ssd-opencv {threads} {ms:.3f} {reps} {min_loc[0]} {min_loc[1]} "
              f"{int(round(max(min_val, 0.0)))} TM_SQDIFF", flush=True)
        if tpl.shape[0] * tpl.shape[1] > 64 * 64:
            continue

        def run_ncc():
            nonlocal res
            res = cv2.matchTemplate(src, tpl, cv2.TM_CCOEFF_NORMED)

        ms, reps = median_ms(run_ncc)
        _, max_val, _, max_loc = cv2.minMaxLoc(res)
        print(f"{version} {workload} ncc-opencv {threads} {ms:.3f} {reps} {max_loc[0]} {max_loc[1]} "
              f"{max_val:.9f} TM_CCOEFF_NORMED", flush=True)


if __name__ == "__main__":
    main()
