// The sublayer table of core/sublayers.hpp.
#include "core/sublayers.hpp"

#include <algorithm>
#include <mutex>

namespace kerascpp::detail {

namespace {

struct SublayerEntry {
  std::weak_ptr<Layer> owner;
  std::weak_ptr<Layer> sublayer;  // the owner keeps it alive (Bidirectional's forward_, ...)
};

std::mutex& sublayer_table_mutex() {
  static std::mutex m;
  return m;
}

std::vector<SublayerEntry>& sublayer_table() {
  static std::vector<SublayerEntry> t;
  return t;
}

}  // namespace

void track_sublayer(const std::shared_ptr<Layer>& owner, const std::shared_ptr<Layer>& sublayer) {
  std::lock_guard lock(sublayer_table_mutex());
  auto& t = sublayer_table();
  std::erase_if(t, [](const SublayerEntry& e) { return e.owner.expired(); });  // wrappers destroyed since
  t.push_back({owner, sublayer});
}

std::vector<std::shared_ptr<Layer>> tracked_sublayers(const Layer& owner) {
  std::vector<std::shared_ptr<Layer>> out;
  std::lock_guard lock(sublayer_table_mutex());
  for (const SublayerEntry& e : sublayer_table()) {
    const std::shared_ptr<Layer> o = e.owner.lock();
    if (o.get() != &owner) continue;
    if (auto sub = e.sublayer.lock()) out.push_back(std::move(sub));
  }
  return out;
}

}  // namespace kerascpp::detail
