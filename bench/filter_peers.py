#!/usr/bin/env python3
"""The convolution filter in other libraries, on the inputs `./main bench filter --save-inputs DIR`
wrote (DIR/<W>x<H>.ppm|pgm), timed like the bench: a warm-up, then the median of repeated runs.

  bench/filter_peers.py DIR [--kernel LIST] [--size LIST] [--border B] [--seconds S] [--max-reps N]
                            [--peers opencv,cupy,torch]

Prints lines of ./main bench filter's shape (version workload method threads median_ms reps - what):
  opencv  cv2.filter2D(img, -1, taps / divisor) on the CPU (float kernel; cv2.getNumThreads threads)
  cupy    cupyx.scipy.ndimage.correlate(img, taps / divisor) on the GPU, image already there
  torch   depthwise torch.nn.functional.conv2d on the GPU: "<method>" from the uint8 image on the
          GPU to a uint8 result (convert, pad, convolve, round, clamp); "<method>/conv-only" the
          convolution of a float32 image alone
Each peer is skipped, with a note on stderr, when its module does not import (or has no GPU). None
of them is exact in parvis's sense (float taps, their own rounding): they are yardsticks of time.
The kernels are the bank's (src/filter/filter.cpp), written out here.
"""
import argparse
import glob
import os
import statistics
import sys
import time


