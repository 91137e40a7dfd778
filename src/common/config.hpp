// The one place that reads the environment. Every runtime switch of the product is read
// through here and listed on one page, docs/CONFIG.md:
//   - the variables a user sets (PARVIS_SIMD, PARVIS_FFTW_WISDOM, PARVIS_FFTW_PLANNING,
//     PARVIS_GRAY, PARVIS_UPLOAD);
//   - PARVIS_TUNING=key=value,key=value: the fields of the operations' typed tunings
//     (cuda/<op>/tuning.hpp, src/match/fft_tuning.hpp, ...) for tests and benchmarks;
//   - the system's own variables the product honours (HOME, XDG_CACHE_HOME, PATH, TMPDIR,
//     OMP_NUM_THREADS).
// main() calls check() before anything else: an unknown key or a bad value is a usage error
// (exit 1) that names it, so the getters below never see a malformed value.
#pragma once
#include <string>

#include "common/status.hpp"

namespace parvis::config {

enum class Var { Simd, FftwWisdom, FftwPlanning, Gray, Upload, Tuning };

// The variable's value, or nullptr when it is unset (an empty value counts as set).
const char* get(Var v);
// One of the system variables above (any other name is a programming error: it aborts).
const char* system(const char* name);

// Every user variable and every PARVIS_TUNING key against the table of docs/CONFIG.md.
Status check();

// A PARVIS_TUNING field: `key` must be in the table (a programming error otherwise: it aborts).
// Each returns `fallback` when PARVIS_TUNING does not set the key.
bool tuning_flag(const char* key, bool fallback);                  // 0 or 1
long long tuning_int(const char* key, long long fallback);         // integers; bytes take K/M
double tuning_real(const char* key, double fallback);
std::string tuning_word(const char* key, const std::string& fallback);  // one of the listed words
// Whether PARVIS_TUNING sets the key at all.
bool tuning_set(const char* key);

// The table as docs/CONFIG.md prints it (`./main --config`): one line per key.
std::string describe_keys();

}  // namespace parvis::config
