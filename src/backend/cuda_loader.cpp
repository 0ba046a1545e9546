// The GPU seam (backend/gpu_support.hpp) of a build with the CUDA backend. The backend lives in
// its own library, libkerascpp_cuda.so (cuBLAS, cuBLASLt, cuDNN, NCCL: hundreds of MB to map),
// loaded here on the first question that needs the CUDA runtime. A machine without an NVIDIA
// driver is recognised from /proc and /dev first, so a CPU-only process (MirroredStrategy<>()
// probing for GPUs included) never loads it.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <string>

#include "backend/gpu_support.hpp"
#include "check.hpp"

namespace kerascpp::detail {
namespace {

bool exists(const char* path) { return access(path, F_OK) == 0; }

// Linux's NVIDIA driver shows itself in /proc and /dev; WSL2 exposes GPUs through /dev/dxg.
bool nvidia_driver_present() {
  return exists("/proc/driver/nvidia/version") || exists("/dev/nvidiactl") || exists("/dev/dxg");
}

// The directory libkerascpp.so was loaded from: libkerascpp_cuda.so is built and installed there.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvidia_driver_present), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

struct Loaded {
  const GpuSeam* seam = nullptr;
  std::string error;  // why it could not be loaded
};

// Loads libkerascpp_cuda.so once per process and keeps it loaded (its CUDA state lives as long).
const Loaded& load_cuda_backend() {
  static const Loaded loaded = [] {
    Loaded r;
    std::string beside = own_directory() + kKerasCppCudaLibrary;
    void* handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string first_error = handle ? "" : dlerror();
    if (!handle) handle = dlopen(kKerasCppCudaLibrary, RTLD_NOW | RTLD_LOCAL);  // the loader's search path
    if (!handle) {
      r.error = fmt::format(
          "the CUDA backend library {} could not be loaded ({}); it is built and installed next to libkerascpp.so",
          kKerasCppCudaLibrary, first_error);
      return r;
    }
    auto entry = reinterpret_cast<const GpuSeam* (*)()>(dlsym(handle, kKerasCppCudaSeamSymbol));
    if (!entry) {
      r.error = fmt::format("{} has no entry point {}: it is from another build of kerascpp", beside,
                            kKerasCppCudaSeamSymbol);
      return r;
    }
    r.seam = entry();
    return r;
  }();
  return loaded;
}

// The CUDA backend, or a DeviceError saying why there is none (`what` names the caller's object).
const GpuSeam& seam(const std::string& what) {
  const Loaded& l = load_cuda_backend();
  KERASCPP_CHECK_DEVICE(l.seam, "{}", what + ": " + l.error);
  return *l.seam;
}

void require_gpu(int device) {
  const GpuAvailability& a = gpu_availability();
  KERASCPP_CHECK_DEVICE(device >= 0 && device < a.device_count, "gpu:{} does not exist: {}", device,
                        a.device_count == 0 ? a.reason
                                            : fmt::format("this machine has {} GPU(s), gpu:0..gpu:{}", a.device_count,
                                                          a.device_count - 1));
}

// Tensor's memory operations: a GPU tensor exists only once require_gpu has passed for its device.
void* allocate(Device d, std::size_t n) {
  require_gpu(d.index);
  return seam(d.str()).memory.allocate(d, n);
}
void release(Device d, void* p, std::size_t n) { seam(d.str()).memory.release(d, p, n); }
void copy(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t n) {
  seam(dst_dev.kind == Device::Kind::gpu ? dst_dev.str() : src_dev.str()).memory.copy(dst, dst_dev, src, src_dev, n);
}
void zero(Device d, void* p, std::size_t n) { seam(d.str()).memory.zero(d, p, n); }

const DeviceMemoryOps kForwardingOps{allocate, release, copy, zero};

}  // namespace

const GpuAvailability& gpu_availability() {
  static const GpuAvailability a = [] {
    GpuAvailability r;
    r.built = true;
    if (!nvidia_driver_present()) {
      r.reason = "no NVIDIA driver is loaded (no /proc/driver/nvidia/version, /dev/nvidiactl or /dev/dxg)";
      return r;
    }
    const Loaded& l = load_cuda_backend();
    if (!l.seam) {
      r.reason = l.error;
      return r;
    }
    r.device_count = l.seam->device_count(&r.reason);
    return r;
  }();
  return a;
}

const DeviceMemoryOps* gpu_memory_ops() { return &kForwardingOps; }

std::unique_ptr<Backend> make_gpu_backend(int device) {
  require_gpu(device);
  return seam("gpu:" + std::to_string(device)).make_backend(device);
}

PendingUpload upload_async(const Tensor& host, Backend& backend) {
  return seam(backend.device().str()).upload_async(host, backend);
}

void wait_upload(const PendingUpload& upload, Backend& backend) {
  seam(backend.device().str()).wait_upload(upload, backend);
}

std::unique_ptr<DeviceCollectives> make_gpu_collectives(const std::vector<Backend*>& replicas,
                                                        distribute::CrossDeviceOpsKind ops, const NcclSpan* span) {
  return seam("GPU collectives").make_collectives(replicas, ops, span);
}

std::array<char, 128> make_nccl_unique_id() { return seam("NCCL").nccl_unique_id(); }

std::shared_ptr<void> enter_gpu(int device) {
  require_gpu(device);
  return seam("gpu:" + std::to_string(device)).enter_gpu(device);
}

}  // namespace kerascpp::detail
