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
        # TM_SQDIFF (best = smallest) everywhere; TM_CCOEFF_NORMED (largest) on the templates
        # small enough for a direct run.
        methods = [("ssd-opencv", cv2.TM_SQDIFF)]
        if tpl.shape[0] * tpl.shape[1] <= 64 * 64:
            methods.append(("ncc-opencv", cv2.TM_CCOEFF_NORMED))
        for name, method in methods:
            ms, reps = median_ms(lambda: cv2.matchTemplate(src, tpl, method))
            min_val, max_val, min_loc, max_loc = cv2.minMaxLoc(cv2.matchTemplate(src, tpl, method))
            if method == cv2.TM_SQDIFF:
                loc, score, label = min_loc, f"{int(round(max(min_val, 0.0)))}", "TM_SQDIFF"
            else:
                loc, score, label = max_loc, f"{max_val:.9f}", "TM_CCOEFF_NORMED"
            print(f"{version} {workload} {name} {threads} {ms:.3f} {reps} {loc[0]} {loc[1]} {score} {label}",
                  flush=True)

if __name__ == "__main__":
    main()
