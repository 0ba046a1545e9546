// The CPU optimizer updates flush decaying slots to zero instead of letting them go denormal
// (src/backend/cpu/optimizer_updates.cpp: denormal arithmetic made the MLP's Adam update ~4x
// slower after ~800 steps). A zero gradient decays each slot geometrically from a small normal
// value: without the flush it would pass through denormals on its way to zero.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <vector>

#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

// Runs `step` 60 times; after each one every value of each slot is 0 or a normal float, and at
// the end each slot is exactly 0 (0.9^60 takes 1e-37 far below FLT_MIN). The weights must not
// change: the updates a tiny slot makes are far below their ulp.
void check_slots_flushed(const std::vector<K::Tensor*>& slots, const K::Tensor& w, const std::function<void()>& step) {
  const std::vector<float> w_before(w.data<float>(), w.data<float>() + w.numel());
  for (int s = 0; s < 60; ++s) {
    step();
    for (const K::Tensor* slot : slots)
      for (std::int64_t i = 0; i < slot->numel(); ++i) {
        const float x = slot->data<float>()[i];
        REQUIRE_MESSAGE((x == 0.f || std::fabs(x) >= FLT_MIN), "a slot went denormal at step ", s + 1, ": ", x);
      }
  }
  for (const K::Tensor* slot : slots)
    for (std::int64_t i = 0; i < slot->numel(); ++i) CHECK(slot->data<float>()[i] == 0.f);
  for (std::int64_t i = 0; i < w.numel(); ++i) CHECK(w.data<float>()[i] == w_before[static_cast<std::size_t>(i)]);
}

}  // namespace

TEST_CASE("cpu optimizer updates: slots decaying under a zero gradient are flushed to zero, never denormal") {
  auto be = K::make_cpu_backend(2);
  const std::int64_t n = 1000;  // several blocks of every vector build
  const float tiny = 1e-37f;    // normal (FLT_MIN is 1.18e-38); the decay takes it below in a few steps
  K::Tensor g = K::Tensor::zeros({n});
  auto fresh = [&](float value) { return K::Tensor::full({n}, value); };

  SUBCASE("adam: both moments") {
    K::Tensor w = fresh(0.25f), m = fresh(tiny), v = fresh(tiny);
    check_slots_flushed({&m, &v}, w, [&] { be->adam_update(w, g, m, v, 1e-3f, 0.9f, 0.5f, 1e-7f); });
  }
  SUBCASE("nadam: both moments") {
    K::Tensor w = fresh(0.25f), m = fresh(-tiny), v = fresh(tiny);
    check_slots_flushed({&m, &v}, w,
                        [&] { be->nadam_update(w, g, m, v, 1e-3f, 0.9f, 0.5f, 1e-7f, 0.9f, 0.9f, 0.5f, 0.25f); });
  }
  SUBCASE("rmsprop: the velocity") {
    K::Tensor w = fresh(0.25f), v = fresh(tiny);
    check_slots_flushed({&v}, w, [&] { be->rmsprop_update(w, g, v, 1e-3f, 0.9f, 1e-7f); });
  }
  SUBCASE("sgd with momentum, plain and Nesterov: the velocity") {
    for (bool nesterov : {false, true}) {
      CAPTURE(nesterov);
      K::Tensor w = fresh(0.25f), velocity = fresh(-tiny);
      check_slots_flushed({&velocity}, w, [&] { be->sgd_update(w, g, velocity, 1e-2f, 0.9f, nesterov); });
    }
  }
}
