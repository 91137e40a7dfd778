// The Python module of one version (make python): the library's API (include/parvis/parvis.hpp)
// on NumPy arrays through the buffer protocol. parvis/__init__.py wraps the results in
// named tuples and picks the version. Compiled twice: once as the bindings, and once per version
// with PARVIS_MODULE_INIT=_<version>, the module's entry point.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void parvis_bind(py::module_& m);

#ifdef PARVIS_MODULE_INIT
PYBIND11_MODULE(PARVIS_MODULE_INIT, m) { parvis_bind(m); }
#else

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "parvis/parvis.hpp"

namespace {

// A failed Status as the exception Python expects: usage and bad input are ValueError, the
// rest RuntimeError; the message is the command line's.
void raise_if_failed(const parvis::Status& s) {
  if (s.ok()) return;
  if (s.code == parvis::kExitUsage || s.code == parvis::kExitBadInput) throw py::value_error(s.message);
  throw std::runtime_error(s.message);
}

// Without the GIL an exception may not be made: a failed run in a timing loop aborts the loop.
void raise_if_failed_nogil(const parvis::Status& s) {
  if (!s.ok()) {
    py::gil_scoped_acquire gil;
    raise_if_failed(s);
  }
}

// An array as an ImageView: uint8, H x W or H x W x 3. Read in place when each row's pixels are
// contiguous (any row stride); copied into `copy` otherwise.
struct ArrayView {
  py::buffer_info info;
  std::vector<uint8_t> copy;
  parvis::ImageView view;
};

parvis::PixelOrder order_of(const std::string& order, int channels) {
  if (channels == 1) return parvis::PixelOrder::Gray;
  if (order == "rgb") return parvis::PixelOrder::RGB;
  if (order == "bgr") return parvis::PixelOrder::BGR;
  throw py::value_error("order must be 'rgb' or 'bgr', got '" + order + "'");
}

void view_of(const py::buffer& array, const std::string& order, const char* what, ArrayView* out) {
  out->info = array.request();
  const py::buffer_info& b = out->info;
  if (b.format != py::format_descriptor<uint8_t>::format() || b.itemsize != 1)
    throw py::type_error(std::string(what) + ": wants a uint8 array, got format '" + b.format + "'");
  if (b.ndim != 2 && b.ndim != 3)
    throw py::value_error(std::string(what) + ": wants an H x W or H x W x 3 array, got " +
                          std::to_string(b.ndim) + " dimensions");
  const int64_t h = b.shape[0], w = b.shape[1], c = b.ndim == 3 ? b.shape[2] : 1;
  if (c != 1 && c != 3) raise_if_failed(parvis::Status::bad_input("unsupported channel count " + std::to_string(c)));
  if (h <= 0 || w <= 0)
    raise_if_failed(parvis::Status::bad_input("image size " + std::to_string(w) + "x" +
                                              std::to_string(h) + " is not positive"));
  if (h > INT32_MAX || w > INT32_MAX) raise_if_failed(parvis::Status::bad_input("image side too large"));
  const int64_t s0 = b.strides[0], s1 = b.strides[1], s2 = b.ndim == 3 ? b.strides[2] : 1;
  const auto* base = static_cast<const uint8_t*>(b.ptr);
  parvis::ImageView& v = out->view;
  v.width = int(w);
  v.height = int(h);
  v.order = order_of(order, int(c));
  if (s2 == 1 && s1 == c && s0 >= w * c) {
    v.data = base;
    v.stride = size_t(s0);
    return;
  }
  // Not rows of contiguous pixels (a transposed or stepped view, negative strides): packed copy.
  out->copy.resize(size_t(h) * size_t(w) * size_t(c));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k)
        out->copy[size_t((y * w + x) * c + k)] = base[y * s0 + x * s1 + k * s2];
  v.data = out->copy.data();
  v.stride = size_t(w * c);
}

