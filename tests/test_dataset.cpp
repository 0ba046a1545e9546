// Dataset pipeline: content and order of every op, cardinality, shuffle determinism,
// prefetch threading, and the errors bad input must raise.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "kerascpp/core/random.hpp"
#include "kerascpp/data/dataset.hpp"

namespace K = kerascpp;

namespace {

// x: rows [i*10, i*10+1, i*10+2] (float), y: i (int32), for i in [0, n).
K::Dataset numbered(std::int64_t n) {
  std::vector<float> xs;
  std::vector<std::int32_t> ys;
  for (std::int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) xs.push_back(static_cast<float>(i * 10 + j));
    ys.push_back(static_cast<std::int32_t>(i));
  }
  return K::Dataset::from_tensor_slices(K::Tensor::from_vector({n, 3}, xs), K::Tensor::from_vector({n}, ys));
}

std::vector<K::Example> collect(const K::Dataset& ds, std::uint64_t epoch = 0, std::size_t limit = 100000) {
  std::vector<K::Example> out;
  auto it = ds.make_iterator(epoch);
  K::Example e;
  while (out.size() < limit && it->next(e)) out.push_back(e);
  return out;
}

// The label component (index 1) of unbatched elements, or of all batches flattened.
std::vector<int> labels(const K::Dataset& ds, std::uint64_t epoch = 0) {
  std::vector<int> out;
  for (const auto& e : collect(ds, epoch))
    for (float v : e.at(1).to_vector()) out.push_back(static_cast<int>(v));
  return out;
}

std::vector<int> iota(int n, int from = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

K::Example identity(const K::Example& e) { return e; }

}  // namespace

TEST_CASE("from_tensor_slices yields row views in order") {
  auto ds = numbered(4);
  CHECK(ds.cardinality() == 4);
  CHECK_FALSE(ds.is_batched());
  auto elements = collect(ds);
  REQUIRE(elements.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    REQUIRE(elements[i].size() == 2);
    CHECK(elements[i][0].shape() == K::Shape{3});
    CHECK(elements[i][1].shape() == K::Shape{});
    CHECK(elements[i][1].dtype() == K::DType::int32);
    CHECK(elements[i][0].to_vector() == std::vector<float>{i * 10.0f, i * 10.0f + 1, i * 10.0f + 2});
    CHECK(elements[i][1].to_vector()[0] == static_cast<float>(i));
  }
  CHECK(elements[0][0].same_storage(elements[3][0]));  // views, not copies

  auto single = K::Dataset::from_tensor_slices(K::Tensor::from_vector({3}, std::vector<float>{7, 8, 9}));
  auto e = collect(single);
  REQUIRE(e.size() == 3);
  CHECK(e[2].size() == 1);
  CHECK(e[2][0].to_vector()[0] == 9.0f);
}

TEST_CASE("from_tensor_slices of zero rows is an empty dataset") {
  auto ds = K::Dataset::from_tensor_slices(K::Tensor({0, 5}), K::Tensor({0}, K::DType::int32));
  CHECK(ds.cardinality() == 0);
  CHECK(collect(ds).empty());
  CHECK(collect(ds.batch(4)).empty());
  CHECK(collect(ds.shuffle(10, 1).repeat()).empty());  // an empty pass ends an endless repeat
}

TEST_CASE("from_tensor_slices rejects mismatched rows and scalars") {
  CHECK_THROWS_AS(K::Dataset::from_tensor_slices(K::Tensor({5, 2}), K::Tensor({4}, K::DType::int32)), K::Error);
  try {
    K::Dataset::from_tensor_slices(K::Tensor({5, 2}), K::Tensor({4}, K::DType::int32));
  } catch (const K::Error& e) {
    CHECK(std::string(e.what()).find("(5, 2)") != std::string::npos);
    CHECK(std::string(e.what()).find("(4,)") != std::string::npos);
  }
  CHECK_THROWS_AS(K::Dataset::from_tensor_slices(K::Tensor(K::Shape{})), K::Error);
  CHECK_THROWS_AS(K::Dataset::from_tensor_slices(std::vector<K::Tensor>{}), K::Error);
}

