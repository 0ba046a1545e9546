// The small fixed model whose weights the weights_h5 target loads fuzzed files into, shared with
// make_seeds.cpp so that the seed corpus holds this model's real files. Dense + BatchNormalization
// + Adam: layer variables, non-trainable statistics and optimizer slots all go through the checks.
#pragma once
#include "kerascpp/kerascpp.hpp"

namespace kerascpp_fuzz {

inline kerascpp::Model make_fuzz_model() {
  namespace K = kerascpp;
  K::set_random_seed(1);
  auto in = K::Input({3});
  auto x = K::layers::Dense(4)(in);
  x = K::layers::BatchNormalization()(x);
  auto out = K::layers::Dense(2, {.activation = "softmax"})(x);
  K::Model model(in, out);
  model.compile({.optimizer = K::optimizers::Adam(1e-2), .loss = "sparse_categorical_crossentropy"});
  return model;
}

}  // namespace kerascpp_fuzz
