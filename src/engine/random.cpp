#include "kerascpp/random.hpp"

#include <atomic>
#include <cmath>
#include <mutex>
#include <random>

namespace kerascpp {
namespace {
std::mutex g_mu;
Rng& global_rng() {
  static Rng rng(std::random_device{}());  // unseeded runs differ, like Keras without set_random_seed
  return rng;
}
}  // namespace

void set_random_seed(std::uint64_t seed) {
  std::lock_guard lock(g_mu);
  global_rng().set_state(seed);
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
