// NaN-propagating ReLU and max pooling for the oneDNN backend.
//
// oneDNN computes relu (alone or as a post-op, alpha = 0) as max(x, 0) and max pooling with an
// ordered "greater than" compare; both drop NaN (relu(NaN) = 0, a window holding a NaN gives the
// max of its other values). TensorFlow/Keras propagate NaN, and a NaN that turns into 0 hides a
// diverged run (finite loss, uniform predictions), so the backend runs these passes instead.
// On NaN-free data both give exactly oneDNN's results, bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/op_shapes.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::cpu {

// y = (y <= 0) ? +0 : y, in place: max(y, 0) for every non-NaN value (-0 becomes +0 as oneDNN
// gives), NaN stays NaN. Parallel over the calling thread's OpenMP budget.
void relu_keep_nan(float* y, std::int64_t n);
// y = relu(x), out of place (y may alias x).
void relu_keep_nan(const float* x, float* y, std::int64_t n);

// dx = dy * (y > 0), TensorFlow's ReluGrad, from the forward output y: dy where y > 0; elsewhere
// +0 for a finite dy (as oneDNN gives) and NaN for a NaN/Inf one. oneDNN's relu backward passes
// dy on where y is NaN (its test is "y <= 0"); TensorFlow gives 0 there. dx may alias dy.
void relu_backward_keep_nan(const float* y, const float* dy, float* dx, std::int64_t n);

// dz = relu_backward_keep_nan(y, dy) rounded to `to` (bfloat16 or float16) in one pass, bit for
// bit what that op followed by narrowing gives.
void relu_backward_narrow(const float* y, const float* dy, std::uint16_t* dz, DType to, std::int64_t n);

// Whether x[0, n) holds a NaN; one vectorised pass, parallel.
bool contains_nan(const float* x, std::int64_t n);

// The same on 16-bit floats (`dtype` bfloat16 or float16; mixed precision's activations), with the
// results widening, the float32 op and narrowing give.
void relu_keep_nan(std::uint16_t* y, DType dtype, std::int64_t n);
void relu_backward_keep_nan(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx, DType dtype,
                            std::int64_t n);
bool contains_nan(const std::uint16_t* x, DType dtype, std::int64_t n);

// relu_keep_nan and relu_backward_keep_nan on the calling thread alone, for loops that are
// parallel already.
void relu_keep_nan_serial(float* y, std::int64_t n);
void relu_keep_nan_serial(std::uint16_t* y, DType dtype, std::int64_t n);
void relu_backward_keep_nan_serial(const float* y, const float* dy, float* dx, std::int64_t n);
void relu_backward_keep_nan_serial(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx, DType dtype,
                                   std::int64_t n);

// Rows of x[rows, cols] that Keras's softmax, exp(x - max) / sum, turns into NaN: those holding a
// NaN or a +Inf (Inf - Inf). oneDNN clamps the exponent's argument, which drops the NaN and gives
// a finite row. Replaces `out` with their indices; one vectorised pass when there are none.
void softmax_nan_rows(const float* x, std::int64_t rows, std::int64_t cols, std::vector<std::int64_t>& out);
// Sets every listed row of y[., cols] to NaN.
void fill_rows_nan(float* y, const std::vector<std::int64_t>& rows, std::int64_t cols);

// After oneDNN's max pooling of NHWC x into y: every output whose window (padding excluded)
// holds a NaN becomes NaN. Call only when contains_nan(x): it walks every window.
void max_pool_mark_nan(const float* x, const op_shapes::PoolShape& s, const Pool2DGeometry& g, float* y);

}  // namespace kerascpp::cpu
