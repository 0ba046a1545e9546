// Any optimizer kerascpp has, rebuilt from Keras' serialization, for tests/python/test_optimizer_steps.py:
//   optimizer_steps steps CONFIG STEPS < values
//       two variables, (3, 4) and (5,); stdin: their 17 initial values, then STEPS × 17 gradients.
//       Runs STEPS steps as a training step does (prepare_gradients, apply, finish_step) and prints
//       the 17 final values, then every optimizer slot (Keras' order) on a line of its own, then
//       optimizers::serialize of the optimizer.
//   optimizer_steps save DIR CONFIG   trains Input(4) -> Dense(3) for 4 steps, writes DIR/model.weights.h5
//   optimizer_steps load DIR CONFIG   loads it into the same compiled model
//       both print "iterations I" and then every slot on a line of its own.
// CONFIG: keras.optimizers.serialize(...) as JSON.
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace K = kerascpp;

namespace {

void print_values(const K::Tensor& t) {
  for (float x : t.to_vector()) std::printf("%.9g ", x);
  std::printf("\n");
}

void print_slots(K::optimizers::Optimizer& opt) {
  for (K::Tensor* t : opt.slot_tensors(0)) print_values(*t);
}

int run_steps(const std::string& config, int steps) {
  auto opt = K::optimizers::deserialize(config);
  K::Variable a("a", K::Tensor::zeros({3, 4}), true), b("b", K::Tensor::zeros({5}), true);
  std::vector<K::Variable*> vars{&a, &b};
  auto read_into = [](K::Tensor& t) {
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (!(std::cin >> p[i])) return false;
    return true;
  };
  for (K::Variable* v : vars)
    if (!read_into(v->value(0))) return 2;
  opt->build(vars, 1);
  auto backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = backend.get();
  for (int s = 0; s < steps; ++s) {
    for (K::Variable* v : vars)
      if (!read_into(v->grad(0))) return 2;
    if (opt->prepare_gradients(ctx, vars))
      for (std::size_t i = 0; i < vars.size(); ++i) opt->apply(*backend, 0, i, *vars[i]);
    opt->finish_step();
  }
  for (K::Variable* v : vars)
    for (float x : v->value(0).to_vector()) std::printf("%.9g ", x);
  std::printf("\n");
  print_slots(*opt.get());
  std::printf("%s\n", K::optimizers::serialize(*opt.get()).c_str());
  return 0;
}

int save_or_load(const std::string& mode, const std::string& dir, const std::string& config) {
  K::set_random_seed(1);
  auto in = K::Input({4});
  K::Model model(in, K::layers::Dense(3)(in));
  model.compile({.optimizer = K::optimizers::deserialize(config), .loss = "mse"});
  const std::string path = dir + "/model.weights.h5";
  if (mode == "save") {
    std::vector<float> x(64), y(48);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 11) / 11.0 - 0.5);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>((i * 13 % 7) / 7.0);
    auto data = K::Dataset::from_tensor_slices(K::Tensor::from_vector({16, 4}, x), K::Tensor::from_vector({16, 3}, y));
    model.fit(data.batch(4), {.epochs = 1, .verbose = 0});
    model.save_weights(path);
  } else {
    model.load_weights(path);
  }
  std::printf("iterations %lld\n", static_cast<long long>(model.optimizer().iterations()));
  print_slots(model.optimizer());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  try {
    if (mode == "steps" && argc == 4) return run_steps(argv[2], std::stoi(argv[3]));
    if ((mode == "save" || mode == "load") && argc == 4) return save_or_load(mode, argv[2], argv[3]);
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s steps CONFIG STEPS < values | save DIR CONFIG | load DIR CONFIG\n", argv[0]);
  return 2;
}
