// The reductions of batch normalization over an [rows, channels] view, shared by the fused ops
// (batchnorm.cpp, moments.cpp) and the decomposed backward of synchronized BN
// (batchnorm_sync_backward.cpp).
//
// Every sum accumulates in double over row chunks of a fixed size that are added in chunk
// order (parallel.hpp's chunked_row_sums), so results are bit-identical for any thread count,
// and the statistics stay accurate when a channel's mean is large against its spread: float
// accumulation (oneDNN's fused batch norm) loses ~1e-5 of the variance over 40k rows there.
#pragma once
#include <cstdint>
#include <vector>

namespace kerascpp::cpu::bn {

// Mean and biased variance of each channel. The sums are taken around each channel's first
// value (a shift every thread sees alike), so Σ(x−k)²/n − (Σ(x−k)/n)² does not cancel even
// when |mean| >> std. rows > 0.
void moments(const float* x, std::int64_t rows, std::int64_t channels, std::vector<double>& partials, double* mean,
             double* var);

// Σdy and Σdy·(x − mean) of each channel: the two sums batch norm's input gradient needs.
void grad_sums(const float* dy, const float* x, const float* mean, std::int64_t rows, std::int64_t channels,
               std::vector<double>& partials, double* sum_dy, double* sum_dy_xmu);

// dx = γ·inv·(dy − Σdy/count − (x − mean)·inv²·Σdy(x − mean)/count), inv = 1/√(var + eps),
// over `rows` local rows (count is the global row count the sums were taken over).
// gamma may be null (scale=False). coef is scratch for 3·channels floats.
void grad_apply(const float* dy, const float* x, const float* gamma, const float* mean, const float* var, float eps,
                const double* sum_dy, const double* sum_dy_xmu, double count, std::int64_t rows, std::int64_t channels,
                float* coef, float* dx);

}  // namespace kerascpp::cpu::bn
