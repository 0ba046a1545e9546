// Option checks shared by the optimizers' constructors (optimizers.cpp, more_optimizers.cpp):
// each throws ValueError naming the optimizer, the option, the range and Keras' default.
#pragma once

namespace kerascpp::optimizers::checks {

// `name` in [lo, hi) (or [lo, hi] with hi_inclusive), NaN refused.
void check_range(double v, double lo, double hi, bool hi_inclusive, const char* optimizer, const char* name,
                 const char* hint);
// A finite epsilon > 0.
void check_epsilon(double v, const char* optimizer);

}  // namespace kerascpp::optimizers::checks
