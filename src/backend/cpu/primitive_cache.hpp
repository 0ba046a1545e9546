// Per-backend cache of oneDNN primitives keyed by op, shapes and parameters, so that a
// training step in steady state creates no primitives and allocates no argument maps.
#pragma once
#include <fmt/format.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kerascpp::cpu {

// One primitive with its argument memories. The memories are created once without a buffer
// and rebound to the caller's tensors on every call; execution goes through the C API with a
// prebuilt argument array because the C++ execute() builds a std::vector per call.
class CachedPrimitive {
 public:
  CachedPrimitive() = default;
  CachedPrimitive(dnnl::primitive prim, std::size_t scratchpad_bytes)
      : prim_(std::move(prim)), scratchpad_bytes_(scratchpad_bytes) {}

  void add_arg(int arg, const dnnl::memory::desc& md, const dnnl::engine& engine) {
    mems_.emplace_back(md, engine, static_cast<void*>(DNNL_MEMORY_NONE));
    args_.push_back({arg, mems_.back().get()});
  }
  void bind(int arg, const void* data) {
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].arg == arg) {
        mems_[i].set_data_handle(const_cast<void*>(data));
        return;
      }
    throw dnnl::error(dnnl_invalid_arguments, "kerascpp: binding an argument the primitive does not take");
  }
  bool has_arg(int arg) const {
    for (const auto& a : args_)
      if (a.arg == arg) return true;
    return false;
  }
  std::size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  void execute(const dnnl::stream& stream) const {
    dnnl::error::wrap_c_api(
        dnnl_primitive_execute(prim_.get(), stream.get(), static_cast<int>(args_.size()), args_.data()),
        "could not execute a primitive");
  }

 private:
  dnnl::primitive prim_;
  std::size_t scratchpad_bytes_ = 0;
  std::vector<dnnl::memory> mems_;
  std::vector<dnnl_exec_arg_t> args_;
};

// Base of what an op family stores per key (one or more primitives and owned buffers).
struct CacheEntry {
  virtual ~CacheEntry() = default;
};

class PrimitiveCache {
 public:
  // Starts a new key in a reused buffer (no allocation once its capacity suffices).
  std::string& key(const char* op) {
    key_.clear();
    key_ += op;
    key_ += '@';
    const fmt::format_int threads(threads_);
    key_.append(threads.data(), threads.size());
    return key_;
  }
  // Some oneDNN primitives size their scratchpad and split their work for the thread count seen
  // when they are built, so each count keeps its own primitives.
  void set_threads(int threads) { threads_ = threads; }
  template <class... Args>
  void append(Args&&... values) {
    (append_one(std::forward<Args>(values)), ...);
  }
  const std::string& current_key() const { return key_; }
  // Returns the entry for the current key, building it with `build()` on a miss.
  template <class Entry, class Build>
  Entry& get(Build&& build) {
    auto it = map_.find(key_);
    if (it == map_.end()) it = map_.emplace(key_, std::unique_ptr<CacheEntry>(build())).first;
    return static_cast<Entry&>(*it->second);
  }
  void clear() { map_.clear(); }
  std::size_t size() const { return map_.size(); }

 private:
  // Integers through fmt::format_int, which parses no format string: a key is built on every
  // call of an op, about twenty for a batch-1 prediction of the benchmark CNN.
  template <class T>
  void append_one(const T& value) {
    key_ += '|';
    if constexpr (std::is_integral_v<T>) {
      const fmt::format_int digits(value);
      key_.append(digits.data(), digits.size());
    } else fmt::format_to(std::back_inserter(key_), "{}", value);
  }

  std::string key_;
  int threads_ = 0;
  std::unordered_map<std::string, std::unique_ptr<CacheEntry>> map_;
};

}  // namespace kerascpp::cpu
