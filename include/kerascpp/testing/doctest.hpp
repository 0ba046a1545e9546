// doctest integration for kerascpp::testing: failures print tensors, shapes and comparison
// messages instead of `{?}`, and CHECK_ALLCLOSE / REQUIRE_ALLCLOSE compare tensors.
//
//   #include <kerascpp/testing/doctest.hpp>   // includes <doctest/doctest.h>
//   CHECK_ALLCLOSE(model.predict_on_batch(x), expected);              // rtol 1e-5, atol 1e-8
//   CHECK_ALLCLOSE(model.predict_on_batch(x), expected, 1e-4, 1e-6);  // rtol, atol
//   CHECK(kerascpp::testing::equal(labels, kerascpp::testing::int_tensor({0, 2, 1})));
//   CHECK(t.shape() == kerascpp::Shape{2, 3});  // prints "(2, 3) == (2, 4)" on failure
// A failing CHECK_ALLCLOSE prints e.g.
//   CHECK( ::kerascpp::testing::allclose(a, b) ) is NOT correct!
//     values: CHECK( allclose: 1 of 4 elements differ (rtol 1e-05, atol 1e-08); worst at [1, 0]:
//                    actual 3.5, expected 3.25, |actual - expected| 0.25 > tolerance 3.25003e-05 )
//
// Include it in the test files of a doctest binary (one of them defines
// DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN before its first doctest include, as usual).
#pragma once
#include <doctest/doctest.h>

#include "kerascpp/testing.hpp"

namespace doctest {

template <>
struct StringMaker<kerascpp::Tensor> {
  static String convert(const kerascpp::Tensor& tensor) { return kerascpp::testing::to_string(tensor).c_str(); }
};

// kerascpp::Shape is std::vector<std::int64_t>, so this also prints other vectors of int64 as
// "(2, 3)"; doctest would print them as {?}.
template <>
struct StringMaker<kerascpp::Shape> {
  static String convert(const kerascpp::Shape& shape) { return kerascpp::shape_str(shape).c_str(); }
};

template <>
struct StringMaker<kerascpp::testing::Comparison> {
  static String convert(const kerascpp::testing::Comparison& comparison) { return comparison.message().c_str(); }
};

}  // namespace doctest

// CHECK_ALLCLOSE(actual, expected[, rtol[, atol[, equal_nan]]]): kerascpp::testing::allclose
// as one doctest assertion whose failure prints the comparison's message.
#define CHECK_ALLCLOSE(...) DOCTEST_CHECK(::kerascpp::testing::allclose(__VA_ARGS__))
#define REQUIRE_ALLCLOSE(...) DOCTEST_REQUIRE(::kerascpp::testing::allclose(__VA_ARGS__))
#define WARN_ALLCLOSE(...) DOCTEST_WARN(::kerascpp::testing::allclose(__VA_ARGS__))
