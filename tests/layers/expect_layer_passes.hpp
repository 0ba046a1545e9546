// The one check every file in tests/layers/ makes: run_layer_test passes, or the failure message
// lists each problem.
#pragma once
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

inline void expect_layer_passes(const K::testing::LayerTestCase& test) {
  const K::testing::LayerTestResult r = K::testing::run_layer_test(test);
  CHECK_MESSAGE(r.passed(), r.summary());
}
