// Keras' GRUCell step with reset_after=True (keras/src/layers/rnn/gru.py): the reset gate
// multiplies the recurrent projection (bias included) after the matmul. See recurrent_cells.hpp.
#include "recurrent_cells.hpp"

namespace kerascpp::layers::cells {

void gru_forward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& xw, const Tensor& rec,
                 const Tensor& h_prev, Tensor& gates, Tensor& h) {
  const std::int64_t B = xw.dim(0), U = xw.dim(1) / 3;
  const Device dev = xw.device();
  std::vector<Tensor> x = gate_parts(B, U, 3, dev), r = gate_parts(B, U, 3, dev), g = gate_parts(B, U, 3, dev);
  be.split(xw, -1, x);
  be.split(rec, -1, r);
  Tensor sum(Shape{B, U}, DType::float32, dev);
  be.add({x[0], r[0]}, sum);
  be.activation_forward(ract, sum, g[0]);  // z
  be.add({x[1], r[1]}, sum);
  be.activation_forward(ract, sum, g[1]);  // r
  Tensor rh(Shape{B, U}, DType::float32, dev);
  be.multiply(g[1], r[2], rh);
  be.add({x[2], rh}, sum);
  be.activation_forward(act, sum, g[2]);  // hh
  be.concat(g, -1, gates);
  // h = z·h_prev + (1 − z)·hh, computed as hh + z·(h_prev − hh) (no scalar-minus op; equal to rounding).
  Tensor diff(Shape{B, U}, DType::float32, dev), neg = g[2].clone();
  be.scale(neg, -1.f);
  be.add({h_prev, neg}, diff);
  be.multiply(g[0], diff, rh);
  be.add({g[2], rh}, h);
}

void gru_backward(Backend& be, const ActivationFn& act, const ActivationFn& ract, const Tensor& gates,
                  const Tensor& rec, const Tensor& h_prev, const Tensor& dh, Tensor& dxw, Tensor& drec,
                  Tensor& dh_prev) {
  const std::int64_t B = dh.dim(0), U = dh.dim(1);
  const Device dev = dh.device();
  std::vector<Tensor> g = gate_parts(B, U, 3, dev), r = gate_parts(B, U, 3, dev), dx = gate_parts(B, U, 3, dev);
  be.split(gates, -1, g);
  be.split(rec, -1, r);
  // h = hh + z·(h_prev − hh): dz = dh·(h_prev − hh), dhh = dh − dh·z, dh_prev = dh·z.
  Tensor diff(Shape{B, U}, DType::float32, dev), neg = g[2].clone();
  be.scale(neg, -1.f);
  be.add({h_prev, neg}, diff);
  be.multiply(dh, diff, dx[0]);
  be.multiply(dh, g[0], dh_prev);
  Tensor neg_dhz = dh_prev.clone();
  be.scale(neg_dhz, -1.f);
  be.add({dh, neg_dhz}, dx[2]);
  be.activation_backward(act, g[2], dx[2], dx[2]);  // d(xh + r·rh)
  // r·rh: dr = da·rh, drh = da·r
  be.multiply(dx[2], r[2], dx[1]);
  be.activation_backward(ract, g[1], dx[1], dx[1]);
  be.activation_backward(ract, g[0], dx[0], dx[0]);
  be.concat(dx, -1, dxw);
  Tensor drh(Shape{B, U}, DType::float32, dev);
  be.multiply(dx[2], g[1], drh);
  be.concat({dx[0], dx[1], drh}, -1, drec);
}

}  // namespace kerascpp::layers::cells
