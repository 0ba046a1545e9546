// Every layer's backward against central finite differences of the scalar objective
// L = Σ output ⊙ R (R fixed and random, so dL/doutput = R): input gradients and the gradient of
// every trainable variable, for single layers, a branching graph and a shared layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;

namespace {

K::Tensor grad_random_tensor(const K::Shape& shape, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

// Distinct values on a grid of spacing `step`, randomly placed: max pooling never sees a tie,
// and a perturbation smaller than step/2 never changes which element wins.
K::Tensor distinct_tensor(const K::Shape& shape, std::uint32_t seed, float step = 0.05f) {
  auto n = static_cast<std::size_t>(K::shape_numel(shape));
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = (static_cast<float>(i) - static_cast<float>(n) / 2.f) * step;
  std::mt19937 gen(seed);
  std::shuffle(v.begin(), v.end(), gen);
  return K::Tensor::from_vector(shape, v);
}

// The checker is the public one (kerascpp/testing/gradient_check.hpp); these adapters keep the
// test cases short and turn a result into doctest checks.
using FdOptions = K::testing::GradientCheckOptions;
using FdResult = K::testing::GradientCheckResult;
using Eval = K::testing::Evaluation;

void require_ok(const FdResult& r, const FdOptions& o = {}) {
  INFO("worst: " << r.worst_at << " (relative error " << r.worst_error << "), checked " << r.checked << ", skipped "
                 << r.skipped);
  for (auto& p : r.problems) FAIL_CHECK(p);
  CHECK(r.checked > 0);
  CHECK(r.worst_error <= o.tolerance);
  CHECK(static_cast<double>(r.skipped) <= o.max_skipped_fraction * static_cast<double>(r.checked + r.skipped));
}

// A single CPU replica, as the engine gives each layer.
struct Replica {
  std::unique_ptr<K::Backend> backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  explicit Replica(bool training = true) {
    ctx.backend = backend.get();
    ctx.training = training;
  }
};

std::vector<K::Tensor> clone_all(const std::vector<K::Tensor>& ts) {
  std::vector<K::Tensor> out;
  for (auto& t : ts) out.push_back(t.clone());
  return out;
}

std::vector<K::Tensor> randoms_like(const std::vector<K::Tensor>& ts, std::uint32_t seed) {
  std::vector<K::Tensor> out;
  for (auto& t : ts) out.push_back(grad_random_tensor(t.shape(), seed++));
  return out;
}

// Finite-difference check of one layer on inputs `xs`. `relu_guard`: the layer's outputs have
// relu kinks (output == 0 region), so steps across them are skipped.
FdResult check_layer(Replica& rep, const K::LayerRef& layer, std::vector<K::Tensor> xs, bool relu_guard,
                     FdOptions o = {}, std::uint32_t r_seed = 1000) {
  o.relu_outputs = relu_guard;
  o.seed = r_seed;
  return K::testing::check_layer_gradients(rep.ctx, layer, xs, o);
}

// A custom layer (same base as the built-in ones): identity forward, and it records the gradient
// arriving at its output, which for an identity is dL/d(its input). Placed right after a graph
// input it exposes dL/dx, which Graph::backward does not return.
class GradientProbe : public K::Layer {
 public:
  K::Tensor seen;
  std::string class_name() const override { return "GradientProbe"; }
  bool needs_gradient() override { return true; }  // layers before it must deliver dL/dx
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override { return {in.at(0)}; }
  std::vector<K::Tensor> forward(K::ReplicaContext&, const std::vector<K::Tensor>& in, K::LayerState&) override {
    return {in.at(0)};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext&, const std::vector<K::Tensor>&, const std::vector<K::Tensor>&,
                                  const std::vector<K::Tensor>& grads, K::LayerState&) override {
    seen = grads.at(0).clone();
    return {grads.at(0)};
  }
};

// Reference NHWC pooling with TensorFlow's "same" split (extra pad at the bottom/right); padded
// positions are excluded (max ignores them, the average divides by the valid count).
std::vector<float> naive_pool(const K::Tensor& x, bool is_max, std::int64_t pool, std::int64_t stride, bool same) {
  std::int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  auto out_len = [&](std::int64_t in) { return same ? (in + stride - 1) / stride : (in - pool) / stride + 1; };
  auto pad_before = [&](std::int64_t in) {
    if (!same) return std::int64_t{0};
    std::int64_t total = std::max<std::int64_t>((out_len(in) - 1) * stride + pool - in, 0);
    return total / 2;
  };
  std::int64_t oh = out_len(h), ow = out_len(w), pt = pad_before(h), pl = pad_before(w);
  const float* px = x.data<float>();
  std::vector<float> y;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j)
        for (std::int64_t ch = 0; ch < c; ++ch) {
          double acc = is_max ? -1e30 : 0.0;
          int count = 0;
          for (std::int64_t di = 0; di < pool; ++di)
            for (std::int64_t dj = 0; dj < pool; ++dj) {
              std::int64_t r = i * stride + di - pt, q = j * stride + dj - pl;
              if (r < 0 || r >= h || q < 0 || q >= w) continue;
              double v = px[((b * h + r) * w + q) * c + ch];
              acc = is_max ? std::max(acc, v) : acc + v;
              ++count;
            }
          y.push_back(static_cast<float>(is_max ? acc : acc / count));
        }
  return y;
}

void check_forward_against(const K::Tensor& y, const std::vector<float>& expected) {
  auto got = y.to_vector();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
}

std::size_t node_position(const K::detail::Graph& graph, const K::KerasTensor& t) {
  const auto& nodes = graph.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i] == t.node()) return i;
  FAIL("tensor is not part of the graph");
  return 0;
}

