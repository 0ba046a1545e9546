// Declared input specs (Keras' InputSpec) and the typed windowed-layer arguments (Size2D,
// Padding): every kind of spec violation raises the right error naming the layer, the spec is
// checked before the layer's own shape code, built layers fix their feature axis as Keras does,
// and Conv2D/pooling take `3` or `{3, 5}` and write the config Keras writes.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs f, which must throw exactly the category E; returns the message.
template <class E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); } catch (const K::Error& e) {
    FAIL("threw another kerascpp::Error category: " << e.what());
  }
  FAIL("no exception was thrown");
  return {};
}

// A user-defined layer that declares its specs through the protected API and counts the calls
// that reach compute_output_shapes (the spec is checked before them).
class SpecLayer : public K::Layer {
 public:
  int shape_calls = 0;
  explicit SpecLayer(std::vector<K::InputSpec> specs, bool for_each = false) : K::Layer("spec_layer") {
    if (for_each) set_input_spec_for_each(specs.at(0));
    else set_input_specs(std::move(specs));
  }
  std::string class_name() const override { return "SpecLayer"; }
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override {
    ++shape_calls;
    return {in.at(0)};
  }
  std::vector<K::Tensor> forward(K::ReplicaContext&, const std::vector<K::Tensor>& in, K::LayerState&) override {
    return {in.at(0)};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext&, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState&) override {
    return {grads.at(0)};
  }
};

}  // namespace

TEST_CASE("input spec: a wrong rank names the layer, the expected spec and the actual shape") {
  auto msg = message_of<K::ShapeError>([] { K::layers::Conv2D(4, 3, {.name = "conv2d_rank"})(K::Input({28, 28})); });
  CHECK(contains(msg,
                 "Layer 'conv2d_rank' (Conv2D): expected rank 4 input (batch, height, width, channels), got "
                 "(None, 28, 28)"));
  CHECK(contains(msg, "Reshape"));  // the fix

  for (auto* pool : {"max", "average", "global"}) {
    CAPTURE(pool);
    K::LayerRef layer = std::string(pool) == "max"       ? K::layers::MaxPooling2D(2, {.name = "p_rank"})
                        : std::string(pool) == "average" ? K::layers::AveragePooling2D(2, {.name = "p_rank"})
                                                         : K::layers::GlobalAveragePooling2D({.name = "p_rank"});
    msg = message_of<K::ShapeError>([&] { layer(K::Input({10})); });
    CHECK(contains(msg, "'p_rank'"));
    CHECK(contains(msg, "rank 4"));
    CHECK(contains(msg, "(None, 10)"));
  }

  // min_ndim: Dense and BatchNormalization need a feature axis.
  msg = message_of<K::ShapeError>([] { K::layers::Dense(3, {.name = "d_min"})(K::Input({})); });
  CHECK(contains(msg, "Layer 'd_min' (Dense): expected rank at least 2"));
  CHECK(contains(msg, "(None,)"));
  msg = message_of<K::ShapeError>([] { K::layers::BatchNormalization({.name = "bn_min"})(K::Input({})); });
  CHECK(contains(msg, "'bn_min'"));
  CHECK(contains(msg, "rank at least 2"));

  // max_ndim, through a user-defined layer.
  auto capped = std::make_shared<SpecLayer>(std::vector<K::InputSpec>{{.max_ndim = 3}});
  msg = message_of<K::ShapeError>([&] { (*capped)(K::Input({2, 3, 4})); });
  CHECK(contains(msg, "Layer 'spec_layer' (SpecLayer): expected rank at most 3 input, got (None, 2, 3, 4)"));
  CHECK(capped->shape_calls == 0);  // checked before the layer's own shape code
  (*capped)(K::Input({2, 3}));
  CHECK(capped->shape_calls == 1);
}

TEST_CASE("input spec: built layers fix their feature axis (Keras' axes={-1: input_dim})") {
  K::LayerRef dense = K::layers::Dense(3, {.name = "d_axis"});
  REQUIRE(dense->input_spec().size() == 1);
  CHECK(dense->input_spec()[0].axes.empty());
  dense(K::Input({4}));
  REQUIRE(dense->input_spec().size() == 1);
  CHECK(dense->input_spec()[0].axes == std::map<int, std::int64_t>{{-1, 4}});
  CHECK(dense->input_spec()[0].min_ndim == 2);
  dense(K::Input({7, 4}));  // another call with the same features is fine (Dense on the last axis)
  auto msg = message_of<K::ShapeError>([&] { dense(K::Input({5})); });
  CHECK(contains(msg, "Layer 'd_axis' (Dense)"));
  CHECK(contains(msg, "axis -1 of size 4"));
  CHECK(contains(msg, "(None, 5)"));

  K::LayerRef conv = K::layers::Conv2D(2, 3, {.name = "c_axis"});
  conv(K::Input({8, 8, 1}));
  msg = message_of<K::ShapeError>([&] { conv(K::Input({8, 8, 3})); });
  CHECK(contains(msg, "'c_axis'"));
  CHECK(contains(msg, "axis -1 of size 1"));
  CHECK(contains(msg, "(None, 8, 8, 3)"));

  K::LayerRef bn = K::layers::BatchNormalization({.name = "bn_axis"});
  bn(K::Input({4, 4, 2}));
  msg = message_of<K::ShapeError>([&] { bn(K::Input({4, 4, 5})); });
  CHECK(contains(msg, "'bn_axis'"));
  CHECK(contains(msg, "(None, 4, 4, 5)"));
  msg = message_of<K::ShapeError>([&] { bn(K::Input({2})); });  // built for rank 4, as Keras' ndim
  CHECK(contains(msg, "rank 4"));
}

