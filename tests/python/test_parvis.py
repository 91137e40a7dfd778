"""The Python module against the command line: every operation through parvis equals
`bin/<version> ...`'s output byte for byte, on noise, odd sizes and odd strides; bad input raises;
two matchers run in two threads. Run by tests/library.sh (./test), which sets PYTHONPATH to
the repository and PARVIS_TEST_VERSIONS to the versions under test."""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import parvis

BIN = os.environ.get("PARVIS_BIN", "bin")
WANTED = os.environ.get("PARVIS_TEST_VERSIONS", "seq").split()


def _usable(v):
    try:
        parvis.device_name(version=v)
        return True
    except RuntimeError:  # a CUDA version without a device
        return False


VERSIONS = [v for v in parvis.versions() if v in WANTED and os.path.exists(os.path.join(BIN, v))]
USABLE = [v for v in VERSIONS if _usable(v)]
# blur-v1 ... blur-v5 are seed 002's ladder: the blur map only (docs/DESIGN.md, "Versions").
FULL = [v for v in USABLE if not v.startswith("blur-v")]
if not USABLE:
    pytest.skip("no version to test here (built: %s, wanted: %s)" % (parvis.versions(), WANTED),
                allow_module_level=True)


def noise(shape, seed):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def write_pnm(path, a):
    """PGM (H x W) or PPM (H x W x 3, RGB)."""
    a = np.ascontiguousarray(a)
    magic = b"P5" if a.ndim == 2 else b"P6"
    with open(path, "wb") as f:
        f.write(magic + b"\n%d %d\n255\n" % (a.shape[1], a.shape[0]))
        f.write(a.tobytes())


def read_pnm(path):
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    w, h = int(fields[1]), int(fields[2])
    shape = (h, w) if fields[0] == b"P5" else (h, w, 3)
    return np.frombuffer(data[pos:], dtype=np.uint8).reshape(shape)


