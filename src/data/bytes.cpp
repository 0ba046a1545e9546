#include "kerascpp/data/bytes.hpp"
#include "check.hpp"

#include <fmt/format.h>

#include <cstring>

namespace kerascpp::data {

Tensor bytes_tensor(std::string_view bytes) {
  Tensor t({static_cast<std::int64_t>(bytes.size())}, DType::uint8, Device{});
  if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
  return t;
}

std::string tensor_bytes(const Tensor& t) {
  KERASCPP_CHECK_SHAPE(t.dtype() == DType::uint8,
                       "tensor_bytes: the tensor holds {}, not uint8 bytes; byte strings are uint8 tensors "
                       "(bytes_tensor makes one)",
                       dtype_name(t.dtype()));
  const Tensor host = t.to(Device{});
  return std::string(static_cast<const char*>(host.raw()), host.nbytes());
}

}  // namespace kerascpp::data
