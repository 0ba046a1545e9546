// Trains y = 2x on a few points through the installed package; exits non-zero if it did not learn.
#include <kerascpp/kerascpp.hpp>

#include <cmath>
#include <cstdio>

namespace K = kerascpp;

int main() {
  K::set_random_seed(1);
  std::vector<float> xs, ys;
  for (int i = 0; i < 32; ++i) {
    xs.push_back(static_cast<float>(i) / 32.f);
    ys.push_back(2.f * static_cast<float>(i) / 32.f);
  }
  auto in = K::Input({1});
  auto out = K::layers::Dense(1)(in);
  K::Model model(in, out);
  K::CompileOptions options;
  options.optimizer = K::optimizers::SGD(0.5);
  options.loss = "mse";
  model.compile(options);
  auto data = K::Dataset::from_tensor_slices(K::Tensor::from_vector({32, 1}, xs), K::Tensor::from_vector({32, 1}, ys));
  K::FitOptions fit;
  fit.epochs = 200;
  fit.verbose = 0;
  model.fit(data.batch(32), fit);
  float w = model.get_weights()[0].to_vector()[0];
  std::printf("learned slope %.4f\n", w);
  return std::fabs(w - 2.f) < 0.05f ? 0 : 1;
}