def cli(version, *args):
    r = subprocess.run([os.path.join(BIN, version)] + [str(a) for a in args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def scene(seed, shape=(83, 117, 3)):
    """Noise with a brighter, bluish patch: a template cut from it has one best match."""
    src = noise(shape, seed)
    tpl = src[21:40, 33:56].copy()
    return src, tpl


# ---------------------------------------------------------------------------- matching
MATCH_CASES = [
    dict(metric="ssd"),
    dict(metric="sad", top=5),
    dict(metric="ncc"),
    dict(metric="ccorr-normed", top=3),
    dict(metric="ssd", method="fft", top=4),
    dict(metric="ssd", max_score=2600000, min_distance=6, color="blue"),
    dict(metric="ncc", min_score=0.1, min_distance=4),
    dict(metric="ssd", subpixel=True, top=2),
]


def cli_args(o):
    args = ["--metric", o.get("metric", "ssd")]
    if "method" in o:
        args += ["--method", o["method"]]
    if "top" in o:
        args += ["--top", o["top"]]
    if "max_score" in o:
        args += ["--all", "--max-score", o["max_score"]]
    if "min_score" in o:
        args += ["--all", "--min-score", o["min_score"]]
    if "min_distance" in o:
        args += ["--min-distance", o["min_distance"]]
    if o.get("subpixel"):
        args += ["--subpixel"]
    if "color" in o:
        args += ["--color", o["color"]]
    return args


def same_matches(got, want_json, o):
    want = json.loads(want_json)
    top = want["top"]
    assert len(got.matches) == len(top)
    for m, w in zip(got.matches, top):
        assert (m.x, m.y) == (w["x"], w["y"])
        assert m.score == w["score"]  # the same bits: JSON prints doubles round-trip
        if o.get("subpixel"):
            assert (m.sx, m.sy, m.fitted) == (w["sx"], w["sy"], w["fitted"])
        if "verdict" in w:
            assert ("full" if m.full else "empty") == w["verdict"]
    if "color" in want and got.matches:
        assert got.matches[0].matching == want["color"]["matching"]
        assert got.matches[0].total == want["color"]["total"]


@pytest.mark.parametrize("version", FULL)
@pytest.mark.parametrize("case", range(len(MATCH_CASES)))
def test_match_equals_cli(version, case, tmp_path):
    o = MATCH_CASES[case]
    src, tpl = scene(10 + case)
    write_pnm(tmp_path / "src.ppm", src)
    write_pnm(tmp_path / "tpl.ppm", tpl)
    want = cli(version, "match", tmp_path / "src.ppm", tmp_path / "tpl.ppm", "--json", *cli_args(o))
    got = parvis.match(src, tpl, version=version, **o)
    same_matches(got, want, o)


@pytest.mark.parametrize("version", FULL)
def test_match_views_in_place_and_copied(version, tmp_path):
    """Grey, RGB, BGR, rows with a gap, stepped and flipped views: one answer."""
    src, tpl = scene(3, (90, 101, 3))
    write_pnm(tmp_path / "src.ppm", src)
    write_pnm(tmp_path / "tpl.ppm", tpl)
    want = cli(version, "match", tmp_path / "src.ppm", tmp_path / "tpl.ppm", "--json", "--top", 3)
    m = parvis.Matcher(tpl, top=3, version=version)
    wide = np.zeros((90, 140, 3), np.uint8)
    wide[:, 7:108] = src  # rows 140 * 3 bytes apart
    big = np.zeros((180, 202, 3), np.uint8)
    big[::2, ::2] = src  # every other pixel: copied
    for view, order in [(src, "rgb"), (wide[:, 7:108], "rgb"), (big[::2, ::2], "rgb"),
                        (src[..., ::-1], "bgr"), (np.ascontiguousarray(src[..., ::-1]), "bgr")]:
        same_matches(m.run(view, order=order), want, {})
    gray = parvis.Matcher(tpl, top=3, version=version).run(src)  # RGB made grey by the version
    same_matches(gray, want, {})


@pytest.mark.parametrize("version", FULL)
def test_match_map(version, tmp_path):
    src, tpl = scene(5, (40, 51))
    src = src[..., 0] if src.ndim == 3 else src
    tpl = src[9:20, 13:30].copy()
    write_pnm(tmp_path / "src.pgm", src)
    write_pnm(tmp_path / "tpl.pgm", tpl)
    cli(version, "match", tmp_path / "src.pgm", tmp_path / "tpl.pgm", "--method", "direct",
        "--map", tmp_path / "map.npy")
    got = parvis.match(src, tpl, version=version, method="direct", map=True)
    assert np.array_equal(got.map, np.load(tmp_path / "map.npy"))


# ---------------------------------------------------------------------------- other operations
@pytest.mark.parametrize("version", FULL)
@pytest.mark.parametrize("kernel,size,border", [("gaussian", 5, "reflect101"), ("sharpen", 3, "zero"),
                                                ("box", 5, "replicate")])
def test_filter_equals_cli(version, kernel, size, border, tmp_path):
    for shape in [(37, 53, 3), (29, 31)]:
        img = noise(shape, 7)
        write_pnm(tmp_path / "in.pnm", img)
        cli(version, "filter", tmp_path / "in.pnm", tmp_path / "out.pnm", "--kernel", kernel,
            "--size", size, "--border", border)
        want = read_pnm(tmp_path / "out.pnm")
        assert np.array_equal(parvis.filter(img, kernel, size, border=border, version=version), want)
        if img.ndim == 3:  # BGR in, BGR out; and a prepared filter run twice
            f = parvis.Filter(img.shape, kernel, size, border=border, order="bgr", version=version)
            assert np.array_equal(f.run(img[..., ::-1])[..., ::-1], want)
            assert np.array_equal(f.run(img[..., ::-1])[..., ::-1], want)


@pytest.mark.parametrize("version", VERSIONS)
def test_blur_equals_cli(version, tmp_path):
    if version not in USABLE:
        pytest.skip("no device")
    img, bmap = noise((41, 57, 3), 8), noise((41, 57), 9)
    write_pnm(tmp_path / "in.ppm", img)
    write_pnm(tmp_path / "map.pgm", bmap)
    r = subprocess.run([os.path.join(BIN, version), "blur", tmp_path / "in.ppm", tmp_path / "out.ppm",
                        "--map", tmp_path / "map.pgm", "--sigma-max", "2.5"], capture_output=True, text=True)
    if "is not implemented in" in r.stderr:
        with pytest.raises(ValueError, match="is not implemented in"):
            parvis.blur(img, bmap, 2.5, version=version)
        return
    assert r.returncode == 0, r.stderr
    want = read_pnm(tmp_path / "out.ppm")
    assert np.array_equal(parvis.blur(img, bmap, 2.5, version=version), want)
    b = parvis.Blur(2.5, order="bgr", version=version)  # prepared once, run twice, BGR
    for _ in range(2):
        assert np.array_equal(b.run(img[..., ::-1], bmap)[..., ::-1], want)


@pytest.mark.parametrize("version", FULL)
@pytest.mark.parametrize("squared", [False, True])
def test_integral_equals_cli(version, squared, tmp_path):
    img = noise((33, 71), 11)
    write_pnm(tmp_path / "in.pgm", img)
    cli(version, "integral", tmp_path / "in.pgm", "--out", tmp_path / "i.npy", *(["--squared"] if squared else []))
    want = np.load(tmp_path / "i.npy")
    got = parvis.integral(img[:, :], squared=squared, version=version)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("version", FULL)
def test_count_in_range(version):
    img = noise((20, 30, 3), 12)
    img[5:15, 5:25] = (30, 60, 200)  # blue
    lo, hi = parvis.named_range("blue", version=version)
    matching, total = parvis.count_in_range(img, (2, 3, 25, 14), lo, hi, version=version)
    assert total == 25 * 14 and matching >= 10 * 20
    assert parvis.count_in_range(img[..., ::-1], (2, 3, 25, 14), lo, hi, order="bgr",
                                 version=version) == (matching, total)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("version", FULL)
def test_bad_input_raises(version):
    tpl = noise((5, 6), 1)
    with pytest.raises(TypeError, match="uint8"):
        parvis.Matcher(tpl.astype(np.float32), version=version)
    with pytest.raises(ValueError, match="unsupported channel count 4"):
        parvis.Matcher(noise((5, 6, 4), 1), version=version)
    with pytest.raises(ValueError, match="is not positive"):
        parvis.Matcher(np.zeros((0, 6), np.uint8), version=version)
    with pytest.raises(ValueError, match="dimensions"):
        parvis.Matcher(np.zeros(6, np.uint8), version=version)
    m = parvis.Matcher(tpl, version=version)
    with pytest.raises(ValueError, match="template"):
        m.run(noise((4, 20), 2))  # smaller than the template
    with pytest.raises(ValueError):
        parvis.Matcher(tpl, metric="nope", version=version)
    with pytest.raises(ValueError, match="min_score"):
        parvis.Matcher(tpl, metric="ncc", max_score=5, version=version)
    with pytest.raises(ValueError, match="HSV range"):
        parvis.Matcher(tpl, hsv_min=(200, 0, 0), version=version)
    with pytest.raises(ValueError):
        parvis.filter(noise((5, 6), 1), kernel="nope", version=version)
    with pytest.raises(ValueError, match="no version"):
        parvis.Matcher(tpl, version="nope")
    # non-contiguous arrays are taken (copied), not refused
    assert parvis.Matcher(noise((12, 14), 3)[::2, ::2], version=version).run(noise((20, 21), 4)[::-1]).matches


# ---------------------------------------------------------------------------- threads
@pytest.mark.parametrize("version", FULL)
def test_two_matchers_two_threads(version):
    src_a, tpl_a = scene(21)
    src_b, tpl_b = scene(22)
    ma = parvis.Matcher(tpl_a, metric="ncc", top=2, version=version)
    mb = parvis.Matcher(tpl_b, metric="ssd", top=2, version=version)
    want = {"a": ma.run(src_a).matches, "b": mb.run(src_b).matches}
    got, errors = {"a": [], "b": []}, []

    def work(name, m, src):
        try:
            for _ in range(20):
                got[name].append(m.run(src).matches)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=("a", ma, src_a)),
               threading.Thread(target=work, args=("b", mb, src_b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == want["a"] for r in got["a"]) and all(r == want["b"] for r in got["b"])


# ---------------------------------------------------------------------------- the example
@pytest.mark.parametrize("version", FULL)
def test_production_line_example(version, tmp_path):
    """examples/production_line.py's CSV equals ./main video's, frame by frame."""
    clip, tpl = tmp_path / "line.y4m", tmp_path / "tpl.ppm"
    subprocess.run([os.path.join(BIN, "parvis-gen"), "line", "320x180", clip, "--frames", "12",
                    "--template", tpl], check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), "."])))
    r = subprocess.run([sys.executable, "examples/production_line.py", clip, tpl, "--csv",
                        tmp_path / "py.csv", "--plot", tmp_path / "py.png", "--version", version],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    want = cli(version, "video", clip, tpl, "--color", "blue", "--csv", "--no-time")
    got = open(tmp_path / "py.csv").read()
    assert got == want and got.count("\n") == 13
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "py.png").stat().st_size > 1000
    except ImportError:
        pass
