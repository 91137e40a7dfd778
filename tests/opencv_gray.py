#!/usr/bin/env python3
"""Checks parvis's grey against OpenCV's on all 2^24 colours.

  tests/opencv_gray.py [BIN]    (BIN default bin/seq; needs python3 with cv2 and numpy)

Writes the all-colours image (every 24-bit colour once, 4096x4096), converts it with
`BIN filter IN OUT.pgm --kernel identity --gray` and with cv2.cvtColor(COLOR_BGR2GRAY),
and compares every pixel. Exit 0 when all agree, 1 otherwise, 77 when cv2 is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"opencv_gray: skipped ({e}; apt-get install python3-opencv)")
    sys.exit(77)

exe = sys.argv[1] if len(sys.argv) > 1 else "bin/seq"
i = np.arange(1 << 24, dtype=np.uint32)
rgb = np.stack([(i >> 16) & 255, (i >> 8) & 255, i & 255], axis=-1).astype(np.uint8).reshape(4096, 4096, 3)
want = cv2.cvtColor(rgb[:, :, ::-1].copy(), cv2.COLOR_BGR2GRAY)
with tempfile.TemporaryDirectory() as d:
    src, out = os.path.join(d, "all.ppm"), os.path.join(d, "grey.pgm")
    with open(src, "wb") as f:
        f.write(b"P6\n4096 4096\n255\n" + rgb.tobytes())
    subprocess.run([exe, "filter", src, out, "--kernel", "identity", "--gray"], check=True,
                   stdout=subprocess.DEVNULL)
    got = cv2.imread(out, cv2.IMREAD_UNCHANGED)
bad = int((got != want).sum())
print(f"opencv_gray: {exe} vs OpenCV {cv2.__version__}: {bad} of {1 << 24} colours differ")
sys.exit(0 if bad == 0 else 1)
