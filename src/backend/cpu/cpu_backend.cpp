#include "backend/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <thread>

#include "core/knobs.hpp"

namespace kerascpp {
namespace cpu {

namespace {
// KERASCPP_MAX_THREADS caps every backend's thread budget (e.g. 1 under ThreadSanitizer, whose
// view of libgomp's own synchronisation is blind, or to share a machine).
int resolve_threads(int threads) {
  if (threads <= 0) {
    unsigned hw = std::thread::hardware_concurrency();
    threads = hw == 0 ? 1 : static_cast<int>(hw);
  }
  if (const char* cap = ::kerascpp::detail::knob("KERASCPP_MAX_THREADS")) {
    int c = std::atoi(cap);
    if (c > 0 && c < threads) threads = c;
  }
  return threads;
}
}  // namespace

CpuBackend::CpuBackend(int threads)
    : threads_(resolve_threads(threads)), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  cache_.set_threads(threads_);
}

std::string CpuBackend::name() const {
  const dnnl_version_t* v = dnnl::version();
  return fmt::format("cpu (oneDNN {}.{}.{}, {} thread{})", v->major, v->minor, v->patch, threads_,
                     threads_ == 1 ? "" : "s");
}

void CpuBackend::set_num_threads(int threads) {
  threads_ = resolve_threads(threads);
  cache_.set_threads(threads_);  // primitives are kept per thread count (the governor switches back and forth)
}

void CpuBackend::enter() const { omp_set_num_threads(threads_); }

void CpuBackend::fit_threads(std::int64_t work, std::int64_t serial_below) const {
  omp_set_num_threads(work < serial_below ? 1 : threads_);
}

dnnl::primitive_attr CpuBackend::base_attr() const {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

CachedPrimitive CpuBackend::make_primitive(const dnnl::primitive_desc_base& pd, std::initializer_list<int> args) const {
  std::size_t scratch = pd.scratchpad_desc().get_size();
  CachedPrimitive p(dnnl::primitive(pd.get()), scratch);
  for (int arg : args) p.add_arg(arg, pd.query_md(dnnl::query::exec_arg_md, arg), engine_);
  if (scratch > 0) p.add_arg(DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), engine_);
  return p;
}

void CpuBackend::run(CachedPrimitive& p) {
  if (p.scratchpad_bytes() > 0) p.bind(DNNL_ARG_SCRATCHPAD, scratchpad_.bytes(p.scratchpad_bytes()));
  try {
    p.execute(stream_);
    stream_.wait();
  } catch (const dnnl::error& e) {
    throw DeviceError(
        fmt::format("oneDNN failed to execute a primitive (status {}): {}", static_cast<int>(e.status), e.what()));
  }
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  // Each backend caches its own primitives, so oneDNN's process-wide cache only adds sharing of
  // primitive objects between replica threads (and hides that sharing from ThreadSanitizer).
  static const bool global_cache_off = [] {
    dnnl::set_primitive_cache_capacity(0);
    return true;
  }();
  (void)global_cache_off;
  return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace kerascpp
