// One time step of Keras' LSTMCell and GRUCell (reset_after=True), forward and backward, as
// Backend ops on [B, ·] tensors. Why composed ops rather than oneDNN's RNN primitives or new
// fused kernels: oneDNN's LSTM/GRU use their own gate orders and weight layouts and have no
// per-example step masks, and new fused ops would need a CPU and a CUDA kernel each. Composing
// the existing ops (split, activation, multiply, add, matmul) runs unchanged on both backends,
// follows Keras' formulas term by term (so it is exact to float rounding) and costs a few small
// ops per step; the input projection and all weight gradients are still one matmul per sequence
// (layers/recurrent.cpp).
#pragma once
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/recurrent.hpp"

namespace kerascpp::layers::cells {

// LSTM, gates in Keras' order i, f, c, o. z = x·W + b + h_prev·U ([B, 4U], already summed).
// Writes gates = (σ(i), σ(f), act(c̃), σ(o)) [B, 4U], c, tanh_c = act(c) and h = o·act(c).
void lstm_forward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& z, const Tensor& c_prev,
                  Tensor& gates, Tensor& c, Tensor& act_c, Tensor& h);
// From dh and dc (dL/dc of this step's c, from the step after) writes dz [B, 4U] (pre-activation
// gate gradients) and dc_prev (the part through c = f·c_prev + ...; overwritten).
void lstm_backward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& gates,
                   const Tensor& c_prev, const Tensor& act_c, const Tensor& dh, const Tensor& dc, Tensor& dz,
                   Tensor& dc_prev);

// GRU with reset_after: xw = x·W + b_in, rec = h_prev·U + b_rec (each [B, 3U], gates z, r, h).
// z = σ(xz + rz), r = σ(xr + rr), hh = act(xh + r·rh), h = z·h_prev + (1 − z)·hh.
// Writes gates = (z, r, hh) [B, 3U] and h. (rec is kept by the caller: its h part is needed.)
void gru_forward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& xw, const Tensor& rec,
                 const Tensor& h_prev, Tensor& gates, Tensor& h);
// Writes dxw and drec ([B, 3U]: dL/dxw, dL/drec) and dh_prev = dh·z (the direct path; the
// caller adds drec·Uᵀ).
void gru_backward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& gates,
                  const Tensor& rec, const Tensor& h_prev, const Tensor& dh, Tensor& dxw, Tensor& drec,
                  Tensor& dh_prev);

// SimpleRNN: h = act(z) with z = x·W + b + h_prev·U ([B, U], already summed); backward takes
// dz from h and dh. (layers/simple_rnn.cpp)
void simple_rnn_forward(Backend& be, const ActivationFn& act, const Tensor& z, Tensor& h);
void simple_rnn_backward(Backend& be, const ActivationFn& act, const Tensor& h, const Tensor& dh, Tensor& dz);

// n float32 tensors [B, U] on dev: one per gate, what the cells above split [B, nU] into.
inline std::vector<Tensor> gate_parts(std::int64_t B, std::int64_t U, int n, Device dev) {
  std::vector<Tensor> p;
  for (int k = 0; k < n; ++k) p.emplace_back(Shape{B, U}, DType::float32, dev);
  return p;
}

}  // namespace kerascpp::layers::cells

namespace kerascpp::layers {

// The options Keras' LSTM, GRU and SimpleRNN configs share, checking the keys kerascpp has no
// counterpart for at their Keras defaults (layers/recurrent.cpp).
RecurrentOptions recurrent_options_from_config(const LayerConfig& c);

}  // namespace kerascpp::layers
