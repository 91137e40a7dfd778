"""parvis: exact image kernels on NumPy arrays.

Every version of parvis (seq, simd, omp, cuda-naive, cuda-opt, ...) is its own extension module
(``parvis._seq``, ``parvis._cuda_opt``, ...), built by ``make python``; they give the same answers
bit for bit, only the speed differs. ``versions()`` lists those this build has. Arrays are uint8,
H x W (grey) or H x W x 3 (``order="rgb"`` or ``"bgr"``), any strides; contiguous rows are read
in place. Bad input raises ValueError or TypeError with the command line's message.

    import parvis, numpy as np
    m = parvis.Matcher(template, metric="ncc", version="cuda-opt")
    r = m.run(frame)          # r.matches[0].x, .y, .score
"""
import importlib
from collections import namedtuple

__all__ = ["versions", "Matcher", "Match", "MatchResult", "match", "Filter", "filter",
           "Blur", "blur", "radial_map", "integral", "count_in_range", "named_range", "device_name", "read_image", "frames"]

_ORDER = ["seq", "simd", "omp", "cuda-naive", "cuda-opt",
          "blur-v1", "blur-v2", "blur-v3", "blur-v4", "blur-v5"]


def _load(version):
    try:
        return importlib.import_module("parvis._" + version.replace("-", "_"))
    except ImportError:
        return None


def versions():
    """The versions this build has (each one's extension module loads)."""
    return [v for v in _ORDER if _load(v) is not None]


def _module(version):
    if version is None:
        version = "seq"
    mod = _load(version)
    if mod is None:
        raise ValueError("parvis has no version '%s' here (versions(): %s)" % (version, versions()))
    return mod


def _any_module():
    """The first version that loads: for what every version does alike (files, frames)."""
    for v in _ORDER:
        mod = _load(v)
        if mod is not None:
            return mod
    raise ImportError("parvis: no version's module is built (make python)")


Match = namedtuple("Match", "x y score sx sy fitted matching total fraction full")
Match.__doc__ = """One match: the template's top-left corner (x, y) and its score (the exact SSD or
SAD, or the normed score); the sub-pixel fit (sx, sy, fitted; subpixel=True); the colour check
(matching and total pixels, their fraction, full; color=...)."""

MatchResult = namedtuple("MatchResult", "matches map method explain compute_ms")
MatchResult.__doc__ = """A run's answer: matches (best first), the score map (map=True, else None),
the method that ran and why, and the version's compute time in ms."""


class Matcher:
    """A template prepared once and run on many sources (``./main match``'s options, typed).

    Matcher(template, metric="ssd"|"sad"|"ncc"|"ccorr-normed", method="auto"|"direct"|"fft",
            top=1, max_score=None (ssd, sad) | min_score=None (normed): every match,
            min_distance=0, subpixel=False, map=False, mask=None, color=None ("blue"),
            hsv_min=None, hsv_max=None, full_ratio=0.2, order="rgb", version="seq")
    One run at a time per matcher; several matchers may run in several threads (the GIL is
    released while they compute).
    """

    def __init__(self, template, version=None, **options):
        self._m = _module(version).Matcher(template, **options)
        self.version = version or "seq"

    def time_cpp(self, source, order="rgb", repeats=100):
        """Seconds per run of the C++ call alone, in a loop without Python (for the bench)."""
        return self._m.time_cpp(source, order, repeats)

    def run(self, source, order="rgb"):
        """Finds the template in `source`; returns a MatchResult."""
        matches, score_map, method, explain, ms = self._m.run(source, order)
        return MatchResult([Match(*m) for m in matches], score_map, method, explain, ms)


def match(source, template, version=None, order="rgb", **options):
    """One source, one template: Matcher(template, **options).run(source)."""
    return Matcher(template, version=version, order=order, **options).run(source, order)


class Filter:
    """A filter (``./main filter``) prepared for one shape: Filter(kernel="box", size=3,
    kernel_text="" (a kernel file's text), border="zero"|"replicate"|"reflect101", shape=(H, W)
    or (H, W, 3), order="rgb", version="seq"); run(image) returns the filtered array."""

    def __init__(self, shape, kernel="box", size=3, kernel_text="", border="zero", order="rgb",
                 version=None):
        channels = shape[2] if len(shape) == 3 else 1
        self._f = _module(version).Filter(kernel, size, kernel_text, border, shape[1], shape[0],
                                          channels, order)

    def run(self, image):
        return self._f.run(image)


def filter(image, kernel="box", size=3, kernel_text="", border="zero", order="rgb", version=None):
    """The filtered image (``./main filter``), the input's shape."""
    return Filter(image.shape, kernel, size, kernel_text, border, order, version).run(image)


class Blur:
    """The blur map (``./main blur``) prepared for one sigma_max (its tap sets made once):
    Blur(sigma_max=5.0, order="rgb", version="seq"); run(image, map) returns the blurred array."""

    def __init__(self, sigma_max=5.0, order="rgb", version=None):
        self._b = _module(version).Blur(sigma_max)
        self._order = order

    def run(self, image, map):
        return self._b.run(image, map, self._order)


def blur(image, map, sigma_max=5.0, order="rgb", version=None):
    """Each channel blurred with sigma = sigma_max * map / 255 per pixel (``./main blur``)."""
    return Blur(sigma_max, order, version).run(image, map)


def radial_map(width, height, version=None):
    """The map of ``./main blur --radial``: sharp centre, blurred rim (H x W uint8)."""
    return _module(version).radial_map(width, height)


def integral(image, type="auto", squared=False, version=None):
    """The inclusive integral image of a grey array (``./main integral``): uint32, uint64 or
    float64, as `type` says (auto: the smallest exact one)."""
    return _module(version).integral(image, type, squared)


def count_in_range(image, rect, hsv_min=(100, 80, 50), hsv_max=(130, 255, 255), order="rgb",
                   version=None):
    """(matching, total): the pixels of rect = (x, y, w, h) whose HSV (OpenCV's 8-bit
    convention) lies in [hsv_min, hsv_max]."""
    x, y, w, h = rect
    return _module(version).count_in_range(image, x, y, w, h, list(hsv_min), list(hsv_max), order)


def named_range(name, version=None):
    """(hsv_min, hsv_max) of a named range ("blue")."""
    return _module(version).named_range(name)


def read_image(path):
    """An image file as an array (BMP, PGM/PPM; PNG/JPEG/TGA where the build has stb): H x W
    for grey, H x W x 3 RGB otherwise."""
    return _any_module().read_image(path)


def frames(path):
    """The frames of a video as ``./main video`` reads them (Y4M, or anything ffmpeg reads),
    each an H x W x 3 RGB array made by its one integer YUV formula."""
    reader = _any_module().VideoReader(path)
    while True:
        frame = reader.next()
        if frame is None:
            return
        yield frame


def device_name(version=None):
    """What a version computes on."""
    return _module(version).device_name()
