#!/usr/bin/env python3
"""Checks `match --metric ncc | ccorr-normed` against an independent computation and OpenCV.

  tests/ncc_check.py [BIN...]    (default bin/seq; needs python3 with numpy, cv2 for part 2)

For each version BIN, on generated inputs (noise with flat patches, photo-like scenes, the
production-line scene, odd sizes, flat and zero templates):
  1. the `--map` (float64 .npy) against TM_CCOEFF_NORMED / TM_CCORR_NORMED from their
     definitions, computed here from exact integer sums (numpy int64 window sums, Python
     integers for n*SIT - SI*ST and the variances) and a 50-digit decimal square root and
     quotient: every entry within 1e-12 (in practice a few ulps), flat windows exactly 0, a
     flat template exactly 1 (ncc), zero windows or template exactly 0 (ccorr-normed); and the
     printed best position is the map's largest entry, ties to the smallest y, then x;
  2. the map against OpenCV's cv2.matchTemplate on the same grey images: within 1e-4 at every
     position, and the same best location wherever OpenCV's best is unambiguous (its runner-up
     lower by more than 1e-4).
Ends with "N passed, N failed, N skipped" (tests/gpu/lib.sh's contract; tests/gpu/match.sh
runs it on the CUDA versions). Exit 0 when all agree, 1 otherwise, 77 when numpy is missing.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import match_check_common as common  # noqa: E402  (exits 77 when numpy is missing)
from match_check_common import best_of, cv2, fail, np, run_match  # noqa: E402


def read_grey(path):
    return common.read_grey(BINS[0], path)


def window_sums(img, th, tw, tpl=None):
    """Exact integer sums over every th x tw window (int64): sum I, sum I^2 and sum I*T."""
    a = img.astype(np.int64)
    mh, mw = a.shape[0] - th + 1, a.shape[1] - tw + 1
    si = np.zeros((mh, mw), np.int64)
    sii = np.zeros((mh, mw), np.int64)
    sit = np.zeros((mh, mw), np.int64)
    for j in range(th):
        for i in range(tw):
            win = a[j:j + mh, i:i + mw]
            si += win
            sii += win * win
            if tpl is not None:
                sit += win * int(tpl[j, i])
    return si, sii, sit


def definition(img, tpl, coeff):
    th, tw = tpl.shape
    n = th * tw
    si, sii, sit = window_sums(img, th, tw, tpl)
    t = tpl.astype(np.int64)
    st, stt = int(t.sum()), int((t * t).sum())
    out = np.zeros(si.shape, np.float64)
    for y in range(si.shape[0]):
        for x in range(si.shape[1]):
            out[y, x] = common.normed_value(coeff, n, int(si[y, x]), int(sii[y, x]), int(sit[y, x]),
                                            st, stt)[0]
    return out


def check(name, src, tpl, d):
    img, t = read_grey(src), read_grey(tpl)
    for metric, coeff, cv_method in (("ncc", True, "TM_CCOEFF_NORMED"),
                                     ("ccorr-normed", False, "TM_CCORR_NORMED")):
        want = definition(img, t, coeff)
        cvmap = None
        if cv2 is not None:
            cvmap = cv2.matchTemplate(img, t, getattr(cv2, cv_method)).astype(np.float64)
        for exe in BINS:
            label = f"{os.path.basename(exe)} {name} {metric}"
            res, got = run_match(exe, src, tpl, metric, os.path.join(d, "map.npy"))
            if got.shape != want.shape:
                fail(f"{label}: map shape {got.shape}, expected {want.shape}")
                continue
            diff = float(np.max(np.abs(got - want)))
            # Flat windows (0), a flat template (1): exactly, not within a tolerance.
            exact_flat = bool(np.all(got[want == 0.0] == 0.0)) and bool(np.all(got[want == 1.0] == 1.0))
            bx, by = best_of(got)
            good = diff <= 1e-12 and exact_flat and (res["x"], res["y"]) == (bx, by)
            note = f"max |map - definition| {diff:.2e}, best ({res['x']},{res['y']}) score {res['score']}"
            if cvmap is not None:
                cvdiff = float(np.max(np.abs(cvmap - got)))
                order = np.sort(cvmap.ravel())
                cx, cy = best_of(cvmap)
                unambiguous = order.size < 2 or order[-1] - order[-2] > 1e-4
                same_best = (cx, cy) == (res["x"], res["y"]) or not unambiguous
                good = good and cvdiff <= 1e-4 and same_best
                note += (f"; OpenCV: max diff {cvdiff:.2e}, best ({cx},{cy})"
                         f"{'' if unambiguous else ' (ambiguous)'}")
            common.report(good, f"{label}: {note}")


gen, write_pgm = common.gen, common.write_pgm


BINS = sys.argv[1:] or ["bin/seq"]
with tempfile.TemporaryDirectory() as d:
    P = lambda name: os.path.join(d, name)
    # Photo-like scenes: templates cut from them (found with score 1) and templates from
    # another scene.
    gen("scene", "333x211", P("nat.bmp"), "--kind", "natural", "--seed", "7",
        "--template", P("nat_tpl.bmp"), "--template-size", "41x29")
    gen("scene", "257x181", P("nat2.bmp"), "--kind", "natural", "--seed", "3",
        "--template", P("nat2_tpl.bmp"), "--template-size", "30x23")
    gen("samples", d)
    gen("crop", P("capsules.bmp"), "150", "120", "61", "37", P("caps_cut.bmp"))
    # Noise with flat patches and a zero band; odd sizes; flat and zero templates.
    rng = common.write_noise_inputs(d, 14)
    write_pgm(P("flat_tpl.pgm"), np.full((5, 7), 90))
    write_pgm(P("zero_tpl.pgm"), np.zeros((4, 3)))
    write_pgm(P("tiny.pgm"), rng.integers(0, 256, (2, 3), dtype=np.uint8))
    write_pgm(P("tiny_tpl.pgm"), rng.integers(0, 256, (2, 2), dtype=np.uint8))
    check("natural 333x211 / its 41x29 cut", P("nat.bmp"), P("nat_tpl.bmp"), d)
    check("natural 333x211 / another scene's 30x23", P("nat.bmp"), P("nat2_tpl.bmp"), d)
    check("capsules 320x200 / template", P("capsules_small.bmp"), P("capsules_small_template.bmp"), d)
    check("capsules 800x500 / a 61x37 cut", P("capsules.bmp"), P("caps_cut.bmp"), d)
    check("noise 131x97 with flat patches / 17x13 cut", P("noise.pgm"), P("noise_tpl.pgm"), d)
    check("noise / flat template 7x5", P("noise.pgm"), P("flat_tpl.pgm"), d)
    check("noise / zero template 3x4", P("noise.pgm"), P("zero_tpl.pgm"), d)
    check("tiny 3x2 / 2x2", P("tiny.pgm"), P("tiny_tpl.pgm"), d)
common.finish()
