"""What tests/ncc_check.py and tests/mask_check.py share: reading a tool's grey image, making
inputs, and the normed scores from their definitions on exact integer sums (Python integers, a
50-digit decimal square root and quotient)."""
import decimal
import subprocess

import numpy as np

decimal.getcontext().prec = 50
GEN = "bin/parvis-gen"


def read_grey(exe, path):
    """The grey image the tool matches (its own grey: read through `filter identity --gray`)."""
    out = path + ".grey.pgm"
    subprocess.run([exe, "filter", path, out, "--kernel", "identity", "--gray"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, "rb") as f:
        data = f.read()
    parts = data.split(maxsplit=4)
    w, h = int(parts[1]), int(parts[2])
    return np.frombuffer(parts[4][: w * h], dtype=np.uint8).reshape(h, w)


def gen(*args):
    subprocess.run([GEN, *args], check=True, stdout=subprocess.DEVNULL)


def write_pgm(path, a):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (a.shape[1], a.shape[0]) + a.astype(np.uint8).tobytes())


def normed_value(coeff, n, si, sii, sit, st, stt):
    """(score, degenerate): TM_CCOEFF_NORMED (coeff) or TM_CCORR_NORMED of one position from its
    exact sums; degenerate where the contract fixes the value (flat template 1, flat window 0,
    zero window or template 0)."""
    if coeff:
        num, vi, vt = n * sit - si * st, n * sii - si * si, n * stt - st * st
        if vt == 0:
            return 1.0, True
        if vi == 0:
            return 0.0, True
    else:
        num, vi, vt = sit, sii, stt
        if vi == 0 or vt == 0:
            return 0.0, True
    r = decimal.Decimal(num) / (decimal.Decimal(vi) * decimal.Decimal(vt)).sqrt()
    return float(max(min(r, decimal.Decimal(1)), decimal.Decimal(-1))), False