TEST_CASE("a default-constructed Dataset throws instead of crashing") {
  K::Dataset ds;
  CHECK_FALSE(ds.defined());
  CHECK_THROWS_AS(ds.cardinality(), K::Error);
  CHECK_THROWS_AS(ds.make_iterator(), K::Error);
  CHECK_THROWS_AS(ds.batch(2), K::Error);
}

TEST_CASE("batch stacks elements, keeps a partial last batch unless drop_remainder") {
  auto ds = numbered(10);
  auto b = ds.batch(4);
  CHECK(b.is_batched());
  CHECK(b.cardinality() == 3);
  auto batches = collect(b);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0][0].shape() == K::Shape{4, 3});
  CHECK(batches[0][1].shape() == K::Shape{4});
  CHECK(batches[0][1].dtype() == K::DType::int32);
  CHECK(batches[2][0].shape() == K::Shape{2, 3});
  CHECK(batches[2][0].to_vector() == std::vector<float>{80, 81, 82, 90, 91, 92});
  CHECK(batches[1][1].to_vector() == std::vector<float>{4, 5, 6, 7});
  CHECK(labels(b) == iota(10));

  auto dropped = ds.batch(4, true);
  CHECK(dropped.cardinality() == 2);
  auto d = collect(dropped);
  REQUIRE(d.size() == 2);
  CHECK(d[1][1].to_vector() == std::vector<float>{4, 5, 6, 7});

  CHECK(ds.batch(10, true).cardinality() == 1);
  CHECK(ds.batch(11, true).cardinality() == 0);
  CHECK(collect(ds.batch(11, true)).empty());
  CHECK(collect(ds.batch(11)).size() == 1);
  const std::int64_t huge = std::int64_t{1} << 60;  // legal: one partial batch, nothing reserved up front
  CHECK(ds.batch(huge).cardinality() == 1);
  CHECK(labels(ds.batch(huge)) == iota(10));
  CHECK(labels(ds.map(identity).batch(huge)) == iota(10));
}

TEST_CASE("batch of batches adds another axis") {
  auto bb = numbered(8).batch(2).batch(2);
  CHECK(bb.cardinality() == 2);
  auto out = collect(bb);
  REQUIRE(out.size() == 2);
  CHECK(out[0][0].shape() == K::Shape{2, 2, 3});
  CHECK(out[1][1].to_vector() == std::vector<float>{4, 5, 6, 7});
}

TEST_CASE("batch: the gather fast path and the stacking path agree") {
  // map() hides the row source, so the second pipeline takes the general path.
  auto ds = numbered(37);
  for (bool drop : {false, true}) {
    auto fast = collect(ds.shuffle(16, 3).batch(5, drop), 2);
    auto slow = collect(ds.shuffle(16, 3).map(identity).batch(5, drop), 2);
    REQUIRE(fast.size() == slow.size());
    for (std::size_t i = 0; i < fast.size(); ++i) {
      CHECK(fast[i][0].shape() == slow[i][0].shape());
      CHECK(fast[i][0].to_vector() == slow[i][0].to_vector());
      CHECK(fast[i][1].to_vector() == slow[i][1].to_vector());
    }
  }
}

TEST_CASE("batch rejects batch_size < 1 and ragged elements") {
  auto ds = numbered(6);
  CHECK_THROWS_AS(ds.batch(0), K::Error);
  CHECK_THROWS_AS(ds.batch(-3), K::Error);

  auto ragged = ds.map([](const K::Example& e) {
    auto n = static_cast<std::int64_t>(e[1].to_vector()[0]) % 2 + 2;  // alternates shapes (2,) and (3,)
    return K::Example{K::Tensor::zeros({n}), e[1]};
  });
  auto it = ragged.batch(4).make_iterator();
  K::Example out;
  try {
    it->next(out);
    FAIL("a ragged batch must throw");
  } catch (const K::Error& e) {
    std::string msg = e.what();
    CHECK(msg.find("(2,)") != std::string::npos);
    CHECK(msg.find("(3,)") != std::string::npos);
  }
}

