"""What tests/ncc_check.py and tests/mask_check.py share: the numpy / cv2 imports (a missing
numpy skips the script: exit 77), the pass / fail counting and the closing
"N passed, N failed, N skipped" line (tests/gpu/lib.sh's contract), running a tool's match with
its map, reading a tool's grey image, making inputs, and the normed scores from their
definitions on exact integer sums (Python integers, a 50-digit decimal square root and
quotient)."""
import decimal
import json
import os
import subprocess
import sys

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]  # the script's name, for its messages
try:
    import numpy as np
except ImportError as e:
    print(f"{NAME}: skipped ({e})")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(77)
try:
    import cv2
except ImportError:
    cv2 = None

decimal.getcontext().prec = 50
GEN = "bin/parvis-gen"

passed = failed = 0


def ok(msg):
    global passed
    passed += 1
    print("ok    " + msg)


def fail(msg):
    global failed
    failed += 1
    print("FAIL  " + msg)


def report(good, msg):
    (ok if good else fail)(msg)


def finish():
    """The closing lines and the exit status: 0 when all agreed, 1 otherwise."""
    if cv2 is None:
        print(f"{NAME}: no cv2 here, the OpenCV comparison was skipped")
    print(f"{passed} passed, {failed} failed, 0 skipped")
    sys.exit(1 if failed else 0)


def run_match(exe, src, tpl, metric, mapfile, mask=None):
    """The tool's --json result and its --map (float64 .npy)."""
    cmd = [exe, "match", src, tpl, "--metric", metric, "--map", mapfile, "--json"]
    if mask:
        cmd += ["--mask", mask]
    p = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(p.stdout), np.load(mapfile)


def best_of(m, largest=True):
    """Best entry, ties to the smallest y, then x (row-major arg* takes the first)."""
    k = int(np.argmax(m)) if largest else int(np.argmin(m))
    y, x = np.unravel_index(k, m.shape)
    return int(x), int(y)


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


def write_noise_inputs(d, seed):
    """d/noise.pgm: 131x97 uniform noise with a flat patch (200) and a zero band at the bottom;
    d/noise_tpl.pgm: its 17x13 cut at (40, 30). Returns the generator, for further draws."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 256, (97, 131), dtype=np.uint8)
    noise[10:40, 50:90] = 200
    noise[80:97, :] = 0
    write_pgm(os.path.join(d, "noise.pgm"), noise)
    write_pgm(os.path.join(d, "noise_tpl.pgm"), noise[30:43, 40:57])
    return rng


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