// Finite-difference check of a whole graph: dL/dx through `probe`, and every trainable variable
// of every layer. `relu_tensors` are the graph tensors that come out of a relu (kink guard).
FdResult check_graph(Replica& rep, const K::detail::Graph& graph, K::Tensor x, GradientProbe& probe,
                     const std::vector<K::KerasTensor>& relu_tensors, const FdOptions& o = {}) {
  std::vector<std::size_t> relu_nodes;
  for (auto& t : relu_tensors) relu_nodes.push_back(node_position(graph, t));
  std::vector<K::Variable*> vars;
  for (auto& layer : graph.layers())
    for (K::Variable* v : layer->trainable_variables()) vars.push_back(v);

  K::detail::GraphState st;
  auto outs = clone_all(graph.forward(rep.ctx, {x}, st));
  auto r = randoms_like(outs, 2000);
  for (K::Variable* v : vars) v->reset_grads(0);
  graph.backward(rep.ctx, r, st, nullptr);
  REQUIRE(probe.seen.defined());
  K::Tensor dx = probe.seen.clone();
  std::vector<K::Tensor> dvars;
  for (K::Variable* v : vars) {
    REQUIRE_MESSAGE(v->has_grad(0), v->path() << " got no gradient");
    dvars.push_back(v->grad(0).clone());
  }

  auto eval = [&]() {
    K::detail::GraphState s;  // fresh state: batch statistics are recomputed on every evaluation
    auto o2 = graph.forward(rep.ctx, {x}, s);
    Eval e;
    e.value = K::testing::weighted_sum(o2, r);
    for (std::size_t n : relu_nodes) K::testing::append_relu_kinks(e.kinks, s.outputs[n].at(0));
    return e;
  };
  Eval base = eval();
  FdResult res;
  K::testing::compare_gradient(res, "dL/dx", x, dx, eval, base, o);
  for (std::size_t k = 0; k < vars.size(); ++k)
    K::testing::compare_gradient(res, vars[k]->path(), vars[k]->value(0), dvars[k], eval, base, o);
  return res;
}

}  // namespace

TEST_CASE("gradients: the finite-difference checker rejects wrong gradients") {
  // The harness itself must catch the bugs it exists for: a transposed kernel gradient and a
  // missing bias gradient. Build a correct gradient, corrupt it, and expect a large error.
  Replica rep;
  auto in = K::Input({4});
  K::LayerRef dense = K::layers::Dense(4, {.activation = "tanh", .seed = 3});
  dense(in);
  K::Tensor x = grad_random_tensor({3, 4}, 7);
  K::testing::LayerGradients g = K::testing::layer_gradients(rep.ctx, dense, {x}, 11);
  REQUIRE(g.problems.empty());
  auto eval = [&]() {
    K::LayerState st;
    return Eval{K::testing::weighted_sum(dense->forward(rep.ctx, {x}, st), g.output_weights), {}};
  };
  Eval base = eval();
  auto vars = dense->trainable_variables();
  REQUIRE(vars.size() == 2);

  FdResult correct;
  K::testing::compare_gradient(correct, "kernel", vars[0]->value(0), g.variable_grads[0], eval, base, {});
  K::testing::compare_gradient(correct, "bias", vars[1]->value(0), g.variable_grads[1], eval, base, {});
  CHECK(correct.worst_error <= 5e-3);
  CHECK(correct.passed());

  K::Tensor transposed = g.variable_grads[0].clone();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) transposed.data<float>()[i * 4 + j] = g.variable_grads[0].data<float>()[j * 4 + i];
  FdResult wrong_kernel;
  K::testing::compare_gradient(wrong_kernel, "kernel", vars[0]->value(0), transposed, eval, base, {});
  CHECK(wrong_kernel.worst_error > 5e-2);
  CHECK_FALSE(wrong_kernel.passed());

  FdResult missing_bias;
  K::testing::compare_gradient(missing_bias, "bias", vars[1]->value(0), K::Tensor::zeros({4}), eval, base, {});
  CHECK(missing_bias.worst_error > 5e-2);
  CHECK_FALSE(missing_bias.passed());
}

TEST_CASE("gradients: Dense with every activation") {
  Replica rep;
  for (std::string act : {"linear", "relu", "sigmoid", "tanh", "softmax"}) {
    CAPTURE(act);
    auto in = K::Input({5});
    K::LayerRef dense = K::layers::Dense(4, {.activation = act, .seed = 21});
    dense(in);
    // A non-zero bias so that the bias takes part in the forward pass.
    dense->trainable_variables()[1]->value(0).copy_from(grad_random_tensor({4}, 5, -0.5f, 0.5f));
    require_ok(check_layer(rep, dense, {grad_random_tensor({6, 5}, 31)}, act == "relu"));
  }
}

TEST_CASE("gradients: Dense on a rank-3 input and without bias") {
  Replica rep;
  auto in = K::Input({3, 4});
  K::LayerRef dense = K::layers::Dense(5, {.activation = "tanh", .seed = 4});
  CHECK(dense(in).shape() == K::Shape{3, 5});
  auto res = check_layer(rep, dense, {grad_random_tensor({2, 3, 4}, 32)}, false);
  require_ok(res);

  auto in2 = K::Input({4});
  K::LayerRef nobias = K::layers::Dense(3, {.activation = "sigmoid", .use_bias = false, .seed = 5});
  nobias(in2);
  CHECK(nobias->trainable_variables().size() == 1);
  require_ok(check_layer(rep, nobias, {grad_random_tensor({5, 4}, 33)}, false));
}