TEST_CASE("shuffle is a permutation, deterministic per (seed, epoch), different across epochs") {
  auto ds = numbered(100);
  auto shuffled = ds.shuffle(100, 42);
  CHECK(shuffled.cardinality() == 100);
  auto e0 = labels(shuffled, 0);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == iota(100));
  CHECK(e0 != iota(100));

  CHECK(labels(shuffled, 0) == e0);             // same iterator epoch, same order
  CHECK(labels(ds.shuffle(100, 42), 0) == e0);  // re-created pipeline, same order
  CHECK(labels(shuffled, 1) != e0);             // reshuffled each epoch
  CHECK(labels(shuffled, 1) == labels(shuffled, 1));
  CHECK(labels(ds.shuffle(100, 43), 0) != e0);  // other seed, other order

  auto fixed = ds.shuffle(100, 42, /*reshuffle_each_iteration=*/false);
  CHECK(labels(fixed, 0) == labels(fixed, 5));
  CHECK(labels(fixed, 0) != iota(100));

  // Shuffling batched data moves whole batches.
  auto whole = labels(ds.batch(10).shuffle(10, 1));
  for (std::size_t b = 0; b < 10; ++b)
    for (std::size_t i = 1; i < 10; ++i) CHECK(whole[b * 10 + i] == whole[b * 10] + static_cast<int>(i));
}

TEST_CASE("shuffle with a small buffer follows tf.data's buffer semantics") {
  auto ds = numbered(50);
  CHECK(labels(ds.shuffle(1, 7)) == iota(50));  // a buffer of one cannot reorder
  auto order = labels(ds.shuffle(5, 7));
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == iota(50));
  // The k-th output was among the first k + buffer_size inputs.
  for (std::size_t k = 0; k < order.size(); ++k) CHECK(order[k] < static_cast<int>(k) + 5);
  CHECK_THROWS_AS(ds.shuffle(0), K::Error);
}

TEST_CASE("unseeded shuffle draws its seed from set_random_seed's stream") {
  auto ds = numbered(64);
  K::set_random_seed(1234);
  auto a = labels(ds.shuffle(64));
  K::set_random_seed(1234);
  auto b = labels(ds.shuffle(64));
  CHECK(a == b);
  auto c = labels(ds.shuffle(64));  // the next seed from the stream
  CHECK(a != c);
}

TEST_CASE("repeat replays the input, reshuffling each pass") {
  auto ds = numbered(3);
  CHECK(ds.repeat(2).cardinality() == 6);
  CHECK(ds.repeat(0).cardinality() == 0);
  CHECK(ds.repeat().cardinality() == K::Dataset::kInfinite);
  auto twice = iota(3);
  twice.insert(twice.end(), {0, 1, 2});
  CHECK(labels(ds.repeat(2)) == twice);
  CHECK(labels(ds.repeat(0)).empty());
  CHECK(labels(ds.repeat().take(7)) == std::vector<int>{0, 1, 2, 0, 1, 2, 0});
  CHECK(ds.repeat().take(7).cardinality() == 7);
  CHECK(ds.repeat(1).shuffle(3, 5).cardinality() == 3);
  CHECK_THROWS_AS(ds.repeat(-2), K::Error);

  // Repeat of batches, and batches across repetitions.
  CHECK(numbered(5).batch(2).repeat(2).cardinality() == 6);
  CHECK(numbered(5).repeat(2).batch(4).cardinality() == 3);
  CHECK(labels(numbered(5).repeat(2).batch(4)) == std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4});

  auto passes = labels(numbered(20).shuffle(20, 9).repeat(3), 4);
  REQUIRE(passes.size() == 60);
  std::vector<int> p0(passes.begin(), passes.begin() + 20), p1(passes.begin() + 20, passes.begin() + 40);
  CHECK(p0 == labels(numbered(20).shuffle(20, 9), 4));  // repeat(…) starts with the caller's epoch
  CHECK(p0 != p1);
  std::sort(p1.begin(), p1.end());
  CHECK(p1 == iota(20));
}

