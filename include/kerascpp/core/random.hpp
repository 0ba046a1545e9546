// Seeding: set_random_seed makes initializers, dropout and unseeded shuffles reproducible.
// Rng is a small portable generator (splitmix64) so results do not depend on the standard library.
#pragma once
#include <cstdint>

namespace kerascpp {

/// Seeds the process-wide stream that unseeded initializers and layers draw their seeds from.
void set_random_seed(std::uint64_t seed);
/// Next seed from the process-wide stream (deterministic after set_random_seed).
std::uint64_t next_random_seed();

/// A small portable random generator (splitmix64): the same numbers with every standard library.
class Rng {
 public:
  /// A generator whose sequence is fixed by `seed`.
  explicit Rng(std::uint64_t seed = 0) : state_(seed) {}
  /// The next 64 random bits.
  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }  ///< [0, 1)
  /// Uniform in [0, 1) with 53 random bits.
  double uniform_double() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  double normal();  ///< standard normal (Box-Muller)
  /// The whole generator state, to save and later restore with set_state.
  std::uint64_t state() const { return state_; }
  /// Restores a state() (the sequence continues from there).
  void set_state(std::uint64_t s) { state_ = s; }

 private:
  std::uint64_t state_;
};

}  // namespace kerascpp
