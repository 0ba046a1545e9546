#include "my_model.hpp"

namespace K = kerascpp;

kerascpp::Model make_classifier(int features, int classes) {
  auto in = K::Input({features});
  // C++17 has no designated initializers: either give the options positionally (every member of
  // kerascpp's option structs has a default, so -Wextra does not warn about the ones left out)...
  auto h = K::layers::Dense(16, {"relu"})(in);
  // ...or fill them by name, one field at a time.
  K::layers::DenseOptions output;
  output.activation = "softmax";
  output.name = "probabilities";
  auto out = K::layers::Dense(classes, output)(h);
  return K::Model(in, out, "my_classifier");
}

void compile_classifier(kerascpp::Model& model, double learning_rate) {
  K::CompileOptions options;
  options.optimizer = K::optimizers::Adam(learning_rate);
  options.loss = "sparse_categorical_crossentropy";
  options.metrics = {"accuracy"};
  model.compile(options);
}