py::array_t<uint8_t> array_of(parvis::ImageBuffer&& img) {
  auto* owner = new parvis::ImageBuffer(std::move(img));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<parvis::ImageBuffer*>(p); });
  std::vector<py::ssize_t> shape{owner->height, owner->width};
  if (owner->channels == 3) shape.push_back(3);
  return py::array_t<uint8_t>(shape, owner->pixels.data(), free_owner);
}

parvis::Metric metric_of(const std::string& s) {
  if (s == "ssd") return parvis::Metric::SSD;
  if (s == "sad") return parvis::Metric::SAD;
  if (s == "ncc") return parvis::Metric::NCC;
  if (s == "ccorr-normed") return parvis::Metric::CCorrNormed;
  throw py::value_error("unknown metric '" + s + "' (ssd, sad, ncc, ccorr-normed)");
}
parvis::Method method_of(const std::string& s) {
  if (s == "auto") return parvis::Method::Auto;
  if (s == "direct") return parvis::Method::Direct;
  if (s == "fft") return parvis::Method::FFT;
  throw py::value_error("unknown method '" + s + "' (auto, direct, fft)");
}
const char* method_name(parvis::Method m) {
  return m == parvis::Method::Direct ? "direct" : m == parvis::Method::FFT ? "fft" : "auto";
}
parvis::HsvRange range_of(const std::vector<int>& lo, const std::vector<int>& hi) {
  if (lo.size() != 3 || hi.size() != 3) throw py::value_error("an HSV bound is three numbers H, S, V");
  return parvis::HsvRange{lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]};
}

// The matcher and the template's pixels' view (kept: prepare copies the template, so only
// the options need to live).
class PyMatcher {
 public:
  PyMatcher(const py::buffer& templ, const std::string& metric, const std::string& method,
            int top, py::object max_score, py::object min_score, int min_distance, bool subpixel,
            bool want_map, py::object mask, py::object color, py::object hsv_min,
            py::object hsv_max, double full_ratio, const std::string& order) {
    parvis::MatchOptions& o = options_;
    o.metric = metric_of(metric);
    o.method = method_of(method);
    o.top = top;
    const bool normed = o.metric == parvis::Metric::NCC || o.metric == parvis::Metric::CCorrNormed;
    if (!max_score.is_none() && normed) throw py::value_error("max_score does not apply to metric " + metric + ": use min_score");
    if (!min_score.is_none() && !normed) throw py::value_error("min_score does not apply to metric " + metric + ": use max_score");
    if (!max_score.is_none()) { o.all = true; o.threshold = double(max_score.cast<int64_t>()); }
    if (!min_score.is_none()) { o.all = true; o.threshold = min_score.cast<double>(); }
    o.min_distance = min_distance;
    o.subpixel = subpixel;
    o.want_map = want_map;
    if (!color.is_none()) o.color = color.cast<std::string>();
    if (!hsv_min.is_none() || !hsv_max.is_none()) {
      parvis::HsvRange r;
      if (!o.color.empty()) raise_if_failed(parvis::named_range(o.color, &r));
      std::vector<int> lo{r.h_min, r.s_min, r.v_min}, hi{r.h_max, r.s_max, r.v_max};
      if (!hsv_min.is_none()) lo = hsv_min.cast<std::vector<int>>();
      if (!hsv_max.is_none()) hi = hsv_max.cast<std::vector<int>>();
      o.use_range = true;
      o.range = range_of(lo, hi);
    }
    o.full_ratio = full_ratio;
    ArrayView t, m;
    view_of(templ, order, "template", &t);
    if (!mask.is_none()) {
      view_of(mask.cast<py::buffer>(), order, "mask", &m);
      o.mask = m.view;
    }
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = matcher_.prepare(t.view, o);
    }
    o.mask = parvis::ImageView{};  // prepare kept its own copy
    raise_if_failed(s);
  }

  // (matches, map or None, method, explain, compute_ms); matches: tuples of
  // (x, y, score, sx, sy, fitted, matching, total, fraction, full).
  // The C++ call alone, `repeats` times in a loop (no Python between): the seconds a call.
  // For bench/python_overhead.py, which sets it beside run()'s time.
  double time_cpp(const py::buffer& source, const std::string& order, int repeats) {
    ArrayView v;
    view_of(source, order, "source", &v);
    py::gil_scoped_release free;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) raise_if_failed_nogil(matcher_.run(v.view, &result_));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
  }

  py::tuple run(const py::buffer& source, const std::string& order) {
    ArrayView v;
    view_of(source, order, "source", &v);
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = matcher_.run(v.view, &result_);
    }
    raise_if_failed(s);
    py::list matches;
    for (const parvis::Match& m : result_.matches)
      matches.append(py::make_tuple(m.x, m.y, m.score, m.sx, m.sy, m.fitted, m.matching, m.total,
                                    m.fraction, m.full));
    py::object map = py::none();
    if (options_.want_map) {
      py::array_t<double> a({result_.map_height, result_.map_width});
      std::memcpy(a.mutable_data(), result_.map.data(), result_.map.size() * sizeof(double));
      map = a;
    }
    return py::make_tuple(matches, map, method_name(result_.method_used), result_.explain,
                          result_.timings.compute_ms);
  }

 private:
  parvis::MatchOptions options_;
  parvis::Matcher matcher_;
  parvis::MatchResult result_;
};

