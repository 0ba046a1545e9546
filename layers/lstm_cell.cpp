// Keras' LSTMCell step (keras/src/layers/rnn/lstm.py), forward and backward; see recurrent_cells.hpp.
#include "recurrent_cells.hpp"

namespace kerascpp::layers::cells {

void lstm_forward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& z, const Tensor& c_prev,
                  Tensor& gates, Tensor& c, Tensor& act_c, Tensor& h) {
  const std::int64_t B = z.dim(0), U = z.dim(1) / 4;
  const Device dev = z.device();
  std::vector<Tensor> zs = gate_parts(B, U, 4, dev);
  be.split(z, -1, zs);
  std::vector<Tensor> g = gate_parts(B, U, 4, dev);
  be.activation_forward(ract, zs[0], g[0]);  // i
  be.activation_forward(ract, zs[1], g[1]);  // f
  be.activation_forward(act, zs[2], g[2]);   // c̃
  be.activation_forward(ract, zs[3], g[3]);  // o
  be.concat(g, -1, gates);
  Tensor fc(Shape{B, U}, DType::float32, dev), ic(Shape{B, U}, DType::float32, dev);
  be.multiply(g[1], c_prev, fc);
  be.multiply(g[0], g[2], ic);
  be.add({fc, ic}, c);  // c = f·c_prev + i·c̃, Keras' order
  be.activation_forward(act, c, act_c);
  be.multiply(g[3], act_c, h);
}

void lstm_backward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& gates,
                   const Tensor& c_prev, const Tensor& act_c, const Tensor& dh, const Tensor& dc, Tensor& dz,
                   Tensor& dc_prev) {
  const std::int64_t B = dh.dim(0), U = dh.dim(1);
  const Device dev = dh.device();
  std::vector<Tensor> g = gate_parts(B, U, 4, dev);
  be.split(gates, -1, g);
  std::vector<Tensor> dg = gate_parts(B, U, 4, dev);
  // h = o·act(c)
  be.multiply(dh, act_c, dg[3]);  // do
  Tensor dact(Shape{B, U}, DType::float32, dev), dc_total(Shape{B, U}, DType::float32, dev);
  be.multiply(dh, g[3], dact);
  be.activation_backward(act, act_c, dact, dact);
  be.add({dc, dact}, dc_total);
  // c = f·c_prev + i·c̃
  be.multiply(dc_total, c_prev, dg[1]);  // df
  be.multiply(dc_total, g[2], dg[0]);    // di
  be.multiply(dc_total, g[0], dg[2]);    // dc̃
  be.multiply(dc_total, g[1], dc_prev);
  be.activation_backward(ract, g[0], dg[0], dg[0]);
  be.activation_backward(ract, g[1], dg[1], dg[1]);
  be.activation_backward(act, g[2], dg[2], dg[2]);
  be.activation_backward(ract, g[3], dg[3], dg[3]);
  be.concat(dg, -1, dz);
}

}  // namespace kerascpp::layers::cells
