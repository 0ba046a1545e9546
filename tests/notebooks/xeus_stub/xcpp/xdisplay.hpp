// A stand-in for xeus-cling's <xcpp/xdisplay.hpp> (same signatures: display(obj) and
// display(obj, id, update), the bundle found by ADL as xeus does), recording each call so a test
// can check what a kernel would have published.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "xeus/xguid.hpp"

namespace xcpp {

struct RecordedDisplay {
  nlohmann::json bundle;
  std::string id;
  bool update = false;
};
inline std::vector<RecordedDisplay>& recorded_displays() {
  static std::vector<RecordedDisplay> displays;
  return displays;
}

template <class T>
void display(const T& t) {
  recorded_displays().push_back({mime_bundle_repr(t), "", false});
}

template <class T>
void display(const T& t, xeus::xguid id, bool update = false) {
  recorded_displays().push_back({mime_bundle_repr(t), id, update});
}

}  // namespace xcpp
