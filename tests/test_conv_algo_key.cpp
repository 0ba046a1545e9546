// The CUDA backend's convolution-algorithm cache key (src/backend/cuda/conv_algo_key.hpp): host-only,
// so it is tested in every build. Keys differing in any one field must be different keys with
// (for these values) different hashes and descriptions; equal keys hash alike.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/cuda/conv_algo_key.hpp"

namespace kc = kerascpp::cuda;

namespace {

kc::ConvAlgoKey base_key() {
  kc::ConvAlgoKey k;
  k.direction = kc::ConvDirection::forward;
  k.n = 8;
  k.h = 32;
  k.w = 30;
  k.c = 3;
  k.k = 16;
  k.kernel_h = 3;
  k.kernel_w = 5;
  k.stride_h = 1;
  k.stride_w = 2;
  k.pad_top = 1;
  k.pad_left = 2;
  k.pad_bottom = 3;
  k.pad_right = 4;
  return k;
}

struct Variant {
  const char* field;
  std::function<void(kc::ConvAlgoKey&)> change;
};

std::vector<Variant> one_field_variants() {
  return {
      {"direction(backward_data)", [](kc::ConvAlgoKey& k) { k.direction = kc::ConvDirection::backward_data; }},
      {"direction(backward_filter)", [](kc::ConvAlgoKey& k) { k.direction = kc::ConvDirection::backward_filter; }},
      {"n", [](kc::ConvAlgoKey& k) { k.n += 1; }},
      {"h", [](kc::ConvAlgoKey& k) { k.h += 1; }},
      {"w", [](kc::ConvAlgoKey& k) { k.w += 1; }},
      {"c", [](kc::ConvAlgoKey& k) { k.c += 1; }},
      {"k", [](kc::ConvAlgoKey& k) { k.k += 1; }},
      {"kernel_h", [](kc::ConvAlgoKey& k) { k.kernel_h += 1; }},
      {"kernel_w", [](kc::ConvAlgoKey& k) { k.kernel_w += 1; }},
      {"stride_h", [](kc::ConvAlgoKey& k) { k.stride_h += 1; }},
      {"stride_w", [](kc::ConvAlgoKey& k) { k.stride_w += 1; }},
      {"pad_top", [](kc::ConvAlgoKey& k) { k.pad_top += 1; }},
      {"pad_left", [](kc::ConvAlgoKey& k) { k.pad_left += 1; }},
      {"pad_bottom", [](kc::ConvAlgoKey& k) { k.pad_bottom += 1; }},
      {"pad_right", [](kc::ConvAlgoKey& k) { k.pad_right += 1; }},
      {"groups", [](kc::ConvAlgoKey& k) { k.groups += 2; }},
      {"dtype(float16)", [](kc::ConvAlgoKey& k) { k.dtype = kerascpp::DType::float16; }},
      {"dtype(bfloat16)", [](kc::ConvAlgoKey& k) { k.dtype = kerascpp::DType::bfloat16; }},
      {"nchw", [](kc::ConvAlgoKey& k) { k.nchw = true; }},
  };
}

}  // namespace

TEST_CASE("conv algo key: equal keys compare and hash equal") {
  const kc::ConvAlgoKey a = base_key(), b = base_key();
  CHECK(a == b);
  CHECK_FALSE(a != b);
  CHECK(kc::ConvAlgoKeyHash{}(a) == kc::ConvAlgoKeyHash{}(b));
  CHECK(a.describe() == b.describe());
  // A default key equals another default key.
  CHECK(kc::ConvAlgoKey{} == kc::ConvAlgoKey{});
}

TEST_CASE("conv algo key: a change in any one field makes a different key") {
  const kc::ConvAlgoKey base = base_key();
  const kc::ConvAlgoKeyHash hash;
  std::unordered_set<std::size_t> hashes{hash(base)};
  std::unordered_set<std::string> descriptions{base.describe()};
  for (const auto& v : one_field_variants()) {
    kc::ConvAlgoKey changed = base;
    v.change(changed);
    INFO("field " << v.field << ": " << changed.describe());
    CHECK(changed != base);
    CHECK_FALSE(changed == base);
    CHECK(hash(changed) != hash(base));
    CHECK(changed.describe() != base.describe());
    hashes.insert(hash(changed));
    descriptions.insert(changed.describe());
  }
  // All variants are distinct from each other too.
  CHECK(hashes.size() == one_field_variants().size() + 1);
  CHECK(descriptions.size() == one_field_variants().size() + 1);
}

TEST_CASE("conv algo key: swapped values in two fields are a different key") {
  kc::ConvAlgoKey a = base_key(), b = base_key();
  std::swap(b.h, b.w);
  CHECK(a != b);
  CHECK(kc::ConvAlgoKeyHash{}(a) != kc::ConvAlgoKeyHash{}(b));
  kc::ConvAlgoKey c = base_key();
  std::swap(c.pad_top, c.pad_bottom);
  CHECK(a != c);
  CHECK(kc::ConvAlgoKeyHash{}(a) != kc::ConvAlgoKeyHash{}(c));
}

TEST_CASE("conv algo key: describe names the direction and every dimension") {
  kc::ConvAlgoKey k = base_key();
  const std::string d = k.describe();
  CHECK(d == "forward x(8,32,30,3) filters 16 kernel 3x5 stride 1x2 pad t1 l2 b3 r4");
  k.direction = kc::ConvDirection::backward_data;
  CHECK(k.describe().rfind("backward_data ", 0) == 0);
  k.direction = kc::ConvDirection::backward_filter;
  CHECK(k.describe().rfind("backward_filter ", 0) == 0);
  CHECK(std::string(kc::conv_direction_name(kc::ConvDirection::forward)) == "forward");
  // A 16-bit problem names its data type last; float32 says nothing.
  k.direction = kc::ConvDirection::forward;
  k.dtype = kerascpp::DType::float16;
  CHECK(k.describe() == "forward x(8,32,30,3) filters 16 kernel 3x5 stride 1x2 pad t1 l2 b3 r4 float16");
  k.dtype = kerascpp::DType::bfloat16;
  CHECK(k.describe() == "forward x(8,32,30,3) filters 16 kernel 3x5 stride 1x2 pad t1 l2 b3 r4 bfloat16");
}

TEST_CASE("conv algo key: works as an unordered_map key") {
  std::unordered_map<kc::ConvAlgoKey, int, kc::ConvAlgoKeyHash> cache;
  const kc::ConvAlgoKey base = base_key();
  cache[base] = -1;
  int i = 0;
  for (const auto& v : one_field_variants()) {
    kc::ConvAlgoKey changed = base;
    v.change(changed);
    cache[changed] = i++;
  }
  CHECK(cache.size() == one_field_variants().size() + 1);
  CHECK(cache.at(base_key()) == -1);
  kc::ConvAlgoKey again = base_key();
  again.stride_w += 1;
  CHECK(cache.at(again) == 10);  // the stride_w variant is the 11th in the list
}
