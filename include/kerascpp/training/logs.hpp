// Logs: metric name -> value in insertion order ("loss" first, like Keras' progress bar and History).
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/error.hpp"

namespace kerascpp {

/// Metric name -> value, in insertion order ("loss" first), as callbacks and History get them.
class Logs {
 public:
  /// Sets `key` to `value`; a new key goes last.
  void set(const std::string& key, double value) {
    for (auto& kv : items_)
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    items_.emplace_back(key, value);
  }
  /// Whether `key` has a value.
  bool contains(const std::string& key) const {
    for (auto& kv : items_)
      if (kv.first == key) return true;
    return false;
  }
  /// The value of `key`; ValueError listing the keys there are when it is missing.
  double at(const std::string& key) const {
    for (auto& kv : items_)
      if (kv.first == key) return kv.second;
    throw ValueError("logs have no entry '" + key + "'; available: " + keys_str());
  }
  /// at(key): throws for a missing key, never inserts.
  double operator[](const std::string& key) const { return at(key); }
  /// Whether there are no entries.
  bool empty() const { return items_.empty(); }
  /// The number of entries.
  std::size_t size() const { return items_.size(); }
  /// The first (name, value) pair, in insertion order.
  auto begin() const { return items_.begin(); }
  /// Past the last pair.
  auto end() const { return items_.end(); }
  /// The keys, comma separated ("(none)" when empty), for messages.
  std::string keys_str() const {
    std::string s;
    for (auto& kv : items_) s += (s.empty() ? "" : ", ") + kv.first;
    return s.empty() ? "(none)" : s;
  }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

/// {loss: 0.3421, accuracy: 0.875}: every entry, in order (default stream precision, 6 digits).
inline std::ostream& operator<<(std::ostream& os, const Logs& logs) {
  os << '{';
  bool first = true;
  for (auto& kv : logs) {
    os << (first ? "" : ", ") << kv.first << ": " << kv.second;
    first = false;
  }
  return os << '}';
}

}  // namespace kerascpp
