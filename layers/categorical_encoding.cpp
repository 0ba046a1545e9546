#include "categorical_encoding.hpp"

namespace kerascpp::detail {

std::vector<std::int64_t> host_int64(const Tensor& x) {
  // to_vector reads any dtype as float: exact for ids below 2^24, far above any dense encoding's width.
  const std::vector<float> v = x.to_vector();
  return std::vector<std::int64_t>(v.begin(), v.end());
}

bool is_encoding_mode(const std::string& mode) { return mode == "one_hot" || mode == "multi_hot" || mode == "count"; }

Shape encoded_shape(const Shape& in, const std::string& mode, std::int64_t depth) {
  Shape out = in;
  if (mode == "one_hot" && (out.empty() || out.back() != 1)) out.push_back(depth);
  else if (out.empty()) out.push_back(depth);
  else out.back() = depth;
  return out;
}

Tensor encode_categorical(const std::vector<std::int64_t>& ids, const Shape& shape, const std::string& mode,
                          std::int64_t depth, Device device) {
  // Per example (batch row): `per_row` ids; one_hot gives each id its own row of `depth`
  // values, multi_hot and count fold a row's ids into one.
  const std::int64_t batch = shape.empty() ? 1 : shape[0];
  const std::int64_t per_row = batch == 0 ? 0 : static_cast<std::int64_t>(ids.size()) / batch;
  Shape out_shape = shape;
  if (mode == "one_hot") {
    if (out_shape.size() > 1 && out_shape.back() == 1) out_shape.pop_back();
    out_shape.push_back(depth);
  } else {
    out_shape = {batch, depth};
  }
  std::vector<float> out(static_cast<std::size_t>(shape_numel(out_shape)), 0.f);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto id = static_cast<std::size_t>(ids[i]);
    if (mode == "one_hot") {
      out[i * static_cast<std::size_t>(depth) + id] = 1.f;
      continue;
    }
    float& slot = out[(i / static_cast<std::size_t>(per_row)) * static_cast<std::size_t>(depth) + id];
    slot = mode == "count" ? slot + 1.f : 1.f;
  }
  return Tensor::from_vector(out_shape, out).to(device);
}

}  // namespace kerascpp::detail