class PyFilter {
 public:
  PyFilter(const std::string& kernel, int size, const std::string& kernel_text,
           const std::string& border, int width, int height, int channels, const std::string& order) {
    parvis::FilterOptions o{kernel, size, kernel_text, border};
    order_ = order;
    const parvis::PixelOrder po = order_of(order, channels);
    if (channels != 1 && channels != 3)
      raise_if_failed(parvis::Status::bad_input("unsupported channel count " + std::to_string(channels)));
    raise_if_failed(filter_.prepare(o, width, height, po));
  }
  py::array_t<uint8_t> run(const py::buffer& image) {
    ArrayView v;
    view_of(image, order_, "image", &v);
    parvis::ImageBuffer out;
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = filter_.run(v.view, &out);
    }
    raise_if_failed(s);
    return array_of(std::move(out));
  }

 private:
  std::string order_;
  parvis::Filter filter_;
};

class PyBlur {
 public:
  explicit PyBlur(double sigma_max) { raise_if_failed(blur_.prepare(sigma_max)); }
  py::array_t<uint8_t> run(const py::buffer& image, const py::buffer& map, const std::string& order) {
    ArrayView v, mv;
    view_of(image, order, "image", &v);
    view_of(map, order, "map", &mv);
    parvis::ImageBuffer out;
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = blur_.run(v.view, mv.view, &out);
    }
    raise_if_failed(s);
    return array_of(std::move(out));
  }

 private:
  parvis::Blur blur_;
};

class PyVideoReader {
 public:
  explicit PyVideoReader(const std::string& path) { raise_if_failed(reader_.open(path)); }
  // The next frame (H x W x 3, RGB), or None after the last.
  py::object next() {
    parvis::ImageBuffer frame;
    bool end = false;
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = reader_.next(&frame, &end);
    }
    raise_if_failed(s);
    if (end) return py::none();
    return array_of(std::move(frame));
  }
  int width() const { return reader_.width(); }
  int height() const { return reader_.height(); }

 private:
  parvis::VideoReader reader_;
};

}  // namespace