TEST_CASE("input spec: dtype, number of inputs and per-input specs") {
  auto msg = message_of<K::ShapeError>([] { K::layers::Dense(2, {.name = "d_u8"})(K::Input({4}, K::DType::uint8)); });
  CHECK(contains(msg, "'d_u8'"));
  CHECK(contains(msg, "uint8"));
  CHECK(contains(msg, "float32"));
  // Merge layers take any number of float32 inputs; the dtype is checked on each.
  msg = message_of<K::ShapeError>(
      [] { K::layers::Add({.name = "add_u8"})({K::Input({3}), K::Input({3}, K::DType::int32)}); });
  CHECK(contains(msg, "'add_u8'"));
  CHECK(contains(msg, "input 1"));
  CHECK(contains(msg, "int32"));

  // A one-input layer called on two.
  msg = message_of<K::ValueError>([] { K::layers::Dense(2, {.name = "d_two"})({K::Input({3}), K::Input({3})}); });
  CHECK(contains(msg, "'d_two'"));
  CHECK(contains(msg, "expects 1 input(s) but was called on 2"));

  // One spec per input: the second input is the culprit.
  auto pair = std::make_shared<SpecLayer>(std::vector<K::InputSpec>{{.ndim = 2}, {.ndim = 3, .axes = {{1, 5}}}});
  msg = message_of<K::ShapeError>([&] { (*pair)({K::Input({4}), K::Input({4, 2})}); });
  CHECK(contains(msg, "'spec_layer'"));
  CHECK(contains(msg, "input 1"));
  CHECK(contains(msg, "axis 1 of size 5"));
  CHECK(contains(msg, "(None, 4, 2)"));
  msg = message_of<K::ValueError>([&] { (*pair)(K::Input({4})); });
  CHECK(contains(msg, "expects 2 input(s)"));
  CHECK(pair->shape_calls == 0);
  (*pair)({K::Input({4}), K::Input({5, 2})});
  CHECK(pair->shape_calls == 1);

  // A layer that accepts any dtype declares so.
  auto any = std::make_shared<SpecLayer>(std::vector<K::InputSpec>{{.dtype = std::nullopt}}, true);
  CHECK((*any)(K::Input({3}, K::DType::uint8)).shape() == K::Shape{3});
}

TEST_CASE("input spec: to_string and mismatch describe the spec in Keras' terms") {
  K::InputSpec image{.ndim = 4, .axes = {{-1, 3}}, .layout = "(batch, height, width, channels)"};
  CHECK(image.to_string() == "rank 4 (batch, height, width, channels), axis -1 of size 3, float32");
  CHECK(image.mismatch({-1, 8, 8, 3}, K::DType::float32).empty());
  CHECK(contains(image.mismatch({-1, 8, 8}, K::DType::float32), "expected rank 4"));
  CHECK(contains(image.mismatch({-1, 8, 8, 1}, K::DType::float32), "axis -1 is not of size 3"));
  CHECK(contains(image.mismatch({-1, 8, 8, 3}, K::DType::int32), "int32"));
  K::InputSpec ranged{.min_ndim = 2, .max_ndim = 3, .dtype = std::nullopt};
  CHECK(ranged.to_string() == "rank 2 to 3");
  CHECK(ranged.mismatch({-1, 2, 3}, K::DType::uint8).empty());
  CHECK(!ranged.mismatch({-1}, K::DType::float32).empty());
  CHECK(!ranged.mismatch({-1, 1, 2, 3}, K::DType::float32).empty());
  K::InputSpec anything{.dtype = std::nullopt};
  CHECK(anything.to_string() == "any input");
}

