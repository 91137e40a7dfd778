#!/usr/bin/env python3
"""Checks `match --mask M` against an independent computation and OpenCV.

  tests/mask_check.py [BIN...]    (default bin/seq; needs python3 with numpy, cv2 for part 3)

For each version BIN, on generated inputs (a photo-like scene, the capsule scene, noise with
flat patches, a tiny source) and masks (ring, random holes, checker, one pixel, full, a 0/1 mask):
  1. the `--map` (float64 .npy) of ssd, sad, ncc and ccorr-normed against the masked sums
     computed here (numpy int64 over the counted pixels, Python integers for the normed
     numerators and variances, a 50-digit decimal square root and quotient): ssd / sad equal,
     ncc / ccorr-normed within 1e-12 with flat windows exactly 0 and a flat (masked) template
     exactly 1; the printed best is the map's best (ties: smallest y, then x);
  2. a full mask gives the unmasked run's map bit for bit, a 0/1 mask the 0/255 one's;
  3. against OpenCV's cv2.matchTemplate(..., mask=M as CV_8U): TM_SQDIFF within 1e-6 of the
     largest score, TM_CCOEFF_NORMED / TM_CCORR_NORMED within 1e-4 wherever OpenCV's value is
     finite and the window is not flat under the mask (DESIGN.md "Masks" lists where OpenCV
     differs: it gives inf / nan or rounding noise there, parvis the unmasked contract's 0 / 1).
     OpenCV has no SAD.
Ends with "N passed, N failed, N skipped" (tests/gpu/lib.sh's contract). Exit 0 when all agree,
1 otherwise, 77 when numpy is missing.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import match_check_common as common  # noqa: E402  (exits 77 when numpy is missing)
from match_check_common import best_of, cv2, fail, np, ok, run_match  # noqa: E402


def read_grey(path):
    return common.read_grey(BINS[0], path)


def masked_sums(img, tpl, m):
    """Over the counted pixels (m != 0) of every window: SSD, SAD, ΣI, ΣI², ΣI·T (int64)."""
    a = img.astype(np.int64)
    th, tw = tpl.shape
    mh, mw = a.shape[0] - th + 1, a.shape[1] - tw + 1
    out = [np.zeros((mh, mw), np.int64) for _ in range(5)]
    for j in range(th):
        for i in range(tw):
            if not m[j, i]:
                continue
            win, t = a[j:j + mh, i:i + mw], int(tpl[j, i])
            out[0] += (win - t) ** 2
            out[1] += np.abs(win - t)
            out[2] += win
            out[3] += win * win
            out[4] += win * t
    return out


def normed(si, sii, sit, tpl, m, coeff):
    t = tpl.astype(np.int64)[m != 0]
    n, st, stt = int(t.size), int(t.sum()), int((t * t).sum())
    out = np.zeros(si.shape, np.float64)
    flat = np.zeros(si.shape, bool)
    for y in range(si.shape[0]):
        for x in range(si.shape[1]):
            out[y, x], flat[y, x] = common.normed_value(coeff, n, int(si[y, x]), int(sii[y, x]),
                                                        int(sit[y, x]), st, stt)
    return out, flat


METRICS = (("ssd", "TM_SQDIFF"), ("sad", None), ("ncc", "TM_CCOEFF_NORMED"),
           ("ccorr-normed", "TM_CCORR_NORMED"))


def check(name, src, tpl, mask, d):
    img, t, m = read_grey(src), read_grey(tpl), read_grey(mask)
    ssd, sad, si, sii, sit = masked_sums(img, t, m)
    for metric, cv_method in METRICS:
        flat = np.zeros(ssd.shape, bool)
        if metric == "ssd":
            want = ssd.astype(np.float64)
        elif metric == "sad":
            want = sad.astype(np.float64)
        else:
            want, flat = normed(si, sii, sit, t, m, metric == "ncc")
        largest = metric in ("ncc", "ccorr-normed")
        cvmap = None
        if cv2 is not None and cv_method:
            with np.errstate(all="ignore"):
                cvmap = cv2.matchTemplate(img, t, getattr(cv2, cv_method),
                                          mask=(m != 0).astype(np.uint8)).astype(np.float64)
        for exe in BINS:
            label = f"{os.path.basename(exe)} {name} {metric}"
            res, got = run_match(exe, src, tpl, metric, os.path.join(d, "map.npy"), mask)
            if got.shape != want.shape:
                fail(f"{label}: map shape {got.shape}, expected {want.shape}")
                continue
            diff = float(np.max(np.abs(got - want)))
            exact_flat = bool(np.all(got[flat] == want[flat]))
            good = (diff == 0.0 if not largest else diff <= 1e-12) and exact_flat
            good = good and (res["x"], res["y"]) == best_of(got, largest)
            note = f"max |map - definition| {diff:.2e}, best ({res['x']},{res['y']})"
            if cvmap is not None:
                fin = np.isfinite(cvmap) & ~flat
                scale = float(np.max(np.abs(want))) if metric == "ssd" else 1.0
                tol = 1e-6 * max(scale, 1.0) if metric == "ssd" else 1e-4
                cvdiff = float(np.max(np.abs(cvmap[fin] - got[fin]))) if fin.any() else 0.0
                good = good and cvdiff <= tol
                note += (f"; OpenCV: max diff {cvdiff:.2e} on {int(fin.sum())}/{fin.size} positions"
                         f" ({int((~np.isfinite(cvmap)).sum())} not finite, {int(flat.sum())} flat)")
            common.report(good, f"{label}: {note}")


def check_same(name, src, tpl, mask_a, mask_b, d):
    """Two runs that must give the same bits (mask_b None: unmasked)."""
    for metric, _ in METRICS:
        for exe in BINS:
            ra, ma = run_match(exe, src, tpl, metric, os.path.join(d, "a.npy"), mask_a)
            rb, mb = run_match(exe, src, tpl, metric, os.path.join(d, "b.npy"), mask_b)
            ra.pop("mask", None)
            rb.pop("mask", None)
            label = f"{os.path.basename(exe)} {name} {metric}"
            if ra == rb and ma.tobytes() == mb.tobytes():
                ok(f"{label}: same bits")
            else:
                fail(f"{label}: differ")


gen, write_pgm = common.gen, common.write_pgm


BINS = sys.argv[1:] or ["bin/seq"]
with tempfile.TemporaryDirectory() as d:
    P = lambda name: os.path.join(d, name)
    gen("scene", "233x171", P("nat.bmp"), "--kind", "natural", "--seed", "7",
        "--template", P("nat_tpl.bmp"), "--template-size", "41x29")
    gen("samples", d)
    rng = common.write_noise_inputs(d, 15)
    write_pgm(P("tiny.pgm"), rng.integers(0, 256, (3, 4), dtype=np.uint8))
    write_pgm(P("tiny_tpl.pgm"), rng.integers(0, 256, (2, 3), dtype=np.uint8))
    for size, shapes in (("41x29", ("ring", "holes", "dot")), ("17x13", ("ring", "holes", "checker", "dot", "corner")), ("3x2", ("holes",))):
        for s in shapes:
            gen("mask", size, s, P(f"{s}_{size}.pgm"), "--seed", "5")
    gen("mask", "17x13", "holes", P("holes01_17x13.pgm"), "--seed", "5", "--on", "1")
    gen("mask", "17x13", "full", P("full_17x13.pgm"))
    check("natural 233x171 / 41x29 cut / ring", P("nat.bmp"), P("nat_tpl.bmp"), P("ring_41x29.pgm"), d)
    check("natural 233x171 / 41x29 cut / holes", P("nat.bmp"), P("nat_tpl.bmp"), P("holes_41x29.pgm"), d)
    check("natural 233x171 / 41x29 cut / one pixel", P("nat.bmp"), P("nat_tpl.bmp"), P("dot_41x29.pgm"), d)
    ch, cw = read_grey(P("capsules_small_template.bmp")).shape
    gen("mask", f"{cw}x{ch}", "disc", P("disc_caps.pgm"))
    check("capsules 320x200 / template / disc", P("capsules_small.bmp"), P("capsules_small_template.bmp"),
          P("disc_caps.pgm"), d)
    for s in ("ring", "holes", "checker", "dot", "corner"):
        check(f"noise 131x97 flat patches / 17x13 cut / {s}", P("noise.pgm"), P("noise_tpl.pgm"),
              P(f"{s}_17x13.pgm"), d)
    check("tiny 4x3 / 3x2 / holes", P("tiny.pgm"), P("tiny_tpl.pgm"), P("holes_3x2.pgm"), d)
    check_same("noise / full mask = no mask", P("noise.pgm"), P("noise_tpl.pgm"), P("full_17x13.pgm"), None, d)
    check_same("noise / 0-1 mask = 0-255 mask", P("noise.pgm"), P("noise_tpl.pgm"), P("holes01_17x13.pgm"),
               P("holes_17x13.pgm"), d)
common.finish()
