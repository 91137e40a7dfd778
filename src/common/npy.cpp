#include "common/npy.hpp"

#include <cstring>

#include "common/output.hpp"

namespace parvis {
namespace {

const char* descr_of(DType t) {
  switch (t) {
    case DType::U8: return "|u1";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
  }
  return "?";
}

const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::U8: return 1;
    case DType::U32: case DType::F32: return 4;
    case DType::U64: case DType::F64: return 8;
  }
  return 0;
}

size_t NpyArray::count() const {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  return n;
}

Status npy_encode(DType t, const void* data, const std::vector<size_t>& shape,
                  std::vector<uint8_t>* out) {
  size_t count = 1;
  for (size_t s : shape) {
    if (s != 0 && count > SIZE_MAX / s) return Status::bad_input("npy array too large");
    count *= s;
  }
  if (count > SIZE_MAX / dtype_size(t)) return Status::bad_input("npy array too large");
  std::string shp = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    shp += std::to_string(shape[i]);
    shp += (shape.size() == 1 || i + 1 < shape.size()) ? "," : "";
    if (i + 1 < shape.size()) shp += " ";
  }
  shp += ")";
  std::string header = std::string("{'descr': '") + descr_of(t) +
                       "', 'fortran_order': False, 'shape': " + shp + ", }";
  // Pad so that magic(6) + version(2) + len(2) + header + '\n' is a multiple of 64.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  out->clear();
  out->insert(out->end(), kMagic, kMagic + 6);
  out->push_back(1);
  out->push_back(0);
  out->push_back(uint8_t(header.size() & 0xff));
  out->push_back(uint8_t(header.size() >> 8));
  out->insert(out->end(), header.begin(), header.end());
  const uint8_t* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + count * dtype_size(t));  // x86/ARM hosts are little endian
  return Status::Ok();
}

Status npy_write(const std::string& path, DType t, const void* data,
                 const std::vector<size_t>& shape) {
  std::vector<uint8_t> bytes;
  PARVIS_TRY(npy_encode(t, data, shape, &bytes));
  return write_file_atomic(path, bytes.data(), bytes.size());
}

Status npy_decode(const uint8_t* data, size_t n, NpyArray* out) {
  if (n < 10 || std::memcmp(data, kMagic, 6) != 0) return Status::bad_input("not a .npy file");
  const int major = data[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = size_t(data[8]) | size_t(data[9]) << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) return Status::bad_input("truncated .npy header");
    hlen = size_t(data[8]) | size_t(data[9]) << 8 | size_t(data[10]) << 16 | size_t(data[11]) << 24;
    hstart = 12;
  } else {
    return Status::bad_input("unsupported .npy version");
  }
  if (hlen > n - hstart) return Status::bad_input("truncated .npy header");
  const std::string h(reinterpret_cast<const char*>(data + hstart), hlen);
  NpyArray a;
  bool found = false;
  for (DType t : {DType::U8, DType::U32, DType::U64, DType::F32, DType::F64}) {
    if (h.find(std::string("'") + descr_of(t) + "'") != std::string::npos) a.dtype = t, found = true;
  }
  if (!found) return Status::bad_input("unsupported .npy dtype");
  if (h.find("'fortran_order': False") == std::string::npos)
    return Status::bad_input("Fortran-ordered .npy not supported");
  const size_t sp = h.find("'shape': (");
  if (sp == std::string::npos) return Status::bad_input("no shape in .npy header");
  size_t i = sp + 10;
  while (i < h.size() && h[i] != ')') {
    if (h[i] >= '0' && h[i] <= '9') {
      size_t v = 0;
      while (i < h.size() && h[i] >= '0' && h[i] <= '9') {
        if (v > (SIZE_MAX - 9) / 10) return Status::bad_input("bad .npy shape");
        v = v * 10 + size_t(h[i++] - '0');
      }
      a.shape.push_back(v);
    } else {
      ++i;
    }
  }
  size_t count = 1;
  for (size_t s : a.shape) {
    if (s != 0 && count > SIZE_MAX / s) return Status::bad_input("bad .npy shape");
    count *= s;
  }
  const size_t body = n - hstart - hlen;
  if (count > body / dtype_size(a.dtype) || count * dtype_size(a.dtype) != body)
    return Status::bad_input(".npy data size does not match its shape");
  a.bytes.assign(data + hstart + hlen, data + n);
  *out = std::move(a);
  return Status::Ok();
}

Status npy_read(const std::string& path, NpyArray* out) {
  std::vector<uint8_t> bytes;
  PARVIS_TRY(read_file(path, &bytes, size_t(1) << 36));  // for the test tools: any map
  return npy_decode(bytes.data(), bytes.size(), out);
}

}  // namespace parvis
