// Precision flags shared by the examples (the official models' --dtype and --loss_scale):
//   --dtype fp32 | bf16 | fp16   the dtype policy: float32 (default), mixed_bfloat16, mixed_float16
//   --loss_scale dynamic | N     loss scaling (a LossScaleOptimizer, dynamic or fixed at N); with
//                                fp16 and no --loss_scale, compile() makes it dynamic, as Keras does
#pragma once
#include <CLI/CLI.hpp>
#include <kerascpp/kerascpp.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

namespace examples {

struct PrecisionFlags {
  std::string dtype = "fp32";
  std::string loss_scale;  // "" (none, or dynamic under fp16), "dynamic" or a number > 0
};

inline void add_precision_flags(CLI::App& app, PrecisionFlags& f) {
  app.add_option("--dtype", f.dtype, "fp32, bf16 (mixed_bfloat16) or fp16 (mixed_float16)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--loss_scale", f.loss_scale, "dynamic, or a fixed loss scale > 0 (default: dynamic with fp16)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            double v = 0;
            if (s == "dynamic" || (CLI::detail::lexical_cast(s, v) && std::isfinite(v) && v > 0)) return {};
            return "must be 'dynamic' or a finite number > 0, got '" + s + "' (e.g. 128)";
          },
          "dynamic|N", "LossScale"));
}

// Sets the global dtype policy (before the model is built) and says how the CPU computes in it.
inline void apply_dtype_policy(const PrecisionFlags& f) {
  static const std::map<std::string, std::string> policies = {
      {"fp32", "float32"}, {"bf16", "mixed_bfloat16"}, {"fp16", "mixed_float16"}};
  namespace MP = kerascpp::mixed_precision;
  MP::set_global_policy(policies.at(f.dtype));
  if (f.dtype != "fp32")
    std::printf("Dtype policy: %s; on the CPU: %s\n", policies.at(f.dtype).c_str(),
                MP::compute_path(*kerascpp::make_cpu_backend(1), MP::global_policy().compute_dtype()).c_str());
}

// `optimizer` wrapped in a LossScaleOptimizer when --loss_scale was given.
inline kerascpp::optimizers::OptimizerRef with_loss_scale(const PrecisionFlags& f,
                                                          kerascpp::optimizers::OptimizerRef optimizer) {
  namespace O = kerascpp::optimizers;
  if (f.loss_scale.empty()) return optimizer;
  if (f.loss_scale == "dynamic") return O::LossScaleOptimizer::around(optimizer.shared());
  return O::LossScaleOptimizer::around(optimizer.shared(),
                                       {.dynamic = false, .initial_scale = std::stod(f.loss_scale)});
}

}  // namespace examples
