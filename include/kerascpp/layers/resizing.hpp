// ZeroPadding2D and UpSampling2D (nearest or bilinear) over NHWC images, with Keras' names,
// arguments and defaults (channels_last only).
#pragma once
#include "kerascpp/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

// Rows added above and below, columns added left and right.
struct Padding2D {
  std::int64_t top = 1, bottom = 1, left = 1, right = 1;
  Padding2D() = default;
  Padding2D(std::int64_t all) : top(all), bottom(all), left(all), right(all) {}  // NOLINT: Keras' padding=1
  Padding2D(std::int64_t rows, std::int64_t columns)                             // Keras' padding=(rows, columns)
      : top(rows), bottom(rows), left(columns), right(columns) {}
  Padding2D(std::int64_t t, std::int64_t b, std::int64_t l, std::int64_t r) : top(t), bottom(b), left(l), right(r) {}
};

struct ZeroPadding2DOptions {
  std::string name{};
};

class ZeroPadding2DLayer : public Layer {
 public:
  ZeroPadding2DLayer(Padding2D padding, ZeroPadding2DOptions options);
  std::string class_name() const override { return "ZeroPadding2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Padding2D padding_;
};

struct UpSampling2DOptions {
  // "nearest" or "bilinear" (Keras 3's ops.image.resize: half-pixel centres, edges clamped,
  // no antialiasing)
  std::string interpolation = "nearest";
  std::string name{};
};

class UpSampling2DLayer : public Layer {
 public:
  UpSampling2DLayer(Size2D size, UpSampling2DOptions options);
  std::string class_name() const override { return "UpSampling2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Size2D size_;
  std::string interpolation_;
};

// ZeroPadding2D(1), ZeroPadding2D({2, 3}) (rows, columns), ZeroPadding2D({1, 2, 0, 3}) (top, bottom, left, right).
LayerRef ZeroPadding2D(Padding2D padding = {}, ZeroPadding2DOptions options = {});
// UpSampling2D(2) or UpSampling2D({2, 3}): each pixel repeated rows x columns times;
// UpSampling2D(2, {.interpolation = "bilinear"}) interpolates between pixels instead.
LayerRef UpSampling2D(Size2D size = 2, UpSampling2DOptions options = {});

}  // namespace kerascpp::layers
