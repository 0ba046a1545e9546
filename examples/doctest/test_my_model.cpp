// Unit tests of my_model with doctest and kerascpp's test helpers.
#include <kerascpp/testing.hpp>
#include <kerascpp/testing/doctest.hpp>

#include "my_model.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

namespace {
K::FitOptions quiet_epochs(int epochs) {
  K::FitOptions options;
  options.epochs = epochs;
  options.verbose = 0;
  return options;
}
K::EvaluateOptions quiet() {
  K::EvaluateOptions options;
  options.verbose = 0;
  return options;
}
}  // namespace

TEST_CASE("the classifier has the shapes it promises") {
  KT::ScopedSession session(1);
  K::Model model = make_classifier(2, 3);
  compile_classifier(model);
  K::Tensor probabilities = model.predict_on_batch(KT::tensor({{0, 0}, {1, -1}}));
  CHECK(probabilities.shape() == K::Shape{2, 3});
  // Each row is a probability distribution.
  std::vector<float> p = probabilities.to_vector();
  CHECK_ALLCLOSE(KT::tensor({p[0] + p[1] + p[2], p[3] + p[4] + p[5]}), KT::tensor({1, 1}), 1e-5, 1e-6);
}

TEST_CASE("the classifier learns three blobs") {
  KT::ScopedSession session(42);  // the same seed gives the same weights and result on every run
  KT::ToyData blobs = KT::make_blobs(400, 3, 2, /*seed=*/0);  // rows come shuffled
  K::Dataset train = blobs.dataset().take(300), held_out = blobs.dataset().skip(300);
  K::Model model = make_classifier(2, 3);
  compile_classifier(model);
  model.fit(train.shuffle(300).batch(32), quiet_epochs(10));
  K::Logs logs = model.evaluate(held_out.batch(100), quiet());
  CHECK(logs["accuracy"] > 0.9);
}

TEST_CASE("predictions survive a weights round trip in memory") {
  KT::ScopedSession session(7);
  KT::ToyData data = KT::make_blobs(120, 3, 2, 3);
  K::Model model = make_classifier(2, 3);
  compile_classifier(model);
  model.fit(data.dataset().batch(32), quiet_epochs(3));

  std::vector<std::uint8_t> bytes = KT::save_weights_to_bytes(model);  // a .weights.h5 file's bytes
  K::Model restored = make_classifier(2, 3);
  compile_classifier(restored);  // also restores the optimizer state
  KT::load_weights_from_bytes(restored, bytes);
  CHECK_ALLCLOSE(restored.predict_on_batch(data.x), model.predict_on_batch(data.x));
  // A model of another shape refuses them and stays as it was.
  K::Model wider = make_classifier(2, 4);
  CHECK_THROWS_AS(KT::load_weights_from_bytes(wider, bytes), K::Error);
}

TEST_CASE("my layer's gradients match finite differences") {
  KT::ScopedSession session(3);
  K::LayerRef layer = K::layers::Dense(4, {"tanh"});
  KT::GradientCheckResult result = KT::check_layer_gradients(layer, {KT::uniform_tensor({5, 3}, /*seed=*/1)});
  CHECK_MESSAGE(result.passed(), result.summary());
}