TEST_CASE("typed arguments: Conv2D(32, {3, 5}, {.strides = {2, 2}, .padding = Padding::same})") {
  auto in = K::Input({28, 28, 1});
  K::LayerRef conv = K::layers::Conv2D(32, {3, 5}, {.strides = {2, 2}, .padding = K::Padding::same, .name = "c35"});
  auto out = conv(in);
  CHECK(out.shape() == K::Shape{14, 14, 32});  // ceil(28 / 2) with same padding
  CHECK(conv->trainable_variables().at(0)->shape() == K::Shape{3, 5, 1, 32});
  // The JSON Keras writes for Conv2D(32, (3, 5), strides=(2, 2), padding="same", name="c35").
  CHECK(conv->get_config().dump() ==
        R"({"name":"c35","filters":32,"kernel_size":[3,5],"strides":[2,2],"padding":"same","activation":"linear",)"
        R"("use_bias":true})");

  // The one-integer forms: kernel 3 = 3x3, strides 2 = 2x2; valid padding by default.
  K::LayerRef square = K::layers::Conv2D(8, 3, {.strides = 2, .name = "c3"});
  CHECK(square(in).shape() == K::Shape{13, 13, 8});  // (28 - 3) / 2 + 1
  CHECK(square->trainable_variables().at(0)->shape() == K::Shape{3, 3, 1, 8});
  CHECK(contains(square->get_config().dump(), R"("kernel_size":[3,3],"strides":[2,2],"padding":"valid")"));

  // A rectangular kernel larger than the input along one axis: a check no spec expresses.
  auto msg = message_of<K::ShapeError>([] { K::layers::Conv2D(2, {5, 1}, {.name = "c_tall"})(K::Input({4, 9, 1})); });
  CHECK(contains(msg, "'c_tall'"));
  CHECK(contains(msg, "5x1"));
  CHECK(contains(msg, "(None, 4, 9, 1)"));
  CHECK(K::layers::Conv2D(2, {5, 1}, {.padding = K::Padding::same})(K::Input({4, 9, 1})).shape() == K::Shape{4, 9, 2});

  msg = message_of<K::ValueError>([] { K::layers::Conv2D(2, {3, 0}, {.name = "c_zero"}); });
  CHECK(contains(msg, "'c_zero'"));
  CHECK(contains(msg, "kernel_size"));
  CHECK(contains(msg, "{3, 0}"));
  msg = message_of<K::ValueError>([] { K::layers::Conv2D(2, 3, {.strides = {1, -2}, .name = "c_st"}); });
  CHECK(contains(msg, "strides"));
  CHECK(contains(msg, "{1, -2}"));
}

TEST_CASE("typed arguments: pooling sizes, strides defaulting to the pool size, Padding names") {
  auto in = K::Input({7, 6, 2});
  K::LayerRef pool = K::layers::MaxPooling2D({3, 2}, {.name = "p32"});
  CHECK(pool(in).shape() == K::Shape{2, 3, 2});  // strides = pool size (3, 2)
  CHECK(pool->get_config().dump() == R"({"name":"p32","pool_size":[3,2],"strides":[3,2],"padding":"valid"})");
  K::LayerRef same = K::layers::AveragePooling2D(2, {.strides = 1, .padding = K::Padding::same, .name = "p_same"});
  CHECK(same(in).shape() == K::Shape{7, 6, 2});
  CHECK(same->get_config().dump() == R"({"name":"p_same","pool_size":[2,2],"strides":[1,1],"padding":"same"})");
  K::LayerRef mixed = K::layers::MaxPooling2D(2, {.strides = {2, 1}});
  CHECK(mixed(in).shape() == K::Shape{3, 5, 2});

  CHECK(K::padding_from_name("same") == K::Padding::same);
  CHECK(K::padding_from_name("valid") == K::Padding::valid);
  CHECK(std::string(K::padding_name(K::Padding::same)) == "same");
  // "causal" is a padding name (Conv1D's); the layers that cannot pad causally refuse it.
  CHECK(K::padding_from_name("causal") == K::Padding::causal);
  CHECK(std::string(K::padding_name(K::Padding::causal)) == "causal");
  auto msg = message_of<K::ValueError>([] { K::padding_from_name("full", "Conv2D 'c'"); });
  CHECK(contains(msg, "Conv2D 'c'"));
  CHECK(contains(msg, "full"));
  msg = message_of<K::ValueError>([] { K::layers::MaxPooling2D(2, {.padding = K::Padding::causal}); });
  CHECK(contains(msg, "padding"));
  // An out-of-range enum value (a cast) is rejected, not read as "valid".
  msg = message_of<K::ValueError>(
      [] { K::layers::MaxPooling2D(2, {.padding = static_cast<K::Padding>(7), .name = "p_cast"}); });
  CHECK(contains(msg, "'p_cast'"));
  CHECK(contains(msg, "padding"));
}

TEST_CASE("names: factories take the name in options, like Dense") {
  CHECK(K::layers::Activation("relu", {.name = "act"})->name() == "act");
  CHECK(K::layers::Flatten({.name = "flat"})->name() == "flat");
  CHECK(K::layers::Reshape({2, 2}, {.name = "resh"})->name() == "resh");
  CHECK(K::layers::Add({.name = "sum"})->name() == "sum");
  CHECK(K::layers::Concatenate(-1, {.name = "cat"})->name() == "cat");
  CHECK(K::layers::GlobalAveragePooling2D({.name = "gap"})->name() == "gap");
  K::LayerRef input = K::layers::InputLayer({3}, {.dtype = K::DType::int32, .name = "ids"});
  CHECK(input->name() == "ids");
  auto* impl = dynamic_cast<K::layers::InputLayerImpl*>(input.get().get());
  REQUIRE(impl != nullptr);
  CHECK(impl->dtype() == K::DType::int32);
  CHECK(impl->shape() == K::Shape{3});
}
