// NumPy .npy (format 1.0, little endian, C order) writer and reader.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace parvis {

enum class DType { U8, U32, U64, F32, F64 };

size_t dtype_size(DType t);

struct NpyArray {
  DType dtype = DType::U8;
  std::vector<size_t> shape;
  std::vector<uint8_t> bytes;  // element data, little endian, C order
  size_t count() const;
};

// Serialises `data` (count = product of shape) into .npy bytes.
Status npy_encode(DType t, const void* data, const std::vector<size_t>& shape,
                  std::vector<uint8_t>* out);
// Writes atomically (see output.hpp).
Status npy_write(const std::string& path, DType t, const void* data,
                 const std::vector<size_t>& shape);

Status npy_decode(const uint8_t* data, size_t n, NpyArray* out);
Status npy_read(const std::string& path, NpyArray* out);

}  // namespace parvis
