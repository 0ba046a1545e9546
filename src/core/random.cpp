#include "kerascpp/core/random.hpp"

#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>
#include <random>

#include "core/session_state.hpp"

namespace kerascpp {
namespace {
std::mutex g_mu;
Rng& global_rng() {
  static Rng rng(std::random_device{}());  // unseeded runs differ, like Keras without set_random_seed
  return rng;
}
std::optional<std::uint64_t> g_seed;  // the last set_random_seed(), where clear_session() restarts
}  // namespace

void set_random_seed(std::uint64_t seed) {
  std::lock_guard lock(g_mu);
  g_seed = seed;
  global_rng().set_state(seed);
}

void detail::restart_random_stream() {
  std::lock_guard lock(g_mu);
  global_rng().set_state(g_seed ? *g_seed : std::random_device{}());
}

std::uint64_t next_random_seed() {
  std::lock_guard lock(g_mu);
  return global_rng().next_u64();
}

double Rng::normal() {
  double u1 = uniform_double();
  double u2 = uniform_double();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

}  // namespace kerascpp
