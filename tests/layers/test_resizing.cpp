// resizing: run_layer_test for the Resizing layer (bilinear, nearest, cropped to the aspect
// ratio), and its output against data::resize_image, the pipeline's resize (checked against Keras
// 3 in tests/python/test_image_data.py), on the whole image or on Keras' smart_resize window.
#include "expect_layer_passes.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/layers/image_resizing.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: Resizing (bilinear, nearest, crop_to_aspect_ratio)") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Resizing(5, 2)); },
                       .input_shapes = {{3, 4, 2}},
                       .expected_output_shape = K::Shape{5, 2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Resizing(2, 3, {.interpolation = "nearest"})); },
                       .input_shapes = {{4, 5, 1}},
                       .expected_output_shape = K::Shape{2, 3, 1}});
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Resizing(3, 3, {.crop_to_aspect_ratio = true})); },
                       .input_shapes = {{4, 6, 2}},
                       .expected_output_shape = K::Shape{3, 3, 2}});
}

TEST_CASE("Resizing: resize_image's values, on the whole image or Keras' aspect-ratio window") {
  using namespace layer_on_cpu;
  const K::Tensor x = tensor_of({2, 7, 5, 3}, [](std::int64_t i) { return static_cast<float>((i * 37) % 101) / 7.f; });
  for (const std::string method : {"bilinear", "nearest"})
    for (bool crop : {false, true}) {
      CAPTURE(method);
      CAPTURE(crop);
      Replica rep;
      K::LayerState st;
      const K::Tensor y =
          forward(rep, K::layers::Resizing(4, 6, {.interpolation = method, .crop_to_aspect_ratio = crop}), {x}, st)
              .at(0);
      REQUIRE(y.shape() == K::Shape{2, 4, 6, 3});
      // The reference: the same window cut out on the host, then resized by the pipeline's resize.
      const auto box = crop ? K::data::aspect_ratio_crop_box(7, 5, {4, 6}) : std::array<std::int64_t, 4>{0, 0, 7, 5};
      const auto xv = x.to_vector();
      std::vector<float> window;
      for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t h = box[0]; h < box[0] + box[2]; ++h)
          for (std::int64_t w = box[1]; w < box[1] + box[3]; ++w)
            for (std::int64_t c = 0; c < 3; ++c)
              window.push_back(xv[static_cast<std::size_t>(offset(x.shape(), {n, h, w, c}))]);
      const auto expected =
          K::data::resize_image(K::Tensor::from_vector({2, box[2], box[3], 3}, window), {4, 6}, method).to_vector();
      const auto got = y.to_vector();
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
    }
  CHECK_THROWS_AS(K::layers::Resizing(4, 4, {.interpolation = "bicubic"}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Resizing(0, 4), K::ValueError);
}