TEST_CASE("gradients: Conv2D") {
  Replica rep;
  struct Case {
    const char* what;
    K::Shape input;
    std::int64_t filters;
    K::Size2D kernel;
    K::layers::Conv2DOptions options;
    K::Shape expected_output;
  };
  std::vector<Case> cases = {
      {"valid, stride 1", {5, 6, 3}, 4, 3, {.seed = 1}, {3, 4, 4}},
      {"same, stride 2, 5x5 (symmetric padding)",
       {5, 5, 3},
       4,
       3,
       {.strides = {2, 2}, .padding = K::Padding::same, .seed = 2},
       {3, 3, 4}},
      // 6 and 8 with k=3, s=2: one pixel of padding in total, all of it at the bottom/right.
      {"same, stride 2, 6x8 (asymmetric padding)",
       {6, 8, 2},
       3,
       3,
       {.strides = {2, 2}, .padding = K::Padding::same, .seed = 3},
       {3, 4, 3}},
      {"same, stride 1, even kernel (asymmetric padding)",
       {4, 5, 2},
       2,
       2,
       {.padding = K::Padding::same, .seed = 4},
       {4, 5, 2}},
      {"valid, strides 2x1, 2x3 kernel", {6, 7, 2}, 3, {2, 3}, {.strides = {2, 1}, .seed = 5}, {3, 5, 3}},
      {"relu, same, stride 2, odd input",
       {7, 5, 3},
       4,
       3,
       {.strides = {2, 2}, .padding = K::Padding::same, .activation = "relu", .seed = 6},
       {4, 3, 4}},
  };
  std::uint32_t seed = 40;
  for (auto& c : cases) {
    CAPTURE(c.what);
    auto in = K::Input(c.input);
    K::LayerRef conv = K::layers::Conv2D(c.filters, c.kernel, c.options);
    CHECK(conv(in).shape() == c.expected_output);
    conv->trainable_variables()[1]->value(0).copy_from(grad_random_tensor({c.filters}, seed, -0.3f, 0.3f));
    K::Shape batch_shape = c.input;
    batch_shape.insert(batch_shape.begin(), 2);
    require_ok(check_layer(rep, conv, {grad_random_tensor(batch_shape, seed++)}, c.options.activation == "relu"));
  }
}

TEST_CASE("gradients: MaxPooling2D and AveragePooling2D") {
  Replica rep;
  struct Case {
    bool is_max;
    K::Shape input;
    std::int64_t pool, stride;
    K::Padding padding;
    K::Shape expected_output;
  };
  std::vector<Case> cases = {
      {true, {5, 6, 3}, 2, 2, K::Padding::valid, {2, 3, 3}},  // the last row is dropped
      {true, {5, 5, 2}, 3, 1, K::Padding::valid, {3, 3, 2}},  // overlapping windows
      {true, {5, 7, 2}, 2, 2, K::Padding::same, {3, 4, 2}},   // one pad row/col at the bottom/right
      {true, {5, 6, 2}, 3, 2, K::Padding::same, {3, 3, 2}},   // padding on both sides of the rows
      {false, {4, 5, 3}, 2, 2, K::Padding::valid, {2, 2, 3}}, {false, {5, 5, 2}, 3, 1, K::Padding::valid, {3, 3, 2}},
      {false, {5, 7, 2}, 2, 2, K::Padding::same, {3, 4, 2}},  {false, {5, 6, 2}, 3, 2, K::Padding::same, {3, 3, 2}},
  };
  std::uint32_t seed = 50;
  for (auto& c : cases) {
    CAPTURE(c.is_max);
    CAPTURE(K::padding_name(c.padding));
    CAPTURE(c.pool);
    auto in = K::Input(c.input);
    K::layers::Pooling2DOptions options{.strides = c.stride, .padding = c.padding};
    K::LayerRef pool =
        c.is_max ? K::layers::MaxPooling2D(c.pool, options) : K::layers::AveragePooling2D(c.pool, options);
    CHECK(pool(in).shape() == c.expected_output);
    K::Shape batch_shape = c.input;
    batch_shape.insert(batch_shape.begin(), 2);
    // Max pooling: distinct values, so no ties and no winner change under the perturbation.
    K::Tensor x = c.is_max ? distinct_tensor(batch_shape, seed++) : grad_random_tensor(batch_shape, seed++);
    K::LayerState st;
    check_forward_against(pool->forward(rep.ctx, {x}, st).at(0),
                          naive_pool(x, c.is_max, c.pool, c.stride, c.padding == K::Padding::same));
    require_ok(check_layer(rep, pool, {x}, false));
  }
}

TEST_CASE("gradients: GlobalAveragePooling2D, Flatten, Reshape") {
  Replica rep;
  {
    auto in = K::Input({3, 4, 5});
    K::LayerRef gap = K::layers::GlobalAveragePooling2D();
    CHECK(gap(in).shape() == K::Shape{5});
    require_ok(check_layer(rep, gap, {grad_random_tensor({2, 3, 4, 5}, 70)}, false));
  }
  {
    auto in = K::Input({3, 2, 2});
    K::LayerRef flat = K::layers::Flatten();
    CHECK(flat(in).shape() == K::Shape{12});
    require_ok(check_layer(rep, flat, {grad_random_tensor({3, 3, 2, 2}, 71)}, false));
  }
  {
    auto in = K::Input({12});
    K::LayerRef reshape = K::layers::Reshape({2, -1, 3});
    CHECK(reshape(in).shape() == K::Shape{2, 2, 3});
    require_ok(check_layer(rep, reshape, {grad_random_tensor({3, 12}, 72)}, false));
  }
}

TEST_CASE("gradients: Activation layers") {
  Replica rep;
  for (std::string act : {"linear", "relu", "sigmoid", "tanh", "softmax"}) {
    CAPTURE(act);
    auto in = K::Input({3, 5});
    K::LayerRef layer = K::layers::Activation(act);
    layer(in);
    // Inputs of magnitude up to 2 so sigmoid/tanh/softmax are tested away from their linear range.
    require_ok(check_layer(rep, layer, {grad_random_tensor({4, 3, 5}, 80, -2.f, 2.f)}, act == "relu"));
  }
}

