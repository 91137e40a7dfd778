// Integral selftest: seed 004's 8x8 worked example element by element, then noise checked
// against the defining recurrence and the pixel sum, for every output type.
#include <string>

#include "cli/cli.hpp"
#include "cli/selftest.hpp"
#include "integral/integral.hpp"

namespace parvis {

namespace {

using integral::Type;

// Seed 004, "Matrice iniziale" and "Matrice finale", as printed in the document.
const int kSeedInput[8][8] = {
    {1, 4, 6, 7, 7, 5, 7, 9}, {6, 5, 0, 2, 4, 7, 4, 5}, {8, 9, 7, 3, 5, 5, 0, 6},
    {6, 7, 0, 3, 7, 7, 8, 7}, {5, 8, 2, 2, 8, 0, 5, 0}, {2, 7, 1, 3, 0, 5, 9, 3},
    {1, 8, 1, 0, 6, 4, 3, 3}, {5, 9, 8, 5, 1, 9, 2, 8},
};
const int kSeedIntegral[8][8] = {
    {1, 5, 11, 18, 25, 30, 37, 46},         {7, 16, 22, 31, 42, 54, 65, 79},
    {15, 33, 46, 58, 74, 91, 102, 122},     {21, 46, 59, 74, 97, 121, 140, 167},
    {26, 59, 74, 91, 122, 146, 170, 197},   {28, 68, 84, 104, 135, 164, 197, 227},
    {29, 77, 94, 114, 151, 184, 220, 253},  {34, 91, 116, 141, 179, 221, 259, 300},
};

const Type kTypes[] = {Type::U32, Type::U64, Type::F64};

void seed_example(SelftestReport& r) {
  Image in;
  image_alloc(8, 8, 1, &in);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) in.at(x, y)[0] = uint8_t(kSeedInput[y][x]);
  for (Type t : kTypes) {
    const std::string name = std::string("integral seed 004 8x8 example, ") + integral::type_name(t);
    integral::Result res;
    if (!r.expect_ok(name, integral::compute(in, t, false, &res))) return;
    std::string diff;
    if (res.type != t || res.width != 8 || res.height != 8) diff = "wrong shape or type";
    for (int i = 0; i < 64 && diff.empty(); ++i)
      if (integral::element(res, size_t(i)) != uint64_t(kSeedIntegral[i / 8][i % 8]))
        diff = "(" + std::to_string(i / 8) + "," + std::to_string(i % 8) + "): got " +
               std::to_string(integral::element(res, size_t(i))) + ", want " +
               std::to_string(kSeedIntegral[i / 8][i % 8]);
    r.check(name, diff.empty(), diff);
  }
}

void noise(SelftestReport& r) {
  Image in;
  integral::random_image(37, 23, 7, &in);
  uint64_t sum = 0, sum_sq = 0;
  for (uint8_t p : in.pixels) {
    sum += p;
    sum_sq += uint64_t(p) * p;
  }
  uint64_t checksum_u64 = 0;
  for (bool squared : {false, true})
    for (Type t : kTypes) {
      const std::string name = std::string("integral noise 37x23 ") + integral::type_name(t) +
                               (squared ? " squared" : "");
      integral::Result res;
      if (!r.expect_ok(name, integral::compute(in, t, squared, &res))) return;
      // Every element obeys seed 004's formula (1); the last one is the whole sum.
      auto at = [&](int y, int x) -> uint64_t {
        return y < 0 || x < 0 ? 0 : integral::element(res, size_t(y) * 37 + x);
      };
      bool ok = true;
      for (int y = 0; y < 23; ++y)
        for (int x = 0; x < 37; ++x) {
          const uint64_t p = in.at(x, y)[0];
          ok = ok && at(y, x) + at(y - 1, x - 1) == (squared ? p * p : p) + at(y - 1, x) + at(y, x - 1);
        }
      ok = ok && at(22, 36) == (squared ? sum_sq : sum);
      // The same numbers give the same checksum whatever the type.
      if (!squared && t == Type::U64) checksum_u64 = integral::checksum(res);
      if (!squared && t == Type::F64) ok = ok && integral::checksum(res) == checksum_u64;
      r.check(name + ": recurrence, last element = pixel sum", ok);
    }
}

void types(SelftestReport& r) {
  // 2^32 / 255 = 16843009.004: 4096x4112 = 16842752 pixels fit u32, 4097x4112 do not.
  bool ok = integral::resolve_type(Type::Auto, 4096, 4112, false) == Type::U32 &&
            integral::resolve_type(Type::Auto, 4097, 4112, false) == Type::U64 &&
            integral::resolve_type(Type::Auto, 8, 8, true) == Type::U64 &&
            integral::resolve_type(Type::F64, 8, 8, true) == Type::F64 &&
            integral::check_type(Type::U32, 4096, 4112, false).ok() &&
            !integral::check_type(Type::U32, 4097, 4112, false).ok() &&
            !integral::check_type(Type::U32, 300, 300, true).ok() &&
            integral::check_type(Type::F64, 46340, 46340, true).ok();
  r.check("integral type resolution (u32 while W*H*255 < 2^32)", ok);
  Image in;
  integral::random_image(300, 300, 1, &in);
  integral::Result res;
  const Status s = integral::compute(in, Type::U32, true, &res);
  if (s.message.find(" is not implemented in ") != std::string::npos) r.skip("integral u32 overflow refused", s.message);
  else r.check("integral u32 overflow refused", s.code == kExitBadInput, s.message);
}

}  // namespace

void selftest_integral(SelftestReport& r) {
  seed_example(r);
  noise(r);
  types(r);
}

}  // namespace parvis
