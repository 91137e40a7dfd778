// Where an operation's time went: every version fills a Timings (include/parvis/timings.hpp),
// the CLI prints it.
#pragma once
#include "parvis/timings.hpp"

namespace parvis {

// Monotonic milliseconds.
double now_ms();

}  // namespace parvis
