// The layer registry: layers describe themselves (get_config) and register the factory that
// reads their config back, so a new layer class touches no central table. A toy layer defined
// only in this file loads from a model config and a .keras archive, and passes run_layer_test.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/layer_registry.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

namespace {

// y = factor · x, written only with Backend ops.
class ToyScale : public K::Layer {
 public:
  ToyScale(float factor, std::string name) : K::Layer(std::move(name)), factor_(factor) {}
  std::string class_name() const override { return "ToyScale"; }
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override { return {in.at(0)}; }
  std::vector<K::Tensor> forward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& in, K::LayerState&) override {
    K::Tensor y(in.at(0).shape(), in.at(0).dtype(), in.at(0).device());
    ctx.backend->copy(in.at(0), y);
    ctx.backend->scale(y, factor_);
    return {y};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext& ctx, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState&) override {
    K::Tensor dx(grads.at(0).shape(), grads.at(0).dtype(), grads.at(0).device());
    ctx.backend->copy(grads.at(0), dx);
    ctx.backend->scale(dx, factor_);
    return {dx};
  }
  K::Json get_config() const override { return K::Json{{"name", name()}, {"factor", factor_}}; }

 private:
  float factor_;
};

// Registered where the class is defined, as the library's own layers are.
KERASCPP_REGISTER_LAYER("ToyScale", [](const K::LayerConfig& c) -> K::LayerRef {
  return std::make_shared<ToyScale>(c.required<float>("factor"), c.name());
});

}  // namespace

TEST_CASE("layer registry: a layer registered in its own file loads from a config, with no central table") {
  const auto classes = K::registered_layer_classes();
  CHECK(std::find(classes.begin(), classes.end(), "ToyScale") != classes.end());
  CHECK(std::find(classes.begin(), classes.end(), "Dense") != classes.end());  // the library's own

  auto in = K::Input({3});
  auto out = K::LayerRef(std::make_shared<ToyScale>(2.5f, "toy"))(in);
  K::Model model(in, out);
  K::Model again = K::model_from_json(model.to_json());
  CHECK(again.to_json() == model.to_json());
  const K::Tensor x = K::Tensor::from_vector({1, 3}, {1.f, -2.f, 4.f});
  CHECK(again.predict_on_batch(x).to_vector() == std::vector<float>{2.5f, -5.f, 10.f});
}

TEST_CASE("layer registry: run_layer_test on a layer defined in a test") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(std::make_shared<ToyScale>(-1.5f, "")); };
  t.input_shapes = {{2, 3}};
  t.expected_output_shape = K::Shape{2, 3};
  t.expected_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
  CHECK(r.checks.size() >= 4);  // shapes, config, .keras, gradients (the GPU check is skipped without one)
}

TEST_CASE("layer registry: run_layer_test reports a layer whose config does not round-trip") {
  // A ToyScale that forgets its factor in get_config comes back with another factor.
  class Forgetful : public ToyScale {
   public:
    Forgetful() : ToyScale(3.f, "") {}
    K::Json get_config() const override { return K::Json{{"name", name()}, {"factor", 1.f}}; }
  };
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(std::make_shared<Forgetful>()); };
  t.input_shapes = {{4}};
  t.check_gradients = false;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_FALSE(r.passed());
  CHECK(r.summary().find(".keras round trip") != std::string::npos);
}

TEST_CASE("layer registry: the library's classes cannot be replaced, and errors name the layer and key") {
  CHECK_THROWS_AS(K::register_layer_class("Conv2D", [](const K::LayerConfig&) { return K::layers::Dense(1); }),
                  K::ValueError);
  try {
    (void)K::detail::layer_from_config("Dense", K::Json{{"name", "no_units"}});
    FAIL("a Dense config without units was rebuilt");
  } catch (const K::ValueError& e) {
    const std::string what = e.what();
    CHECK(what.find("'no_units'") != std::string::npos);
    CHECK(what.find("'units'") != std::string::npos);
  }
}
