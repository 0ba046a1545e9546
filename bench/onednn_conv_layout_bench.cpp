// oneDNN float32 convolution time per pass for one convolution shape with the activations in
// NHWC (kerascpp's layout, acdb) against oneDNN's own choice (format any: nChw16c on AVX-512),
// the weights in oneDNN's choice either way; reorders not counted. Answers whether a blocked
// activation layout would pay for its reorders (bench/README.md).
//   onednn_conv_layout_bench [N H W IC OC K]   default: the official MNIST CNN's second conv, batch 256
#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Shape {
  long n = 256, h = 14, w = 14, ic = 32, oc = 64, k = 5;
};

template <class Run>
double best_ms(Run&& run, dnnl::stream& s, int reps = 10) {
  run();
  s.wait();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    s.wait();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

dnnl::memory make(const dnnl::memory::desc& md, dnnl::engine& e) {
  dnnl::memory m(md, e);
  auto* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = 0.01f * static_cast<float>((i * 7919) % 101) - 0.5f;
  return m;
}

void time_layout(const Shape& s, tag act, dnnl::engine& e, dnnl::stream& st) {
  const long pad = s.k / 2;
  dnnl::memory::dims src{s.n, s.ic, s.h, s.w}, wei{s.oc, s.ic, s.k, s.k}, bia{s.oc}, dst{s.n, s.oc, s.h, s.w};
  dnnl::memory::dims strides{1, 1}, pads{pad, pad};
  dnnl::memory::desc src_md(src, dt::f32, act), dst_md(dst, dt::f32, act), wei_md(wei, dt::f32, tag::any),
      bia_md(bia, dt::f32, tag::a);
  dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_md,
                                     wei_md, bia_md, dst_md, strides, pads, pads);
  dnnl::convolution_forward::primitive_desc fpd(fd, e);
  dnnl::convolution_backward_data::desc bd(dnnl::algorithm::convolution_direct, src_md, wei_md, dst_md, strides, pads,
                                           pads);
  dnnl::convolution_backward_data::primitive_desc bpd(bd, e, fpd);
  dnnl::convolution_backward_weights::desc wd(dnnl::algorithm::convolution_direct, src_md, wei_md, bia_md, dst_md,
                                              strides, pads, pads);
  dnnl::convolution_backward_weights::primitive_desc wpd(wd, e, fpd);
  auto x = make(fpd.src_desc(), e), w = make(fpd.weights_desc(), e), b = make(fpd.bias_desc(), e),
       y = make(fpd.dst_desc(), e);
  auto dx = make(bpd.diff_src_desc(), e), wb = make(bpd.weights_desc(), e), dy = make(bpd.diff_dst_desc(), e);
  auto dw = make(wpd.diff_weights_desc(), e), db = make(wpd.diff_bias_desc(), e), xw = make(wpd.src_desc(), e),
       dyw = make(wpd.diff_dst_desc(), e);
  dnnl::convolution_forward f(fpd);
  dnnl::convolution_backward_data bdata(bpd);
  dnnl::convolution_backward_weights bw(wpd);
  const double tf = best_ms(
      [&] { f.execute(st, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}}); }, st);
  const double td = best_ms(
      [&] { bdata.execute(st, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, wb}, {DNNL_ARG_DIFF_SRC, dx}}); }, st);
  const double tw = best_ms(
      [&] {
        bw.execute(
            st, {{DNNL_ARG_SRC, xw}, {DNNL_ARG_DIFF_DST, dyw}, {DNNL_ARG_DIFF_WEIGHTS, dw}, {DNNL_ARG_DIFF_BIAS, db}});
      },
      st);
  std::printf("%-5s forward %7.2f ms (%s)  backward data %7.2f ms (%s)  backward weights %7.2f ms (%s)  total %7.2f\n",
              act == tag::nhwc ? "nhwc" : "any", tf, fpd.impl_info_str(), td, bpd.impl_info_str(), tw,
              wpd.impl_info_str(), tf + td + tw);
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  if (argc == 7) {
    long* f[] = {&s.n, &s.h, &s.w, &s.ic, &s.oc, &s.k};
    for (int i = 0; i < 6; ++i) *f[i] = std::atol(argv[i + 1]);
  }
  dnnl::engine e(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(e);
  std::printf("conv %ldx%ldx%ldx%ld -> %ld filters %ldx%ld same, float32\n", s.n, s.h, s.w, s.ic, s.oc, s.k, s.k);
  time_layout(s, tag::nhwc, e, st);
  time_layout(s, tag::any, e, st);
}
