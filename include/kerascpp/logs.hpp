// Logs: metric name -> value in insertion order ("loss" first, like Keras' progress bar and History).
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/error.hpp"

namespace kerascpp {

class Logs {
 public:
  void set(const std::string& key, double value) {
    for (auto& kv : items_)
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    items_.emplace_back(key, value);
  }
  bool contains(const std::string& key) const {
    for (auto& kv : items_)
      if (kv.first == key) return true;
    return false;
  }
  double at(const std::string& key) const {
    for (auto& kv : items_)
      if (kv.first == key) return kv.second;
    throw ValueError("logs have no entry '" + key + "'; available: " + keys_str());
  }
  double operator[](const std::string& key) const { return at(key); }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  std::string keys_str() const {
    std::string s;
    for (auto& kv : items_) s += (s.empty() ? "" : ", ") + kv.first;
    return s.empty() ? "(none)" : s;
  }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

// {loss: 0.3421, accuracy: 0.875}: every entry, in order (default stream precision, 6 digits).
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
