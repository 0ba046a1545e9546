// Max pooling over windows that do not overlap (stride >= pool size, the Keras default), NHWC,
// float32 or bfloat16: the forward pass keeps each output's argmax as one byte (its position in
// the window, row-major), the backward pass writes every input's gradient from those bytes.
//
// Why not oneDNN's pooling: on the Intel Xeon (family 6, model 207) its forward_training kernel
// took 1.50 ms on 128x26x26x32 float32 where its forward_inference one took 0.47 ms, and its
// backward 2.2 ms: 30-40% of the CNN's training step for one memory-bound pass each way
// (bench/README.md, "Max pooling"). These loops are memory-bound too.
//
// Results: the maximum, and as argmax the first maximal position in the window (a strict
// "greater than" scan in row-major order, as oneDNN's kernels scan), so NaN-free data gives
// oneDNN's outputs and gradients bit for bit. A window holding a NaN gives that NaN (Keras
// propagates NaN) and its argmax is the first NaN's position, so the gradient goes to the input
// the output came from. Padding positions never win.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/op_shapes.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::cpu {

// Whether these loops take this pooling: max, windows disjoint, at most 255 positions, no window
// made of padding alone, float32 or bfloat16.
bool max_pool_disjoint_applies(const Pool2DGeometry& g, DType dtype);

// y[n, oh, ow, c] = max over the window; argmax[same index] = its position in the window (null
// argmax: inference, the same y without it). relu: y = relu(max) (relu_keep_nan, the same bits
// as pooling relu(x)), a row at a time in cache; argmax stays x's. Parallel over the calling
// thread's OpenMP budget.
void max_pool_disjoint_forward(const void* x, const op_shapes::PoolShape& s, const Pool2DGeometry& g, DType dtype,
                               void* y, std::uint8_t* argmax, bool relu = false);

// dx = dy routed to each window's argmax, 0 everywhere else (every element of dx is written).
// relu_y, when given, is the pooling's output y where a ReLU fed it: each dy first goes through
// that ReLU's backward at y (relu_backward_keep_nan, the same bits), a block at a time in cache,
// instead of in a pass and a tensor of its own (see CpuBackend::pool2d_backward_through_relu).
// channel_sums (float32, with relu_y): also the per-channel sums over every row of dx, which is
// the ReLU's producer's bias gradient. dx holds each masked gradient once and zeros elsewhere, so
// they are summed at the pooled resolution, from the block in cache: a quarter of the reads of a
// pass over dx for 2x2 windows. Blocks of pooled rows (fixed by the shape) sum in row order into
// `partials`, added in block order: the same bits for any thread count.
struct ChannelSums {
  double* out;                    // [channels]
  std::vector<double>& partials;  // scratch
};
void max_pool_disjoint_backward(const void* dy, const std::uint8_t* argmax, const op_shapes::PoolShape& s,
                                const Pool2DGeometry& g, DType dtype, void* dx, const void* relu_y = nullptr,
                                const ChannelSums* channel_sums = nullptr);

}  // namespace kerascpp::cpu
