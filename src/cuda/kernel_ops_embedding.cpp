// CudaBackend's embedding ops on kernels/embedding.cu. Both check every id on the device and
// fetch the status block (one stream synchronisation per call) so that a bad id is a ValueError
// with the CPU backend's message, read back from the device.
#include "backend/embedding_ids.hpp"
#include "cuda/kernel_ops_common.hpp"

namespace kerascpp::cuda {

namespace {

int id_type_of(const Tensor& ids) {
  switch (ids.dtype()) {
    case DType::int32:
      return kern::kLabelInt32;
    case DType::int64:
      return kern::kLabelInt64;
    case DType::uint8:
      return kern::kLabelUint8;
    default:
      return kern::kIdFloat32;
  }
}

// After a kernel reported position `index` bad: reads that id back and throws.
[[noreturn]] void throw_bad_id(const Tensor& ids, unsigned long long index, std::int64_t rows, cudaStream_t stream,
                               const char* op) {
  unsigned char bytes[8] = {};
  const std::size_t size = dtype_size(ids.dtype());
  const auto* src = static_cast<const unsigned char*>(ids.raw()) + index * size;
  KCPP_CUDA_CHECK(cudaMemcpyAsync(bytes, src, size, cudaMemcpyDeviceToHost, stream));
  KCPP_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::int64_t value = -1;
  switch (ids.dtype()) {
    case DType::int32: {
      std::int32_t v;
      std::memcpy(&v, bytes, sizeof v);
      value = v;
      break;
    }
    case DType::int64:
      std::memcpy(&value, bytes, sizeof value);
      break;
    case DType::uint8:
      value = bytes[0];
      break;
    default: {
      float v;
      std::memcpy(&v, bytes, sizeof v);
      value = op_shapes::float_id(v);
      break;
    }
  }
  op_shapes::throw_id_out_of_range(value, static_cast<std::int64_t>(index), rows, op);
}

}  // namespace

void CudaBackend::gather_rows(const Tensor& table, const Tensor& ids, Tensor& out, Tensor& mask) {
  DeviceGuard guard(device_);
  const char* op = "gather_rows";
  require_float_on(table, device(), op, "table");
  op_shapes::check_embedding_table(table, op, "table");
  require_on(ids, device(), op, "ids");
  op_shapes::check_embedding_ids(ids, op);
  const std::int64_t V = table.dim(0), D = table.dim(1), n = ids.numel();
  prepare_output_on(out, op_shapes::embedding_rows_shape(ids, D), device(), op, "out");
  std::uint8_t* pm = nullptr;
  if (mask.defined()) {
    if (mask.dtype() != DType::uint8 || mask.shape() != ids.shape() || mask.device() != device())
      mask = Tensor(ids.shape(), DType::uint8, device());
    pm = mask.data<std::uint8_t>();
  }
  kernels_->reset_status();
  kern::gather_rows(table.data<float>(), ids.raw(), id_type_of(ids), n, V, D, out.data<float>(), pm, kernels_->status(),
                    stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) throw_bad_id(ids, st.bad_row, V, stream_, op);
}

void CudaBackend::scatter_add_rows(const Tensor& ids, const Tensor& dy, Tensor& dtable, bool accumulate) {
  DeviceGuard guard(device_);
  const char* op = "scatter_add_rows";
  require_on(ids, device(), op, "ids");
  op_shapes::check_embedding_ids(ids, op);
  require_float_on(dtable, device(), op, "dtable");
  op_shapes::check_embedding_table(dtable, op, "dtable");
  require_float_on(dy, device(), op, "dy");
  const std::int64_t V = dtable.dim(0), D = dtable.dim(1), n = ids.numel();
  if (dy.shape() != op_shapes::embedding_rows_shape(ids, D))
    throw ShapeError(fmt::format("{}: dy has shape {} but ids {} with rows of {} need {}", op, shape_str(dy.shape()),
                                 shape_str(ids.shape()), D, shape_str(op_shapes::embedding_rows_shape(ids, D))));
  if (!accumulate)
    KCPP_CUDA_CHECK(cudaMemsetAsync(dtable.raw(), 0, static_cast<std::size_t>(dtable.nbytes()), stream_));
  kernels_->reset_status();
  kern::scatter_add_rows(ids.raw(), id_type_of(ids), n, V, D, dy.data<float>(), dtable.data<float>(),
                         kernels_->status(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) throw_bad_id(ids, st.bad_row, V, stream_, op);
}

}  // namespace kerascpp::cuda