TEST_CASE("take and skip") {
  auto ds = numbered(10);
  CHECK(labels(ds.take(3)) == iota(3));
  CHECK(ds.take(3).cardinality() == 3);
  CHECK(ds.take(30).cardinality() == 10);
  CHECK(ds.take(-1).cardinality() == 10);
  CHECK(labels(ds.take(-1)) == iota(10));
  CHECK(labels(ds.take(0)).empty());
  CHECK(labels(ds.skip(7)) == iota(3, 7));
  CHECK(ds.skip(7).cardinality() == 3);
  CHECK(ds.skip(70).cardinality() == 0);
  CHECK(ds.skip(-1).cardinality() == 0);
  CHECK(labels(ds.skip(-1)).empty());
  CHECK(labels(ds.skip(2).take(3)) == iota(3, 2));
  CHECK(ds.repeat().skip(4).cardinality() == K::Dataset::kInfinite);
  CHECK(labels(ds.repeat().skip(4).take(8)) == std::vector<int>{4, 5, 6, 7, 8, 9, 0, 1});
  CHECK_THROWS_AS(ds.repeat().skip(-1), K::Error);  // would never return
  CHECK_THROWS_AS(ds.take(-2), K::Error);
  CHECK_THROWS_AS(ds.skip(-2), K::Error);
  // take/skip then batch keep the batch fast path's order.
  CHECK(labels(ds.skip(1).take(7).batch(3)) == iota(7, 1));
}

TEST_CASE("shard splits elements round-robin") {
  auto ds = numbered(10);
  CHECK(labels(ds.shard(3, 0)) == std::vector<int>{0, 3, 6, 9});
  CHECK(labels(ds.shard(3, 1)) == std::vector<int>{1, 4, 7});
  CHECK(labels(ds.shard(3, 2)) == std::vector<int>{2, 5, 8});
  CHECK(ds.shard(3, 0).cardinality() == 4);
  CHECK(ds.shard(3, 1).cardinality() == 3);
  CHECK(ds.shard(3, 2).cardinality() == 3);
  CHECK(ds.shard(1, 0).cardinality() == 10);
  CHECK(ds.repeat().shard(2, 1).cardinality() == K::Dataset::kInfinite);
  CHECK(labels(ds.shard(2, 1).batch(2)) == std::vector<int>{1, 3, 5, 7, 9});
  CHECK_THROWS_AS(ds.shard(0, 0), K::Error);
  CHECK_THROWS_AS(ds.shard(3, 3), K::Error);
  CHECK_THROWS_AS(ds.shard(3, -1), K::Error);
}

TEST_CASE("map transforms every element and keeps cardinality") {
  auto ds = numbered(5).map([](const K::Example& e) {
    K::Tensor doubled = e[0].clone();
    auto* p = doubled.data<float>();
    for (int i = 0; i < 3; ++i) p[i] *= 2;
    return K::Example{doubled, e[1]};
  });
  CHECK(ds.cardinality() == 5);
  CHECK_FALSE(ds.is_batched());
  auto out = collect(ds);
  REQUIRE(out.size() == 5);
  CHECK(out[4][0].to_vector() == std::vector<float>{80, 82, 84});
  CHECK(labels(ds) == iota(5));

  auto batched_then_mapped = numbered(5).batch(2).map(identity);
  CHECK(batched_then_mapped.is_batched());
  CHECK(batched_then_mapped.cardinality() == 3);
  CHECK_THROWS_AS(numbered(5).map(nullptr), K::Error);
}

