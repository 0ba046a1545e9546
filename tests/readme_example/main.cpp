// A verbatim copy of the README's example (keep them in sync). The `readme_example_warnings`
// ctest compiles it with -Wall -Wextra -Werror against the public headers, so a user who
// copies the example into a project with strict warnings gets none.
// The README's alignment is kept as written:
// clang-format off
#include <kerascpp/kerascpp.hpp>
namespace K = kerascpp;

int main() {
  auto data = K::datasets::fashion_mnist::load();  // Debian dataset-fashion-mnist, or $KERASCPP_DATA
  K::Dataset train = data.train, test = data.test;  // (not `auto [train, test]`: notebooks drop those)
  auto inputs  = K::Input({28, 28, 1});
  auto x       = K::layers::Conv2D(32, 3, {.activation = "relu"})(inputs);
  x            = K::layers::MaxPooling2D(2)(x);
  x            = K::layers::Flatten()(x);
  x            = K::layers::Dense(128, {.activation = "relu"})(x);
  auto outputs = K::layers::Dense(10, {.activation = "softmax"})(x);
  K::Model model(inputs, outputs);

  model.compile({.optimizer  = K::optimizers::Adam(1e-3),
                 .loss       = K::losses::SparseCategoricalCrossentropy(),
                 .metrics    = {"accuracy"},
                 .distribute = K::distribute::MirroredStrategy<>(2)});   // 2 CPU replicas
  model.fit(train.shuffle(60000).batch(256),
            {.epochs = 5, .validation_data = test.batch(1024),
             .callbacks = {K::callbacks::ModelCheckpoint("ckpt/e{epoch:02d}.weights.h5"),
                           K::callbacks::TensorBoard("logs")}});
  model.evaluate(test.batch(1024));
  K::Tensor probabilities = model.predict(test.batch(1024));
}