def bank(name, size):
    """The bank of src/filter/filter.cpp: (taps as a list of rows, divisor)."""
    n = size * size
    if name == "identity":
        t = [0] * n
        t[n // 2] = 1
        d = 1
    elif name == "sharpen":
        if size == 3:
            t, d = [0, -1, 0, -1, 5, -1, 0, -1, 0], 1
        else:
            t = [-1] * 25
            for y in range(1, 4):
                for x in range(1, 4):
                    t[y * 5 + x] = 2
            t[12], d = 8, 8
    elif name == "edge":
        if size == 3:
            t, d = [-1, -1, -1, -1, 8, -1, -1, -1, -1], 1
        else:
            t = [0, 0, -1, 0, 0, 0, -1, -2, -1, 0, -1, -2, 16, -2, -1, 0, -1, -2, -1, 0, 0, 0, -1, 0, 0]
            d = 1
    elif name == "gaussian":
        v = [1, 2, 1] if size == 3 else [1, 4, 6, 4, 1]
        t, d = [a * b for a in v for b in v], 16 if size == 3 else 256
    elif name == "box":
        t, d = [1] * n, n
    elif name == "unsharp":
        g, d = bank("gaussian", size)
        t = [-x for row in g for x in row]
        t[n // 2] += 2 * d
    else:
        raise ValueError(name)
    return [t[r * size:(r + 1) * size] for r in range(size)], d


def timed(run, seconds, max_reps, sync=lambda: None):
    run()
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (len(times) < 3 or time.perf_counter() - start < seconds):
        t0 = time.perf_counter()
        run()
        sync()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times), len(times)


def gpu_timed(run, seconds, max_reps, cp):
    """Median of CUDA-event times (CuPy's events; torch runs on the same device)."""
    run()
    cp.cuda.Device().synchronize()
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (len(times) < 3 or time.perf_counter() - start < seconds):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(times), len(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--kernel", default="identity,sharpen,edge,gaussian,box,unsharp")
    ap.add_argument("--size", default="3,5")
    ap.add_argument("--border", default="zero", choices=["zero", "replicate", "reflect101"])
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--max-reps", type=int, default=25)
    ap.add_argument("--peers", default="opencv,cupy,torch")
    a = ap.parse_args()
    import numpy as np

    kernels = [k for k in a.kernel.replace(",", " ").split()]
    sizes = [int(s) for s in a.size.replace(",", " ").split()]
    peers = a.peers.replace(",", " ").split()
    files = sorted(glob.glob(os.path.join(a.dir, "*.p[pg]m")),
                   key=lambda f: int(os.path.basename(f).split("x")[0]))
    if not files:
        print(f"filter_peers: no inputs in {a.dir}", file=sys.stderr)
        return 1

    def load(path):
        with open(path, "rb") as f:
            data = f.read()
        # P5/P6 with a plain header "Px\nW H\n255\n" (what parvis writes).
        parts = data.split(maxsplit=4)
        w, h = int(parts[1]), int(parts[2])
        c = 3 if parts[0] == b"P6" else 1
        pix = np.frombuffer(data[len(data) - w * h * c:], dtype=np.uint8)
        return pix.reshape(h, w, c) if c == 3 else pix.reshape(h, w)

    cv2 = cp = torch = ndi = None
    if "opencv" in peers:
        try:
            import cv2
        except ImportError:
            print("note: no cv2: OpenCV not measured (apt-get install python3-opencv)", file=sys.stderr)
    if "cupy" in peers or "torch" in peers:
        try:
            import cupy as cp
            import cupyx.scipy.ndimage as ndi
            cp.cuda.Device(0).compute_capability
        except Exception as e:  # no module, or no GPU
            cp = None
            print(f"note: CuPy not usable ({type(e).__name__}): CuPy and PyTorch not measured", file=sys.stderr)
    if "torch" in peers and cp is not None:
        try:
            import torch
            import torch.nn.functional as F
            if not torch.cuda.is_available():
                torch = None
                print("note: torch has no CUDA device: PyTorch not measured", file=sys.stderr)
        except ImportError:
            print("note: no torch: PyTorch not measured", file=sys.stderr)

    for path in files:
        img = load(path)
        stem = os.path.basename(path).rsplit(".", 1)[0]
        workload = f"filter:{stem}-{'rgb' if img.ndim == 3 else 'grey'}"
        channels = 3 if img.ndim == 3 else 1
        d_img = cp.asarray(img) if cp is not None else None
        for k in kernels:
            for size in sizes:
                taps, div = bank(k, size)
                method = f"{k}{size}-{a.border}"
                w = np.array(taps, dtype=np.float32) / np.float32(div)
                if cv2 is not None:
                    border = {"zero": cv2.BORDER_CONSTANT, "replicate": cv2.BORDER_REPLICATE,
                              "reflect101": cv2.BORDER_REFLECT_101}[a.border]
                    ms, reps = timed(lambda: cv2.filter2D(img, -1, w, borderType=border), a.seconds, a.max_reps)
                    print(f"opencv {workload} {method} {cv2.getNumThreads()} {ms:.4f} {reps} - cv2.filter2D", flush=True)
                if cp is not None and "cupy" in peers:
                    mode = {"zero": "constant", "replicate": "nearest", "reflect101": "mirror"}[a.border]
                    weights = cp.asarray(w if channels == 1 else w[:, :, None])
                    ms, reps = gpu_timed(lambda: ndi.correlate(d_img, weights, mode=mode, cval=0.0),
                                         a.seconds, a.max_reps, cp)
                    print(f"cupy {workload} {method} gpu {ms:.4f} {reps} - cupyx.scipy.ndimage.correlate", flush=True)
                if torch is not None:
                    dev = torch.device("cuda")
                    t_img = torch.as_tensor(cp.asnumpy(d_img), device=dev)
                    chw = t_img.permute(2, 0, 1).unsqueeze(0) if channels == 3 else t_img.unsqueeze(0).unsqueeze(0)
                    weight = torch.as_tensor(w, device=dev).expand(channels, 1, size, size).contiguous()
                    r = size // 2
                    pad_mode = {"zero": "constant", "replicate": "replicate", "reflect101": "reflect"}[a.border]

                    def full():
                        x = F.pad(chw.float(), (r, r, r, r), mode=pad_mode)
                        y = F.conv2d(x, weight, groups=channels)
                        return y.round_().clamp_(0, 255).to(torch.uint8)

                    ms, reps = gpu_timed(full, a.seconds, a.max_reps, cp)
                    print(f"torch {workload} {method} gpu {ms:.4f} {reps} - conv2d u8->u8", flush=True)
                    xf = chw.float()

                    def conv_only():
                        return F.conv2d(xf, weight, padding=r, groups=channels)

                    ms, reps = gpu_timed(conv_only, a.seconds, a.max_reps, cp)
                    print(f"torch {workload} {method}/conv-only gpu {ms:.4f} {reps} - conv2d float32", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