TEST_CASE("gradients: Dropout") {
  auto in = K::Input({50});
  const float rate = 0.3f;
  K::LayerRef dropout = K::layers::Dropout(rate, {.seed = 7});
  dropout(in);
  K::Tensor x = grad_random_tensor({8, 50}, 90, 0.5f, 1.5f);  // non-zero, so the mask is y / x
  K::Tensor r = grad_random_tensor({8, 50}, 91);

  SUBCASE("training: backward multiplies by the forward mask") {
    Replica rep(true);
    rep.ctx.rng = K::Rng(123);
    K::LayerState st;
    K::Tensor y = dropout->forward(rep.ctx, {x}, st).at(0).clone();
    K::Tensor dx = dropout->backward(rep.ctx, {x}, {y}, {r}, st).at(0);
    const float* px = x.data<float>();
    const float* py = y.data<float>();
    const float* pr = r.data<float>();
    const float* pd = dx.data<float>();
    const float keep_scale = 1.f / (1.f - rate);
    std::int64_t dropped = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      float mask = py[i] / px[i];
      bool is_drop = mask == 0.f;
      bool is_keep = std::fabs(mask - keep_scale) <= 1e-5f * keep_scale;
      CHECK((is_drop || is_keep));
      dropped += is_drop;
      CHECK(pd[i] == doctest::Approx(pr[i] * (is_drop ? 0.f : keep_scale)).epsilon(1e-6));
    }
    double fraction = static_cast<double>(dropped) / static_cast<double>(x.numel());
    CHECK(fraction > 0.2);
    CHECK(fraction < 0.4);

    // The same replica stream state gives the same mask; the next draw gives another.
    Replica again(true);
    again.ctx.rng = K::Rng(123);
    K::LayerState st2;
    K::Tensor y2 = dropout->forward(again.ctx, {x}, st2).at(0);
    CHECK(y2.to_vector() == y.to_vector());
    K::LayerState st3;
    K::Tensor y3 = dropout->forward(again.ctx, {x}, st3).at(0);
    CHECK(y3.to_vector() != y.to_vector());
  }
  SUBCASE("inference: identity forward and backward") {
    Replica rep(false);
    K::LayerState st;
    K::Tensor y = dropout->forward(rep.ctx, {x}, st).at(0);
    CHECK(y.to_vector() == x.to_vector());
    K::Tensor dx = dropout->backward(rep.ctx, {x}, {y}, {r}, st).at(0);
    CHECK(dx.to_vector() == r.to_vector());
  }
}

TEST_CASE("gradients: BatchNormalization in training mode") {
  Replica rep(true);
  {
    auto in = K::Input({3, 3, 4});
    K::LayerRef bn = K::layers::BatchNormalization();
    bn(in);
    auto vars = bn->trainable_variables();
    REQUIRE(vars.size() == 2);
    vars[0]->value(0).copy_from(grad_random_tensor({4}, 100, 0.5f, 1.5f));   // gamma
    vars[1]->value(0).copy_from(grad_random_tensor({4}, 101, -0.5f, 0.5f));  // beta
    // Channels with different means and scales.
    K::Tensor x = grad_random_tensor({4, 3, 3, 4}, 102);
    float* px = x.data<float>();
    for (std::int64_t i = 0; i < x.numel(); ++i)
      px[i] = px[i] * static_cast<float>(1 + i % 4) + static_cast<float>(i % 4) - 1.f;
    require_ok(check_layer(rep, bn, {x}, false));
  }
  {
    auto in = K::Input({6});  // rank-2 input: statistics over the batch only
    K::LayerRef bn = K::layers::BatchNormalization({.epsilon = 1e-2f});
    bn(in);
    bn->trainable_variables()[0]->value(0).copy_from(grad_random_tensor({6}, 103, 0.5f, 1.5f));
    require_ok(check_layer(rep, bn, {grad_random_tensor({10, 6}, 104)}, false));
  }
}

TEST_CASE("gradients: BatchNormalization in inference mode uses the moving statistics") {
  Replica rep(false);
  auto in = K::Input({3});
  K::LayerRef bn = K::layers::BatchNormalization();
  bn(in);
  auto vars = bn->variables();
  REQUIRE(vars.size() == 4);
  vars[0]->value(0).copy_from(K::Tensor::from_vector({3}, std::vector<float>{1.f, 2.f, 0.5f}));
  vars[1]->value(0).copy_from(K::Tensor::from_vector({3}, std::vector<float>{0.f, 1.f, -1.f}));
  vars[2]->value(0).copy_from(K::Tensor::from_vector({3}, std::vector<float>{0.5f, -1.f, 2.f}));
  vars[3]->value(0).copy_from(K::Tensor::from_vector({3}, std::vector<float>{4.f, 0.25f, 1.f}));
  K::Tensor x = grad_random_tensor({5, 3}, 105);
  K::LayerState st;
  K::Tensor y = bn->forward(rep.ctx, {x}, st).at(0);
  auto xv = x.to_vector(), yv = y.to_vector();
  auto g = vars[0]->value(0).to_vector(), b = vars[1]->value(0).to_vector();
  auto m = vars[2]->value(0).to_vector(), v = vars[3]->value(0).to_vector();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    std::size_t c = i % 3;
    double expect = g[c] * (xv[i] - m[c]) / std::sqrt(v[c] + 1e-3) + b[c];
    CHECK(yv[i] == doctest::Approx(expect).epsilon(1e-5));
  }
}

TEST_CASE("gradients: Add and Concatenate") {
  Replica rep;
  {
    auto a = K::Input({3, 4});
    auto b = K::Input({3, 4});
    auto c = K::Input({3, 4});
    K::LayerRef add = K::layers::Add();
    add({a, b, c});
    require_ok(check_layer(
        rep, add,
        {grad_random_tensor({2, 3, 4}, 110), grad_random_tensor({2, 3, 4}, 111), grad_random_tensor({2, 3, 4}, 112)},
        false));
  }
  {
    auto a = K::Input({3, 4});
    auto b = K::Input({3, 2});
    K::LayerRef cat = K::layers::Concatenate(-1);
    CHECK(cat({a, b}).shape() == K::Shape{3, 6});
    K::Tensor xa = grad_random_tensor({2, 3, 4}, 113), xb = grad_random_tensor({2, 3, 2}, 114);
    require_ok(check_layer(rep, cat, {xa, xb}, false));
    // The forward layout: the last axis holds a's 4 values, then b's 2.
    K::LayerState st;
    auto y = cat->forward(rep.ctx, {xa, xb}, st).at(0).to_vector();
    CHECK(y[0] == xa.to_vector()[0]);
    CHECK(y[4] == xb.to_vector()[0]);
    CHECK(y[6] == xa.to_vector()[4]);
  }
  {
    auto a = K::Input({2, 3});
    auto b = K::Input({1, 3});
    auto c = K::Input({3, 3});
    K::LayerRef cat = K::layers::Concatenate(1);
    CHECK(cat({a, b, c}).shape() == K::Shape{6, 3});
    require_ok(check_layer(
        rep, cat,
        {grad_random_tensor({2, 2, 3}, 115), grad_random_tensor({2, 1, 3}, 116), grad_random_tensor({2, 3, 3}, 117)},
        false));
  }
}

