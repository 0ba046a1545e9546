// A stand-in for xeus' <xeus/xguid.hpp>, for tests/notebooks/live_progress_xeus.cpp: this
// machine has no xeus kernel. The real xguid is a string-like id.
#pragma once
#include <string>

namespace xeus {
using xguid = std::string;
inline xguid new_xguid() {
  static int next = 0;
  return "display-" + std::to_string(++next);
}
}  // namespace xeus
