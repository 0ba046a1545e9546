// layer.set_trainable(false) (Keras' layer.trainable = False): frozen variables do not move,
// the rest trains, BatchNormalization runs in inference mode with a correct input gradient, the
// summary and the config say so, and unfreezing + compile() trains the layer again.
#include <doctest/doctest.h>

#include <cstring>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

namespace {

bool same_bits(const K::Tensor& a, const K::Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

struct Frozen {
  K::LayerRef first = K::layers::Dense(8, {.activation = "relu"});
  K::LayerRef bn = K::layers::BatchNormalization();
  K::LayerRef last = K::layers::Dense(3, {.activation = "softmax"});
  K::Model model;
  Frozen() : model(build()) {}
  K::Model build() {
    auto in = K::Input({6});
    return K::Model(in, last(bn(first(in))));
  }
};

Frozen make_model() {
  K::set_random_seed(5);
  return Frozen();
}

K::Dataset data() {
  auto blobs = KT::make_blobs(96, 3, 6, 11);
  return blobs.dataset().batch(16);
}

}  // namespace

TEST_CASE("trainable: frozen layers keep their weights (and BN its statistics); the rest trains") {
  Frozen f = make_model();
  f.first->set_trainable(false);
  f.bn->set_trainable(false);
  CHECK(f.model.trainable_variables().size() == 2);  // the last Dense's kernel and bias
  f.model.compile({.optimizer = K::optimizers::Adam(0.05), .loss = "sparse_categorical_crossentropy"});
  std::vector<K::Tensor> before;
  for (K::Variable* v : f.model.variables()) before.push_back(v->value().clone());
  f.model.fit(data(), {.epochs = 2, .verbose = 0});
  auto vars = f.model.variables();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    CAPTURE(vars[i]->path());
    const bool in_last = vars[i]->path().rfind(f.last->name(), 0) == 0;
    CHECK(same_bits(vars[i]->value(), before[i]) != in_last);  // frozen: unchanged; last Dense: moved
  }
  std::ostringstream summary;
  K::set_output(summary);
  f.model.summary();
  K::set_output(std::cout);
  CHECK(summary.str().find("Trainable params: 27") != std::string::npos);  // 8 * 3 + 3
  const std::string json = f.model.to_json();
  CHECK(json.find("\"trainable\":false") != std::string::npos);
  CHECK(json.find("\"trainable\":true") != std::string::npos);

  // Unfrozen and recompiled, the first layer trains again.
  f.first->set_trainable(true);
  f.model.compile({.optimizer = K::optimizers::Adam(0.05), .loss = "sparse_categorical_crossentropy"});
  K::Tensor kernel = f.first->variables()[0]->value().clone();
  f.model.fit(data(), {.epochs = 1, .verbose = 0});
  CHECK_FALSE(same_bits(f.first->variables()[0]->value(), kernel));
}

TEST_CASE("trainable: a frozen BatchNormalization is its inference transform, forward and backward") {
  K::LayerRef bn = K::layers::BatchNormalization();
  (void)bn(K::Input({4}));
  // Non-trivial statistics and parameters, so the check means something.
  bn->variables()[0]->assign(KT::tensor({1.5, 0.5, 2.0, 1.0}));   // gamma
  bn->variables()[1]->assign(KT::tensor({0.1, -0.2, 0.3, 0.0}));  // beta
  bn->variables()[2]->assign(KT::tensor({0.5, -1.0, 0.0, 2.0}));  // moving mean
  bn->variables()[3]->assign(KT::tensor({0.25, 4.0, 1.0, 0.5}));  // moving variance
  bn->set_trainable(false);
  K::Tensor x = KT::tensor({{0.3, -0.7, 1.1, 2.5}, {-1.2, 0.4, 0.9, 1.7}, {0.8, 1.6, -0.3, 2.2}});
  auto result = KT::check_layer_gradients(bn, {x}, {.training = true});
  CHECK_MESSAGE(result.passed(), result.summary());
  auto be = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = be.get();
  ctx.training = true;
  K::LayerState st;
  K::Tensor y = bn->forward(ctx, {x}, st).at(0);
  ctx.training = false;
  K::LayerState st2;
  CHECK(same_bits(y, bn->forward(ctx, {x}, st2).at(0)));  // training mode == inference mode
}
