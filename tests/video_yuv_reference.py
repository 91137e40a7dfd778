#!/usr/bin/env python3
"""Checks the video path's YUV -> RGB against the formula of docs/DESIGN.md ("Video"), in numpy.

  tests/video_yuv_reference.py [BIN]    (BIN default bin/seq; needs python3 with numpy)

For each matrix (BT.601, BT.709) and range (full, limited) it writes a 4096x4096 Y4M 4:4:4
frame holding every (Y, Cb, Cr) triple once, and a 1027x769 4:2:0 frame of noise (odd sizes,
chroma shared by 2x2 blocks), runs `BIN video ... --save-frame 0:rgb.ppm` on each, and compares
every pixel with the integer formula computed here. It also reports how far the integer
formula lies from the real-valued one (at most 1, before clamping). Exit 0 when all agree, 1
otherwise, 77 when numpy is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as e:
    print(f"video_yuv_reference: skipped ({e})")
    sys.exit(77)

exe = sys.argv[1] if len(sys.argv) > 1 else "bin/seq"

# The matrices: Kr, Kb; limited range scales luma by 255/219 and chroma by 255/224.
MATRICES = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722)}


def coefficients(matrix, rng):
    kr, kb = MATRICES[matrix]
    kg = 1 - kr - kb
    ys, cs = (1.0, 1.0) if rng == "full" else (255 / 219, 255 / 224)
    real = [ys, 2 * (1 - kr) * cs, 2 * kb * (1 - kb) / kg * cs, 2 * kr * (1 - kr) / kg * cs, 2 * (1 - kb) * cs]
    return [int(round(c * 65536)) for c in real], real, (0 if rng == "full" else 16)


def expected(y, u, v, matrix, rng):
    (ky, krv, kgu, kgv, kbu), real, off = coefficients(matrix, rng)
    y = y.astype(np.int64) - off
    cb = u.astype(np.int64) - 128
    cr = v.astype(np.int64) - 128
    def fix(s):  # floor((s + 2^15) / 2^16), clamped
        return np.clip((s + (1 << 15)) >> 16, 0, 255).astype(np.uint8)
    rgb = np.stack([fix(ky * y + krv * cr), fix(ky * y - kgu * cb - kgv * cr), fix(ky * y + kbu * cb)], axis=-1)
    r_ky, r_krv, r_kgu, r_kgv, r_kbu = real
    exact = np.stack([r_ky * y + r_krv * cr, r_ky * y - r_kgu * cb - r_kgv * cr, r_ky * y + r_kbu * cb], axis=-1)
    inside = (exact >= 0) & (exact <= 255)
    drift = np.abs(rgb.astype(np.float64) - exact)[inside].max()
    return rgb, drift


def run(path, w, h, tmp, matrix):
    tpl = os.path.join(tmp, "tpl.pgm")
    with open(tpl, "wb") as f:
        f.write(b"P5\n1 1\n255\n\x80")
    out = os.path.join(tmp, "rgb.ppm")
    subprocess.run([exe, "video", path, tpl, "--matrix", matrix, "--method", "direct", "--no-time",
                    "--save-frame", f"0:{out}"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = open(out, "rb").read()
    return np.frombuffer(data[-w * h * 3:], dtype=np.uint8).reshape(h, w, 3)


failures = 0
rng_gen = np.random.default_rng(7)
with tempfile.TemporaryDirectory() as tmp:
    for matrix in ("bt601", "bt709"):
        for rng in ("full", "limited"):
            tag = "XCOLORRANGE=FULL" if rng == "full" else "XCOLORRANGE=LIMITED"
            # Every triple: Y = i >> 16, Cb = (i >> 8) & 255, Cr = i & 255.
            i = np.arange(1 << 24, dtype=np.uint32)
            y, u, v = ((i >> 16) & 255).astype(np.uint8), ((i >> 8) & 255).astype(np.uint8), (i & 255).astype(np.uint8)
            path = os.path.join(tmp, "all.y4m")
            with open(path, "wb") as f:
                f.write(f"YUV4MPEG2 W4096 H4096 F25:1 C444 {tag}\n".encode() + b"FRAME\n" + y.tobytes() + u.tobytes() + v.tobytes())
            got = run(path, 4096, 4096, tmp, matrix).reshape(-1, 3)
            want, drift = expected(y, u, v, matrix, rng)
            bad = int(np.any(got != want, axis=1).sum())
            print(f"{matrix} {rng} 4:4:4, all 2^24 triples: {bad} pixels differ; integer vs real formula at most {drift:.3f}")
            failures += bad > 0
            # 4:2:0 noise at odd sizes.
            w, h = 1027, 769
            cw, ch = (w + 1) // 2, (h + 1) // 2
            y = rng_gen.integers(0, 256, (h, w), dtype=np.uint8)
            u = rng_gen.integers(0, 256, (ch, cw), dtype=np.uint8)
            v = rng_gen.integers(0, 256, (ch, cw), dtype=np.uint8)
            path = os.path.join(tmp, "noise.y4m")
            with open(path, "wb") as f:
                f.write(f"YUV4MPEG2 W{w} H{h} C420jpeg {tag}\n".encode() + b"FRAME\n" + y.tobytes() + u.tobytes() + v.tobytes())
            got = run(path, w, h, tmp, matrix)
            uu = np.repeat(np.repeat(u, 2, axis=0), 2, axis=1)[:h, :w]
            vv = np.repeat(np.repeat(v, 2, axis=0), 2, axis=1)[:h, :w]
            want, _ = expected(y, uu, vv, matrix, rng)
            bad = int(np.any(got != want, axis=2).sum())
            print(f"{matrix} {rng} 4:2:0 {w}x{h} noise: {bad} pixels differ")
            failures += bad > 0
    print("all agree" if failures == 0 else f"{failures} checks failed")
sys.exit(0 if failures == 0 else 1)
