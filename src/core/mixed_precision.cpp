// Dtype policies and the process-wide global policy.
#include "kerascpp/core/mixed_precision.hpp"

#include <fmt/format.h>

#include <mutex>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::mixed_precision {

namespace {

std::mutex global_mutex;
DTypePolicy& global() {
  static DTypePolicy policy;
  return policy;
}

}  // namespace

DTypePolicy::DTypePolicy(const std::string& name) : name_(name) {
  if (name == "float32") compute_ = DType::float32;
  else if (name == "mixed_bfloat16") compute_ = DType::bfloat16;
  else if (name == "mixed_float16") compute_ = DType::float16;
  else if (name == "bfloat16" || name == "float16")
    throw ValueError(
        fmt::format("dtype policy '{}': kerascpp keeps variables in float32; use \"mixed_{}\" (16-bit "
                    "compute, float32 variables)",
                    name, name));
  else
    throw ValueError(
        fmt::format("unknown dtype policy '{}'; use \"float32\", \"mixed_bfloat16\" or \"mixed_float16\"", name));
}

void set_global_policy(const std::string& name) { set_global_policy(DTypePolicy(name)); }

void set_global_policy(const DTypePolicy& policy) {
  std::lock_guard<std::mutex> lock(global_mutex);
  global() = policy;
}

DTypePolicy global_policy() {
  std::lock_guard<std::mutex> lock(global_mutex);
  return global();
}

std::string compute_path(Backend& backend, DType dtype) { return backend.compute_path(dtype); }

}  // namespace kerascpp::mixed_precision