TEST_CASE("gradients: a branching graph (residual block with BatchNormalization, two Dense heads)") {
  Replica rep(true);
  auto x_in = K::Input({6, 6, 3});
  auto probe = std::make_shared<GradientProbe>();
  K::LayerRef probe_ref = probe;
  auto x = probe_ref(x_in);
  auto h = K::layers::Conv2D(3, 3, {.padding = K::Padding::same, .seed = 1})(x);
  h = K::layers::BatchNormalization()(h);
  auto relu1 = K::layers::Activation("relu")(h);
  h = K::layers::Conv2D(3, 3, {.padding = K::Padding::same, .seed = 2})(relu1);
  h = K::layers::Add()({h, x});  // shortcut: x feeds the Conv2D and the Add
  auto block = K::layers::Activation("relu")(h);
  auto pooled = K::layers::GlobalAveragePooling2D()(block);
  auto head1 = K::layers::Dense(3, {.activation = "tanh", .seed = 3})(pooled);  // two heads on one tensor
  auto head2 = K::layers::Dense(2, {.activation = "sigmoid", .seed = 4})(pooled);
  auto out = K::layers::Concatenate()({head1, head2});
  // `block` is both an output and the input of the pooling: its gradients add up.
  K::detail::Graph graph({x_in}, {out, block});

  // Non-trivial biases and BN parameters.
  std::uint32_t seed = 300;
  for (auto& layer : graph.layers())
    for (K::Variable* v : layer->trainable_variables())
      if (v->name() == "gamma") v->value(0).copy_from(grad_random_tensor(v->shape(), seed++, 0.5f, 1.5f));
      else if (v->name() != "kernel") v->value(0).copy_from(grad_random_tensor(v->shape(), seed++, -0.5f, 0.5f));

  K::Tensor xv = grad_random_tensor({2, 6, 6, 3}, 310);
  FdResult res = check_graph(rep, graph, xv, *probe, {relu1, block});
  require_ok(res);
  // Every layer with weights contributed: 2 Conv2D (kernel, bias), BN (gamma, beta), 2 Dense.
  std::size_t trainable = 0;
  for (auto& layer : graph.layers()) trainable += layer->trainable_variables().size();
  CHECK(trainable == 10);
}

TEST_CASE("gradients: a layer shared by two calls sums both contributions") {
  Replica rep;
  auto x_in = K::Input({4});
  auto probe = std::make_shared<GradientProbe>();
  K::LayerRef probe_ref = probe;
  auto x = probe_ref(x_in);
  K::LayerRef d = K::layers::Dense(4, {.activation = "tanh", .seed = 9});
  auto y = d(d(x));
  d->trainable_variables()[1]->value(0).copy_from(grad_random_tensor({4}, 400, -0.5f, 0.5f));
  K::detail::Graph graph({x_in}, {y});
  REQUIRE(graph.layers().size() == 3);  // input, probe, one Dense
  K::Tensor xv = grad_random_tensor({5, 4}, 401);
  require_ok(check_graph(rep, graph, xv, *probe, {}));

  // Direct check of the bookkeeping: the graph's kernel gradient equals the sum of the two
  // calls' gradients computed one at a time (the first call overwrites, the second accumulates).
  K::detail::GraphState st;
  auto outs = graph.forward(rep.ctx, {xv}, st);
  K::Tensor r = grad_random_tensor(outs[0].shape(), 402);
  for (K::Variable* v : d->variables()) v->reset_grads(0);
  graph.backward(rep.ctx, {r}, st, nullptr);
  auto total = d->trainable_variables()[0]->grad(0).to_vector();
  auto total_bias = d->trainable_variables()[1]->grad(0).to_vector();

  K::LayerState s1, s2;
  K::Tensor h = d->forward(rep.ctx, {xv}, s1).at(0);
  K::Tensor yv = d->forward(rep.ctx, {h}, s2).at(0);
  for (K::Variable* v : d->variables()) v->reset_grads(0);
  K::Tensor dh = d->backward(rep.ctx, {h}, {yv}, {r}, s2).at(0).clone();
  auto second = d->trainable_variables()[0]->grad(0).to_vector();
  auto second_bias = d->trainable_variables()[1]->grad(0).to_vector();
  for (K::Variable* v : d->variables()) v->reset_grads(0);
  d->backward(rep.ctx, {xv}, {h}, {dh}, s1);
  auto first = d->trainable_variables()[0]->grad(0).to_vector();
  auto first_bias = d->trainable_variables()[1]->grad(0).to_vector();
  for (std::size_t i = 0; i < total.size(); ++i) CHECK(total[i] == doctest::Approx(first[i] + second[i]).epsilon(1e-5));
  for (std::size_t i = 0; i < total_bias.size(); ++i)
    CHECK(total_bias[i] == doctest::Approx(first_bias[i] + second_bias[i]).epsilon(1e-5));
}

