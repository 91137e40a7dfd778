#!/usr/bin/env python3
"""The integral image's peers, timed on u8 noise of the bench's sizes (the values do not change
their time): OpenCV's cv2.integral with a float64 output on the CPU (its only output wide enough
past 4096x4112; the issue's CPU target is omp <= 0.5x of it), and on a GPU machine PyTorch's
torch.cumsum twice (u8 -> int64, input already on the device, CUDA events). OpenCV's
cuda::integral has only a 32-bit output, which overflows on these sizes, so it is not run.
Each peer is guarded by its import. Lines as ./main bench integral prints them:
  peer integral:WxH method threads median_ms reps - path

  bench/integral_peers.py --size 10000 [--peers opencv,torch] [--cpu-max 10000] [--reps 5]
"""
import argparse
import statistics
import sys
import time


def sizes(text):
    out = []
    for w in text.replace(",", " ").split():
        a, _, b = w.partition("x")
        out.append((int(a), int(b or a)))
    return out


def run_opencv(w, h, reps):
    """Two lines, as the CPU versions print them: u8-f64 with the output array reused from run to
    run (cv2.integral's `sum` argument), u8-f64/alloc with a fresh one each run."""
    import cv2
    import numpy as np
    threads = cv2.getNumThreads()
    img = np.random.default_rng(1).integers(0, 256, (h, w), dtype=np.uint8)
    out = cv2.integral(img, sdepth=cv2.CV_64F)  # warm-up
    for suffix, call in (("", lambda: cv2.integral(img, sum=out, sdepth=cv2.CV_64F)),
                         ("/alloc", lambda: cv2.integral(img, sdepth=cv2.CV_64F))):
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            r = call()
            times.append((time.perf_counter() - t) * 1e3)
            del r
        print(f"opencv integral:{w}x{h} u8-f64{suffix} {threads} {statistics.median(times):.4f} {reps} - "
              "cv2.integral", flush=True)


def run_torch(w, h, reps):
    import torch
    if not torch.cuda.is_available():
        return
    x = torch.randint(0, 256, (h, w), dtype=torch.uint8, device="cuda")
    torch.cumsum(torch.cumsum(x, 0, dtype=torch.int64), 1)  # warm-up
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        y = torch.cumsum(torch.cumsum(x, 0, dtype=torch.int64), 1)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
        del y
    print(f"torch integral:{w}x{h} u8-u64 gpu {statistics.median(times):.4f} {reps} - torch.cumsum-x2",
          flush=True)
    del x
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="10000")
    p.add_argument("--peers", default="opencv,torch")
    p.add_argument("--cpu-max", type=int, default=10000, help="largest side OpenCV runs on")
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    for w, h in sizes(a.size):
        for peer in a.peers.split(","):
            try:
                if peer == "opencv" and max(w, h) <= a.cpu_max:
                    run_opencv(w, h, a.reps)
                elif peer == "torch":
                    run_torch(w, h, a.reps)
            except ImportError as e:
                print(f"note: {peer} not available ({e})", file=sys.stderr)
            except Exception as e:  # out of memory and the like: say so, go on
                print(f"note: {peer} failed on {w}x{h}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
