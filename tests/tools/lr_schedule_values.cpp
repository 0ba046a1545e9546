// Prints a learning-rate schedule's values at the given steps, one per line, for
// tests/python/test_lr_schedules.py to compare with Keras 3 (CosineDecay) and with the official
// Transformer formula.
//   lr_schedule_values cosine INITIAL DECAY_STEPS ALPHA [WARMUP_TARGET WARMUP_STEPS] -- STEP...
//   lr_schedule_values transformer INITIAL HIDDEN_SIZE WARMUP_STEPS -- STEP...
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace S = kerascpp::optimizers::schedules;

int main(int argc, char** argv) {
  std::vector<const char*> params;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) params.push_back(argv[i]);
  if (params.empty() || i == argc) {
    std::fprintf(stderr, "usage: %s cosine|transformer PARAMS... -- STEPS...\n", argv[0]);
    return 2;
  }
  auto num = [&](std::size_t k) { return std::atof(params.at(k)); };
  std::unique_ptr<S::LearningRateSchedule> schedule;
  if (std::strcmp(params[0], "cosine") == 0) {
    S::CosineDecayOptions o{.alpha = num(3)};
    if (params.size() > 4) o.warmup_target = num(4), o.warmup_steps = std::atoll(params.at(5));
    schedule = std::make_unique<S::CosineDecay>(num(1), std::atoll(params.at(2)), o);
  } else {
    schedule = std::make_unique<S::TransformerSchedule>(num(1), std::atoll(params.at(2)), std::atoll(params.at(3)));
  }
  for (++i; i < argc; ++i) std::printf("%.17g\n", (*schedule)(std::atoll(argv[i])));
  return 0;
}