TEST_CASE("prefetch yields the same elements in the same order") {
  auto ds = numbered(50).shuffle(50, 3).batch(7);
  auto expected = collect(ds, 1);
  for (std::int64_t buffer : {std::int64_t{1}, std::int64_t{4}, K::Dataset::kAutotune, std::int64_t{0}}) {
    auto pre = ds.prefetch(buffer);
    CHECK(pre.cardinality() == 8);
    CHECK(pre.is_batched());
    auto got = collect(pre, 1);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i][1].to_vector() == expected[i][1].to_vector());
  }
  CHECK_THROWS_AS(ds.prefetch(-2), K::Error);
  // Nested prefetch, and many short-lived iterators.
  for (int i = 0; i < 20; ++i) CHECK(labels(numbered(9).prefetch(2).map(identity).prefetch(1)) == iota(9));
}

TEST_CASE("destroying a prefetch iterator mid-epoch stops its thread") {
  std::atomic<int> produced{0};
  auto endless = numbered(4).repeat().map([&](const K::Example& e) {
    ++produced;
    return e;
  });
  for (int round = 0; round < 10; ++round) {
    auto it = endless.prefetch(3).make_iterator();
    K::Example e;
    for (int i = 0; i < 5; ++i) REQUIRE(it->next(e));
    it.reset();  // must return promptly although the input never ends
  }
  int after = produced.load();
  CHECK(after >= 50);
  CHECK(produced.load() == after);  // no producer keeps running
  // Destroyed before the first next().
  { auto it = endless.prefetch(2).make_iterator(); }
}

TEST_CASE("prefetch rethrows a producer exception after the elements before it") {
  auto failing = numbered(10).map([](const K::Example& e) {
    if (e[1].to_vector()[0] == 5.0f) throw K::Error("bad element 5");
    return e;
  });
  auto it = failing.prefetch(4).make_iterator();
  K::Example e;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(it->next(e));
    CHECK(e[1].to_vector()[0] == static_cast<float>(i));
  }
  CHECK_THROWS_WITH_AS(it->next(e), "bad element 5", K::Error);
  CHECK_FALSE(it->next(e));
}

TEST_CASE("iterators outlive the Dataset they came from") {
  std::unique_ptr<K::Dataset::Iterator> it;
  {
    auto ds = numbered(6).shuffle(6, 1).map(identity).repeat(2).batch(4).prefetch(2);
    it = ds.make_iterator();
  }
  K::Example e;
  int total = 0;
  while (it->next(e)) total += static_cast<int>(e[1].dim(0));
  CHECK(total == 12);
}

TEST_CASE("synthetic repeats one constant example") {
  auto ds = K::Dataset::synthetic({4, 4, 1}, {}, 10);
  CHECK(ds.cardinality() == 10);
  auto elements = collect(ds);
  REQUIRE(elements.size() == 10);
  CHECK(elements[0][0].shape() == K::Shape{4, 4, 1});
  CHECK(elements[0][0].dtype() == K::DType::float32);
  CHECK(elements[0][1].shape() == K::Shape{});
  CHECK(elements[0][1].dtype() == K::DType::int32);
  CHECK(elements[0][1].to_vector()[0] == 0.0f);
  auto x0 = elements[0][0].to_vector();
  CHECK(elements[9][0].to_vector() == x0);
  CHECK(std::set<float>(x0.begin(), x0.end()).size() > 1);  // a pattern, not a constant
  CHECK(K::Dataset::synthetic({4, 4, 1}, {}, 3).make_iterator() != nullptr);
  CHECK(collect(K::Dataset::synthetic({4, 4, 1}, {}, 3))[0][0].to_vector() == x0);  // fixed seed

  auto batches = collect(ds.batch(4));
  REQUIRE(batches.size() == 3);
  CHECK(batches[0][0].shape() == K::Shape{4, 4, 4, 1});
  CHECK(batches[2][1].shape() == K::Shape{2});
  auto endless = K::Dataset::synthetic({2}, {1}, K::Dataset::kInfinite);
  CHECK(endless.cardinality() == K::Dataset::kInfinite);
  CHECK(endless.batch(3).cardinality() == K::Dataset::kInfinite);
  CHECK(collect(endless.batch(3), 0, 5).size() == 5);
  CHECK(collect(endless.batch(3), 0, 1)[0][1].shape() == K::Shape{3, 1});
  CHECK_THROWS_AS(K::Dataset::synthetic({2}, {}, -5), K::Error);
  CHECK_THROWS_AS(K::Dataset::synthetic({-1, 2}, {}, 5), K::Error);
}

