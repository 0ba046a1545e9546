// Concatenation along any axis and its inverse. Both are row copies: for each index of the
// axes before `axis`, each part contributes one contiguous run of dim(axis)·inner floats.
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

namespace {

int normalize_axis(int axis, int rank, const char* op, const Shape& shape) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(fmt::format("{}: axis {} is out of range for shape {}; use -{}..{}", op, axis, shape_str(shape), rank,
                            rank - 1));
  return a;
}

// Checks that `parts` agree with `whole` on every axis but `axis`, whose sizes add up.
void check_parts(const std::vector<Tensor>& parts, const Tensor& whole, int axis, const char* op) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    bool ok = p.rank() == whole.rank();
    for (int d = 0; ok && d < whole.rank(); ++d)
      if (d != axis && p.dim(d) != whole.dim(d)) ok = false;
    if (!ok)
      throw Error(fmt::format("{}: part {} has shape {} but must match {} on every axis except {}", op, i,
                              shape_str(p.shape()), shape_str(whole.shape()), axis));
    total += p.dim(axis);
  }
  if (total != whole.dim(axis))
    throw Error(fmt::format("{}: the parts add up to {} along axis {} but the whole tensor {} has {}", op, total, axis,
                            shape_str(whole.shape()), whole.dim(axis)));
}

std::int64_t outer_count(const Shape& s, int axis) {
  std::int64_t n = 1;
  for (int d = 0; d < axis; ++d) n *= s[d];
  return n;
}

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
        if (to_whole)
          std::memcpy(w, part, static_cast<std::size_t>(row) * sizeof(float));
        else
          std::memcpy(part, w, static_cast<std::size_t>(row) * sizeof(float));
        offset += row;
      }
    }
  });
}

}  // namespace

void CpuBackend::concat(const std::vector<Tensor>& xs, int axis, Tensor& y) {
  enter();
  const char* op = "concat";
  if (xs.empty()) throw Error("concat: no inputs given; pass at least one tensor");
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
  if (xs.empty()) throw Error("split: no outputs given; preallocate xs with the part shapes");
  for (const auto& x : xs) require_float(x, op, "xs[i] (preallocate every part)");
  int a = normalize_axis(axis, y.rank(), op, y.shape());
  check_parts(xs, y, a, op);
  std::int64_t outer = outer_count(y.shape(), a);
  if (y.numel() == 0) return;
  move_rows(xs, const_cast<float*>(y.data<float>()), outer, y.numel() / outer, a, false);
}

}  // namespace kerascpp::cpu
