// Concatenation along any axis and its inverse. Both are row copies: for each index of the
// axes before `axis`, each part contributes one contiguous run of dim(axis)·inner floats.
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

// Axis and part-shape checks are shared with the CUDA backend (backend/op_shapes.*).
using op_shapes::check_parts;
using op_shapes::normalize_axis;
using op_shapes::outer_count;

// Copies between the whole tensor and its parts; to_whole picks the direction.
template <class Parts>
void move_rows(Parts& parts, float* whole, std::int64_t outer, std::int64_t whole_row, int axis, bool to_whole) {
  std::int64_t grain = std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(whole_row, 1));
  parallel_for(outer, grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) {
      std::int64_t offset = 0;
      for (auto& p : parts) {
        std::int64_t row = p.numel() / std::max<std::int64_t>(outer, 1);
        float* part = static_cast<float*>(const_cast<void*>(p.raw())) + o * row;
        float* w = whole + o * whole_row + offset;
        if (to_whole) std::memcpy(w, part, static_cast<std::size_t>(row) * sizeof(float));
        else std::memcpy(part, w, static_cast<std::size_t>(row) * sizeof(float));
        offset += row;
      }
    }
  });
}

}  // namespace

void CpuBackend::concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  enter();
  const char* op = "concat";
  KERASCPP_CHECK_VALUE(!xs.empty(), "concat: no inputs given; pass at least one tensor");
  for (const auto& x : xs) require_float(x, op, "xs[i]");
  int a = normalize_axis(axis, xs[0].rank(), op, xs[0].shape());
  Shape shape = xs[0].shape();
  shape[a] = 0;
  for (const auto& x : xs) shape[a] += x.rank() == xs[0].rank() ? x.dim(a) : 0;
  prepare_output(y, shape, op, "y");
  check_parts(xs, y, a, op);
  std::int64_t outer = outer_count(shape, a);
  if (y.numel() == 0) return;
  move_rows(xs, y.data<float>(), outer, y.numel() / outer, a, true);
}

void CpuBackend::split(const Tensor& y, int axis, std::vector<Tensor>& xs) {
  enter();
  const char* op = "split";
  require_float(y, op, "y");
  KERASCPP_CHECK_VALUE(!xs.empty(), "split: no outputs given; preallocate xs with the part shapes");
  for (const auto& x : xs) require_float(x, op, "xs[i] (preallocate every part)");
  int a = normalize_axis(axis, y.rank(), op, y.shape());
  check_parts(xs, y, a, op);
  std::int64_t outer = outer_count(y.shape(), a);
  if (y.numel() == 0) return;
  move_rows(xs, const_cast<float*>(y.data<float>()), outer, y.numel() / outer, a, false);
}

}  // namespace kerascpp::cpu
