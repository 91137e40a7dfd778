// Status is part of the public API (include/parvis/status.hpp); the internal code includes it
// from here.
#pragma once
#include "parvis/status.hpp"