TEST_CASE("gradients: a Flatten layer shared by inputs of different shapes") {
  // Keras lets one Flatten serve tensors of different shapes; each call flattens its own input.
  Replica rep;
  auto a = K::Input({2, 3});
  auto b = K::Input({4});
  K::LayerRef flatten = K::layers::Flatten();
  auto fa = flatten(a);
  auto fb = flatten(b);
  CHECK(fa.shape() == K::Shape{6});
  CHECK(fb.shape() == K::Shape{4});
  auto out = K::layers::Concatenate()({fa, fb});
  K::detail::Graph graph({a, b}, {out});
  K::Tensor xa = grad_random_tensor({2, 2, 3}, 500), xb = grad_random_tensor({2, 4}, 501);
  K::detail::GraphState st;
  std::vector<K::Tensor> outs;
  CHECK_NOTHROW(outs = graph.forward(rep.ctx, {xa, xb}, st));
  if (outs.empty()) return;
  REQUIRE(outs[0].shape() == K::Shape{2, 10});
  auto y = outs[0].to_vector(), va = xa.to_vector(), vb = xb.to_vector();
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 6; ++i)
      CHECK(y[static_cast<std::size_t>(r * 10 + i)] == va[static_cast<std::size_t>(r * 6 + i)]);
    for (int i = 0; i < 4; ++i)
      CHECK(y[static_cast<std::size_t>(r * 10 + 6 + i)] == vb[static_cast<std::size_t>(r * 4 + i)]);
  }
  K::Tensor r = grad_random_tensor({2, 10}, 502);
  CHECK_NOTHROW(graph.backward(rep.ctx, {r}, st, nullptr));
}

TEST_CASE("gradients: LayerNormalization on rank-2 and rank-3 inputs") {
  Replica rep(true);
  {
    auto in = K::Input({3, 5});
    K::LayerRef ln = K::layers::LayerNormalization();
    CHECK(ln(in).shape() == K::Shape{3, 5});
    auto vars = ln->trainable_variables();
    REQUIRE(vars.size() == 2);
    vars[0]->value(0).copy_from(grad_random_tensor({5}, 200, 0.5f, 1.5f));   // gamma
    vars[1]->value(0).copy_from(grad_random_tensor({5}, 201, -0.5f, 0.5f));  // beta
    K::Tensor x = grad_random_tensor({2, 3, 5}, 202);
    float* px = x.data<float>();
    for (std::int64_t i = 0; i < x.numel(); ++i) px[i] = px[i] * static_cast<float>(1 + i % 3) + 0.5f;
    require_ok(check_layer(rep, ln, {x}, false));
  }
  {
    auto in = K::Input({6});
    K::LayerRef ln = K::layers::LayerNormalization({.epsilon = 1e-2f});
    ln(in);
    ln->trainable_variables()[0]->value(0).copy_from(grad_random_tensor({6}, 203, 0.5f, 1.5f));
    require_ok(check_layer(rep, ln, {grad_random_tensor({4, 6}, 204)}, false));
  }
  {
    auto in = K::Input({4});  // no gamma/beta: only the input gradient
    K::LayerRef ln = K::layers::LayerNormalization({.center = false, .scale = false});
    ln(in);
    CHECK(ln->trainable_variables().empty());
    require_ok(check_layer(rep, ln, {grad_random_tensor({3, 4}, 205)}, false));
  }
}

TEST_CASE("LayerNormalization forward matches Keras' formula") {
  // Keras 3: inv = rsqrt(var + eps)·gamma; y = x·inv + (beta − mean·inv), var biased.
  Replica rep(false);
  auto in = K::Input({2, 4});
  K::LayerRef ln = K::layers::LayerNormalization();
  ln(in);
  K::Tensor gamma = grad_random_tensor({4}, 210, 0.5f, 1.5f), beta = grad_random_tensor({4}, 211, -0.5f, 0.5f);
  ln->trainable_variables()[0]->value(0).copy_from(gamma);
  ln->trainable_variables()[1]->value(0).copy_from(beta);
  K::Tensor x = grad_random_tensor({3, 2, 4}, 212);
  std::vector<float> expected;
  const float* px = x.data<float>();
  for (int r = 0; r < 6; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < 4; ++c) mean += px[r * 4 + c] / 4.0;
    for (int c = 0; c < 4; ++c) var += (px[r * 4 + c] - mean) * (px[r * 4 + c] - mean) / 4.0;
    for (int c = 0; c < 4; ++c) {
      double inv = gamma.data<float>()[c] / std::sqrt(var + 1e-3);
      expected.push_back(static_cast<float>(px[r * 4 + c] * inv + (beta.data<float>()[c] - mean * inv)));
    }
  }
  K::LayerState st;
  auto y = ln->forward(rep.ctx, {x}, st);
  check_forward_against(y.at(0), expected);
  CHECK(ln->get_config().dump().find("\"epsilon\"") != std::string::npos);
}

TEST_CASE("gradients: Dense on a rank-4 input with softmax contracts the last axis only") {
  Replica rep;
  auto in = K::Input({2, 3, 4});
  K::LayerRef dense = K::layers::Dense(3, {.activation = "softmax", .seed = 6});
  CHECK(dense(in).shape() == K::Shape{2, 3, 3});
  K::Tensor x = grad_random_tensor({2, 2, 3, 4}, 40);
  require_ok(check_layer(rep, dense, {x}, false));
  // Every (batch, i, j) position is its own row of one matmul: equal to Dense on the flat rows.
  K::LayerState st;
  K::Tensor y = dense->forward(rep.ctx, {x}, st).at(0).clone();
  K::Tensor y_flat = dense->forward(rep.ctx, {x.reshape({-1, 4})}, st).at(0);
  CHECK(y.to_vector() == y_flat.to_vector());
  // The kernel is fixed to 4 input features: another last axis is refused, naming the layer.
  CHECK_THROWS_AS(dense(K::Input({2, 3, 5})), K::ShapeError);
}

TEST_CASE("gradients: Softmax over the last, a middle and a negative axis") {
  Replica rep;
  for (int axis : {-1, 1, 2, -2}) {
    CAPTURE(axis);
    auto in = K::Input({3, 4});
    K::LayerRef softmax = K::layers::Softmax({.axis = axis});
    CHECK(softmax(in).shape() == K::Shape{3, 4});
    require_ok(check_layer(rep, softmax, {grad_random_tensor({2, 3, 4}, 41)}, false));
  }
  CHECK_THROWS_AS(K::layers::Softmax({.axis = 3})(K::Input({3, 4})), K::ValueError);
  CHECK(K::layers::Softmax({.axis = 1})->get_config().dump().find("\"axis\":1") != std::string::npos);
}

