// CudaBackend's embedding ops on kernels/embedding.cu. Both check every id on the device and
// fetch the status block (one stream synchronisation per call) so that a bad id is a ValueError
// with the CPU backend's message, read back from the device.
#include "backend/cuda/kernel_common.hpp"
#include "backend/embedding_ids.hpp"
#include "backend/unique_rows.hpp"
#include "check.hpp"

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
  KERASCPP_CHECK_SHAPE(dy.shape() == op_shapes::embedding_rows_shape(ids, D),
                       "{}: dy has shape {} but ids {} with rows of {} need {}", op, shape_str(dy.shape()),
                       shape_str(ids.shape()), D, shape_str(op_shapes::embedding_rows_shape(ids, D)));
  if (!accumulate)
    KCPP_CUDA_CHECK(cudaMemsetAsync(dtable.raw(), 0, static_cast<std::size_t>(dtable.nbytes()), stream_));
  kernels_->reset_status();
  kern::scatter_add_rows(ids.raw(), id_type_of(ids), n, V, D, dy.data<float>(), dtable.data<float>(),
                         kernels_->status(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  const kern::Status& st = kernels_->fetch_status();
  if (st.bad_row != kern::kNoBadRow) throw_bad_id(ids, st.bad_row, V, stream_, op);
}

// The ids come to the host (they are few next to the rows) to be checked and grouped; the
// grouping goes back up and one thread per output element sums its positions in order, the
// CPU backend's order, so both give the same bits.
void CudaBackend::unique_row_sums(const Tensor& ids, const Tensor& dy, std::int64_t rows, Tensor& unique_ids,
                                  Tensor& sums) {
  DeviceGuard guard(device_);
  const char* op = "unique_row_sums";
  require_on(ids, device(), op, "ids");
  require_float_on(dy, device(), op, "dy");
  const std::int64_t D = op_shapes::check_unique_row_sums(ids, dy, rows, op);
  const std::int64_t n = ids.numel();
  std::vector<unsigned char> host(static_cast<std::size_t>(ids.nbytes()));
  if (n > 0) {
    KCPP_CUDA_CHECK(cudaMemcpyAsync(host.data(), ids.raw(), host.size(), cudaMemcpyDeviceToHost, stream_));
    KCPP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  const op_shapes::RowGroups g = op_shapes::group_rows(op_shapes::host_row_ids(host.data(), ids.dtype(), n, rows, op));
  const auto u = static_cast<std::int64_t>(g.ids.size());
  unique_ids = Tensor({u}, DType::int64, device());
  sums = Tensor({u, D}, DType::float32, device());
  if (u == 0) return;
  Tensor offsets({u + 1}, DType::int64, device()), positions({n}, DType::int64, device());
  KCPP_CUDA_CHECK(cudaMemcpyAsync(unique_ids.raw(), g.ids.data(), g.ids.size() * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, stream_));
  KCPP_CUDA_CHECK(cudaMemcpyAsync(offsets.raw(), g.offsets.data(), g.offsets.size() * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, stream_));
  KCPP_CUDA_CHECK(cudaMemcpyAsync(positions.raw(), g.positions.data(), g.positions.size() * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, stream_));
  kern::grouped_row_sums(dy.data<float>(), offsets.data<std::int64_t>(), positions.data<std::int64_t>(), u, D,
                         sums.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
  // The host vectors and the index tensors die on return: finish the copies and the kernel first.
  KCPP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace kerascpp::cuda
