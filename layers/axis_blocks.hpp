// Per-axis building blocks of the padding, cropping, upsampling and RepeatVector layers, made of
// the Backend's concat, split and add (no op of their own): padding is a concatenation with zero
// blocks, cropping a split keeping the middle part, nearest upsampling a concatenation of copies.
#pragma once
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::detail {

// x with `before` and `after` zero slices concatenated around it along `axis`.
Tensor pad_axis(Backend& be, const Tensor& x, int axis, std::int64_t before, std::int64_t after);
// The inverse: x without its first `before` and last `after` slices along `axis`.
Tensor crop_axis(Backend& be, const Tensor& x, int axis, std::int64_t before, std::int64_t after);
// Each slice of x along `axis` repeated `times` times in a row (nearest upsampling).
Tensor repeat_axis(Backend& be, const Tensor& x, int axis, std::int64_t times);
// Its gradient: the sum of the `times` copies' gradients.
Tensor repeat_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times);

}  // namespace kerascpp::detail
