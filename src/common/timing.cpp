#include "common/timing.hpp"

#include <chrono>

namespace parvis {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace parvis