TEST_CASE("Softmax forward: each fibre along the axis sums to 1 and matches exp(x)/sum") {
  Replica rep(false);
  auto in = K::Input({3, 4});
  K::LayerRef softmax = K::layers::Softmax({.axis = 1});
  softmax(in);
  K::Tensor x = grad_random_tensor({2, 3, 4}, 42);
  K::LayerState st;
  auto y = softmax->forward(rep.ctx, {x}, st).at(0).to_vector();
  auto xv = x.to_vector();
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j) {
      double total = 0;
      for (int i = 0; i < 3; ++i) total += std::exp(double(xv[static_cast<std::size_t>(b * 12 + i * 4 + j)]));
      for (int i = 0; i < 3; ++i) {
        const auto k = static_cast<std::size_t>(b * 12 + i * 4 + j);
        CHECK(y[k] == doctest::Approx(std::exp(double(xv[k])) / total).epsilon(1e-5));
      }
    }
}

TEST_CASE("gradients: Embedding table rows (repeated ids sum), float ids of rank 2") {
  Replica rep;
  auto in = K::Input({3});
  K::LayerRef emb = K::layers::Embedding(5, 4, {.seed = 7});
  CHECK(emb(in).shape() == K::Shape{3, 4});
  REQUIRE(emb->trainable_variables().size() == 1);
  CHECK(emb->trainable_variables()[0]->name().find("embeddings") != std::string::npos);
  // Float ids holding integers (what a float Dataset gives), with repeats across the batch.
  K::Tensor ids = K::Tensor::from_vector({2, 3}, std::vector<float>{1, 4, 1, 0, 4, 3});
  require_ok(check_layer(rep, emb, {ids}, false));
}

TEST_CASE("Embedding: int32 ids of rank 3, Keras' uniform init, mask_zero, bad ids name the layer") {
  Replica rep(false);
  auto in = K::Input({2, 2}, K::DType::int32);
  K::LayerRef emb = K::layers::Embedding(7, 3, {.mask_zero = true, .name = "tokens"});
  CHECK(emb(in).shape() == K::Shape{2, 2, 3});
  auto table = emb->trainable_variables()[0]->value(0).to_vector();
  for (float v : table) CHECK((v >= -0.05f && v <= 0.05f));
  K::Tensor ids = K::Tensor::from_vector({1, 2, 2}, std::vector<std::int32_t>{0, 6, 2, 0});
  K::LayerState st;
  auto y = emb->forward(rep.ctx, {ids}, st).at(0);
  REQUIRE(y.shape() == K::Shape{1, 2, 2, 3});
  const std::int32_t expect_ids[4] = {0, 6, 2, 0};
  for (int p = 0; p < 4; ++p)
    for (int c = 0; c < 3; ++c)
      CHECK(y.data<float>()[p * 3 + c] == table[static_cast<std::size_t>(expect_ids[p] * 3 + c)]);
  auto* layer = dynamic_cast<K::layers::EmbeddingLayer*>(emb.get().get());
  REQUIRE(layer != nullptr);
  K::Tensor mask = layer->compute_mask(rep.ctx, ids);
  REQUIRE(mask.dtype() == K::DType::uint8);
  CHECK(std::vector<std::uint8_t>(mask.data<std::uint8_t>(), mask.data<std::uint8_t>() + 4) ==
        std::vector<std::uint8_t>{0, 1, 1, 0});
  REQUIRE(st.saved.size() == 2);
  CHECK(st.saved[1].data<std::uint8_t>()[1] == 1);
  try {
    emb->forward(rep.ctx, {K::Tensor::from_vector({1, 2, 2}, std::vector<std::int32_t>{1, 7, 0, 0})}, st);
    FAIL("no error for id 7 with input_dim 7");
  } catch (const K::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("tokens") != std::string::npos);
    CHECK(msg.find("index 7") != std::string::npos);
    CHECK(msg.find("input_dim 7") != std::string::npos);
  }
  CHECK(emb->get_config().dump().find("\"mask_zero\":true") != std::string::npos);
  CHECK_THROWS_AS(K::layers::Embedding(0, 3), K::ValueError);
}

TEST_CASE("Embedding in a model: int32 ids train with SGD and only the rows that were looked up move") {
  K::set_random_seed(3);
  auto in = K::Input({4}, K::DType::int32);
  auto x = K::layers::Embedding(10, 6)(in);
  x = K::layers::LayerNormalization()(x);
  x = K::layers::Dense(2)(x);  // rank-3 Dense: (batch, 4, 6) -> (batch, 4, 2)
  K::Model model(in, x);
  model.compile({.optimizer = "sgd", .loss = "mse"});
  const auto before = model.get_weights().at(0).to_vector();
  K::Tensor ids = K::Tensor::from_vector({2, 4}, std::vector<std::int32_t>{1, 3, 3, 0, 7, 1, 0, 0});
  K::Tensor target = K::Tensor::from_vector({2, 4, 2}, std::vector<float>(16, 1.f));
  model.train_on_batch(ids, target);
  const auto after = model.get_weights().at(0).to_vector();
  for (int row = 0; row < 10; ++row) {
    const bool used = row == 0 || row == 1 || row == 3 || row == 7;
    bool moved = false;
    for (int c = 0; c < 6; ++c) moved |= after[std::size_t(row * 6 + c)] != before[std::size_t(row * 6 + c)];
    CAPTURE(row);
    CHECK(moved == used);
  }
}

TEST_CASE("LayerNormalization: one layer on inputs of two ranks; another feature count is refused") {
  K::LayerRef ln = K::layers::LayerNormalization();
  CHECK(ln(K::Input({6})).shape() == K::Shape{6});
  CHECK(ln(K::Input({3, 6})).shape() == K::Shape{3, 6});
  CHECK_THROWS_AS(ln(K::Input({5})), K::ShapeError);
  CHECK_THROWS_AS(K::layers::LayerNormalization({.epsilon = 0.f}), K::ValueError);
}