TEST_CASE("from_tensor_slices_scaled: uint8 components come out as float32 value / divisor, eagerly equal") {
  // 7 rows of 2x3 bytes covering 0..255, labels as int32 (divisor 0: untouched).
  const std::int64_t n = 7;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n * 6));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>((i * 37 + 3) % 256);
  bytes[0] = 0;
  bytes[1] = 255;
  std::vector<std::int32_t> labels{4, 1, 0, 6, 2, 5, 3};
  const K::Tensor images = K::Tensor::from_vector({n, 2, 3}, bytes), y = K::Tensor::from_vector({n}, labels);
  // What a loader converting eagerly would hold.
  std::vector<float> eager(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) eager[i] = static_cast<float>(bytes[i]) / 255.0f;
  const K::Dataset eager_ds = K::Dataset::from_tensor_slices(K::Tensor::from_vector({n, 2, 3}, eager), y);
  const K::Dataset scaled = K::Dataset::from_tensor_slices_scaled({images, y}, {255.f, 0.f});
  CHECK(scaled.cardinality() == n);

  // Element by element, batched in order (the gather path) and shuffled (the same gather over
  // picked rows), and batched after a map (the stacking path): every value bit-equal.
  auto same = [](const std::vector<K::Example>& a, const std::vector<K::Example>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t e = 0; e < a.size(); ++e) {
      CHECK(a[e][0].dtype() == K::DType::float32);
      CHECK(a[e][0].shape() == b[e][0].shape());
      CHECK(a[e][0].to_vector() == b[e][0].to_vector());
      CHECK(a[e][1].dtype() == K::DType::int32);
      CHECK(a[e][1].to_vector() == b[e][1].to_vector());
    }
  };
  same(collect(scaled), collect(eager_ds));
  same(collect(scaled.batch(3)), collect(eager_ds.batch(3)));
  same(collect(scaled.shuffle(n, 11).batch(4)), collect(eager_ds.shuffle(n, 11).batch(4)));
  same(collect(scaled.map(identity).batch(2)), collect(eager_ds.map(identity).batch(2)));
  const auto first = collect(scaled).front()[0].to_vector();
  CHECK(first[0] == 0.f);
  CHECK(first[1] == 1.f);
  // The source stays bytes: the Dataset shares the caller's uint8 tensor.
  CHECK(images.dtype() == K::DType::uint8);
}

TEST_CASE("from_tensor_slices_scaled rejects a divisor on a non-uint8 tensor, a bad divisor or count") {
  const K::Tensor images = K::Tensor::from_vector({2, 2}, std::vector<std::uint8_t>{1, 2, 3, 4});
  const K::Tensor floats = K::Tensor::from_vector({2}, std::vector<float>{1.f, 2.f});
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const K::ValueError& e) { return std::string(e.what()); }
    return std::string("no ValueError");
  };
  CHECK(message([&] {
          K::Dataset::from_tensor_slices_scaled({images, floats}, {255.f, 2.f});
        }).find("tensor 1 holds float32, but only uint8 tensors are scaled") != std::string::npos);
  CHECK(message([&] {
          K::Dataset::from_tensor_slices_scaled({images, floats}, {255.f});
        }).find("2 tensors but 1 divisors") != std::string::npos);
  CHECK(message([&] { K::Dataset::from_tensor_slices_scaled({images}, {-1.f}); }).find("divisor 0 is -1") !=
        std::string::npos);
  CHECK(message([&] {
          K::Dataset::from_tensor_slices_scaled({images}, {std::numeric_limits<float>::infinity()});
        }).find("finite") != std::string::npos);
  CHECK_THROWS_AS(K::Dataset::from_tensor_slices_scaled({images, K::Tensor()}, {255.f, 0.f}), K::StateError);
}