void parvis_bind(py::module_& m) {
  m.doc() = "parvis: exact image kernels (one version of the library); see the parvis package";
  m.def("version", &parvis::version, "The version this module is.");
  m.def("device_name", [] {
    std::string name;
    raise_if_failed(parvis::device_name(&name));
    return name;
  }, "What this version computes on (RuntimeError: a CUDA version without a device).");

  py::class_<PyMatcher>(m, "Matcher")
      .def(py::init<const py::buffer&, const std::string&, const std::string&, int, py::object,
                    py::object, int, bool, bool, py::object, py::object, py::object, py::object,
                    double, const std::string&>(),
           py::arg("template"), py::arg("metric") = "ssd", py::arg("method") = "auto",
           py::arg("top") = 1, py::arg("max_score") = py::none(), py::arg("min_score") = py::none(),
           py::arg("min_distance") = 0, py::arg("subpixel") = false, py::arg("map") = false,
           py::arg("mask") = py::none(), py::arg("color") = py::none(),
           py::arg("hsv_min") = py::none(), py::arg("hsv_max") = py::none(),
           py::arg("full_ratio") = 0.2, py::arg("order") = "rgb")
      .def("run", &PyMatcher::run, py::arg("source"), py::arg("order") = "rgb")
      .def("time_cpp", &PyMatcher::time_cpp, py::arg("source"), py::arg("order"), py::arg("repeats"));

  py::class_<PyFilter>(m, "Filter")
      .def(py::init<const std::string&, int, const std::string&, const std::string&, int, int, int,
                    const std::string&>(),
           py::arg("kernel"), py::arg("size"), py::arg("kernel_text"), py::arg("border"),
           py::arg("width"), py::arg("height"), py::arg("channels"), py::arg("order"))
      .def("run", &PyFilter::run, py::arg("image"));

  py::class_<PyVideoReader>(m, "VideoReader")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("next", &PyVideoReader::next)
      .def_property_readonly("width", &PyVideoReader::width)
      .def_property_readonly("height", &PyVideoReader::height);

  m.def("count_in_range", [](const py::buffer& image, int x, int y, int w, int h,
                             const std::vector<int>& lo, const std::vector<int>& hi,
                             const std::string& order) {
    ArrayView v;
    view_of(image, order, "image", &v);
    uint64_t matching = 0, total = 0;
    const parvis::HsvRange r = range_of(lo, hi);
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = parvis::count_in_range(v.view, x, y, w, h, r, &matching, &total);
    }
    raise_if_failed(s);
    return py::make_tuple(matching, total);
  });
  m.def("named_range", [](const std::string& name) {
    parvis::HsvRange r;
    raise_if_failed(parvis::named_range(name, &r));
    return py::make_tuple(py::make_tuple(r.h_min, r.s_min, r.v_min), py::make_tuple(r.h_max, r.s_max, r.v_max));
  });
  py::class_<PyBlur>(m, "Blur")
      .def(py::init<double>(), py::arg("sigma_max"))
      .def("run", &PyBlur::run, py::arg("image"), py::arg("map"), py::arg("order"));
  m.def("read_image", [](const std::string& path) {
    parvis::ImageBuffer out;
    raise_if_failed(parvis::read_image(path, &out));
    return array_of(std::move(out));
  });
  m.def("radial_map", [](int width, int height) {
    parvis::ImageBuffer out;
    raise_if_failed(parvis::radial_map(width, height, &out));
    return array_of(std::move(out));
  });
  m.def("integral", [](const py::buffer& image, const std::string& type, bool squared) {
    ArrayView v;
    view_of(image, "rgb", "image", &v);
    parvis::IntegralType t = parvis::IntegralType::Auto;
    if (type == "u32") t = parvis::IntegralType::U32;
    else if (type == "u64") t = parvis::IntegralType::U64;
    else if (type == "f64") t = parvis::IntegralType::F64;
    else if (type != "auto") throw py::value_error("unknown integral type '" + type + "' (auto, u32, u64, f64)");
    auto owner = std::make_unique<parvis::Integral>();
    parvis::Status s;
    {
      py::gil_scoped_release free;
      s = parvis::integral_image(v.view, t, squared, owner.get());
    }
    raise_if_failed(s);
    const std::vector<py::ssize_t> shape{owner->height(), owner->width()};
    const void* data = owner->data();
    const parvis::IntegralType got = owner->type();
    py::capsule keep(owner.release(), [](void* p) { delete static_cast<parvis::Integral*>(p); });
    if (got == parvis::IntegralType::U32)
      return py::array(py::dtype::of<uint32_t>(), shape, data, keep);
    if (got == parvis::IntegralType::U64)
      return py::array(py::dtype::of<uint64_t>(), shape, data, keep);
    return py::array(py::dtype::of<double>(), shape, data, keep);
  });
}

#endif