TEST_CASE("gradients: Subtract, Multiply and Average, and their forward values") {
  Replica rep;
  auto xa = grad_random_tensor({2, 3, 4}, 130), xb = grad_random_tensor({2, 3, 4}, 131),
       xc = grad_random_tensor({2, 3, 4}, 132);
  struct Case {
    const char* name;
    K::LayerRef layer;
    std::vector<K::Tensor> xs;
    std::function<float(std::size_t)> expect;  // element i of the output
  };
  auto a = xa.to_vector(), b = xb.to_vector(), c = xc.to_vector();
  std::vector<Case> cases{
      {"Subtract", K::layers::Subtract(), {xa, xb}, [&](std::size_t i) { return a[i] - b[i]; }},
      {"Multiply", K::layers::Multiply(), {xa, xb, xc}, [&](std::size_t i) { return a[i] * b[i] * c[i]; }},
      {"Average", K::layers::Average(), {xa, xb, xc}, [&](std::size_t i) { return (a[i] + b[i] + c[i]) / 3.f; }},
  };
  for (auto& cs : cases) {
    CAPTURE(cs.name);
    std::vector<K::KerasTensor> ins;
    for (std::size_t k = 0; k < cs.xs.size(); ++k) ins.push_back(K::Input({3, 4}));
    CHECK(cs.layer(ins).shape() == K::Shape{3, 4});
    CHECK(cs.layer->class_name() == std::string(cs.name));
    require_ok(check_layer(rep, cs.layer, cs.xs, false));
    K::LayerState st;
    auto y = cs.layer->forward(rep.ctx, cs.xs, st).at(0).to_vector();
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(cs.expect(i)).epsilon(1e-6));
  }
  // Subtract takes exactly two inputs; every merge needs equal shapes.
  CHECK_THROWS_WITH_AS(K::layers::Subtract()({K::Input({2}), K::Input({2}), K::Input({2})}),
                       doctest::Contains("exactly 2 inputs"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Multiply()({K::Input({2}), K::Input({3})}), doctest::Contains("equal shapes"),
                       K::ShapeError);
}

TEST_CASE("gradients: GlobalMaxPooling2D, and its forward is each channel's maximum") {
  Replica rep;
  auto in = K::Input({3, 4, 5});
  K::LayerRef gmp = K::layers::GlobalMaxPooling2D();
  CHECK(gmp(in).shape() == K::Shape{5});
  CHECK(gmp->class_name() == "GlobalMaxPooling2D");
  // Distinct values 0.03 apart (shuffled): a finite-difference step never changes which one is the
  // maximum, so the check sees the derivative and not the switch between two near-equal values.
  std::vector<float> values(120);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = -1.8f + 0.03f * static_cast<float>(i);
  std::shuffle(values.begin(), values.end(), std::mt19937(75));
  K::Tensor x = K::Tensor::from_vector({2, 3, 4, 5}, values);
  require_ok(check_layer(rep, gmp, {x}, false));
  K::LayerState st;
  auto y = gmp->forward(rep.ctx, {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{2, 5});
  auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < 5; ++c) {
      float m = -1e30f;
      for (std::int64_t p = 0; p < 12; ++p) m = std::max(m, xv[static_cast<std::size_t>((n * 12 + p) * 5 + c)]);
      CHECK(yv[static_cast<std::size_t>(n * 5 + c)] == m);
    }
}

TEST_CASE("gradients: ZeroPadding2D and UpSampling2D, and their forward layouts") {
  Replica rep;
  K::Tensor x = grad_random_tensor({2, 3, 4, 2}, 140);
  const auto xv = x.to_vector();
  auto at = [](const std::vector<float>& v, const K::Shape& s, std::int64_t n, std::int64_t h, std::int64_t w,
               std::int64_t c) { return v[static_cast<std::size_t>(((n * s[1] + h) * s[2] + w) * s[3] + c)]; };
  {
    K::LayerRef pad = K::layers::ZeroPadding2D({1, 2, 0, 3});  // top, bottom, left, right
    CHECK(pad(K::Input({3, 4, 2})).shape() == K::Shape{6, 7, 2});
    require_ok(check_layer(rep, pad, {x}, false));
    K::LayerState st;
    K::Tensor y = pad->forward(rep.ctx, {x}, st).at(0);
    REQUIRE(y.shape() == K::Shape{2, 6, 7, 2});
    auto yv = y.to_vector();
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t h = 0; h < 6; ++h)
        for (std::int64_t w = 0; w < 7; ++w)
          for (std::int64_t c = 0; c < 2; ++c) {
            bool inside = h >= 1 && h < 4 && w < 4;
            CHECK(at(yv, y.shape(), n, h, w, c) == (inside ? at(xv, x.shape(), n, h - 1, w, c) : 0.f));
          }
  }
  {
    K::LayerRef up = K::layers::UpSampling2D({2, 3});
    CHECK(up(K::Input({3, 4, 2})).shape() == K::Shape{6, 12, 2});
    require_ok(check_layer(rep, up, {x}, false));
    K::LayerState st;
    K::Tensor y = up->forward(rep.ctx, {x}, st).at(0);
    REQUIRE(y.shape() == K::Shape{2, 6, 12, 2});
    auto yv = y.to_vector();
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t h = 0; h < 6; ++h)
        for (std::int64_t w = 0; w < 12; ++w)
          for (std::int64_t c = 0; c < 2; ++c)
            CHECK(at(yv, y.shape(), n, h, w, c) == at(xv, x.shape(), n, h / 2, w / 3, c));
  }
  CHECK_THROWS_WITH_AS(K::layers::UpSampling2D(2, {.interpolation = "area"}), doctest::Contains("not supported"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::ZeroPadding2D(-1), doctest::Contains("padding must be >= 0"), K::ValueError);
}
