// Dataset transformations beyond the basics: from_generator, parallel map, filter, unbatch, zip,
// concatenate, padded_batch, bucket_by_sequence_length, interleave, cache, ignore_errors, options
// and the AUTOTUNE controllers. Runs threads (the data TaskPool): on the TSan list.
#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/task_pool.hpp"
#include "data/autotune.hpp"
#include "kerascpp/data/dataset.hpp"
#include "scoped_test_state.hpp"

namespace K = kerascpp;

namespace {

// Elements {x = float32 scalar i} for i in [0, n).
K::Dataset range(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return K::Dataset::from_tensor_slices(K::Tensor::from_vector({n}, v));
}

// Every element's components flattened, element after element.
std::vector<float> values(const K::Dataset& ds, std::uint64_t epoch = 0) {
  std::vector<float> out;
  auto it = ds.make_iterator(epoch);
  K::Example e;
  while (it->next(e))
    for (const auto& t : e)
      for (float v : t.to_vector()) out.push_back(v);
  return out;
}

std::vector<K::Example> elements(const K::Dataset& ds) {
  std::vector<K::Example> out;
  auto it = ds.make_iterator();
  K::Example e;
  while (it->next(e)) out.push_back(e);
  return out;
}

std::vector<float> iota_f(int n, float from = 0.f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// A generator of n elements (int32 scalar i, float32 (i+1,) of i) counting its starts.
K::Dataset counted_generator(int n, std::shared_ptr<std::atomic<int>> starts) {
  return K::Dataset::from_generator(
      [n, starts]() -> K::Dataset::Generator {
        ++*starts;
        return [n, i = 0]() mutable -> std::optional<K::Example> {
          if (i == n) return std::nullopt;
          const int k = i++;
          return K::Example{K::Tensor::from_vector({}, std::vector<std::int32_t>{k}),
                            K::Tensor::full({k + 1}, static_cast<float>(k))};
        };
      },
      {{{}, K::DType::int32}, {{-1}, K::DType::float32}});
}

// Sleeps a pseudo-random 0-4 × 200 µs picked from the element's value, so parallel calls finish
// out of order.
K::Example jittered_square(const K::Example& e) {
  const float v = e[0].to_vector()[0];
  std::this_thread::sleep_for(std::chrono::microseconds(200 * ((static_cast<int>(v) * 7) % 5)));
  return {K::Tensor::from_vector({}, {v * v})};
}

}  // namespace

// ---- from_generator ----

TEST_CASE("from_generator: elements in order, a fresh generator per pass, unknown cardinality") {
  auto starts = std::make_shared<std::atomic<int>>(0);
  auto ds = counted_generator(4, starts);
  CHECK(ds.cardinality() == K::Dataset::kUnknown);
  auto all = elements(ds);
  REQUIRE(all.size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK(all[static_cast<std::size_t>(i)][0].to_vector() == std::vector<float>{static_cast<float>(i)});
    CHECK(all[static_cast<std::size_t>(i)][1].shape() == K::Shape{i + 1});
  }
  CHECK(values(ds, 1) == values(ds, 0));
  CHECK(*starts == 3);
}

TEST_CASE("from_generator: an element that breaks the output_signature names the element and component") {
  auto make = [](K::Tensor second) {
    return K::Dataset::from_generator(
        [second]() -> K::Dataset::Generator {
          return [second, i = 0]() mutable -> std::optional<K::Example> {
            if (i == 3) return std::nullopt;
            ++i;
            return K::Example{K::Tensor::full({2}, 1.f), i == 3 ? second : K::Tensor::full({3}, 1.f)};
          };
        },
        {{{2}, K::DType::float32}, {{3}, K::DType::float32}});
  };
  auto shape_bad = make(K::Tensor::full({4}, 1.f)).make_iterator();
  K::Example e;
  CHECK(shape_bad->next(e));
  CHECK(shape_bad->next(e));
  CHECK_THROWS_WITH_AS(shape_bad->next(e), doctest::Contains("element 2, component 1 has shape (4,)"), K::ShapeError);
  auto dtype_bad = make(K::Tensor::from_vector({3}, std::vector<std::int32_t>{1, 2, 3})).make_iterator();
  CHECK(dtype_bad->next(e));
  CHECK(dtype_bad->next(e));
  CHECK_THROWS_WITH_AS(dtype_bad->next(e), doctest::Contains("element 2, component 1 is (3,) int32"), K::ValueError);
  CHECK_THROWS_AS(K::Dataset::from_generator(nullptr, {{{}, K::DType::float32}}), K::ValueError);
  CHECK_THROWS_AS(K::Dataset::from_generator([] { return K::Dataset::Generator{}; }, {}), K::ValueError);
}

// ---- map ----

TEST_CASE("map: parallel and deterministic gives the sequential order, non-deterministic the same elements") {
  const auto ds = range(40);
  const auto sequential = values(ds.map(jittered_square));
  std::vector<float> squares;
  for (int i = 0; i < 40; ++i) squares.push_back(static_cast<float>(i * i));
  CHECK(sequential == squares);
  CHECK(values(ds.map(jittered_square, {.num_parallel_calls = 4})) == squares);
  CHECK(values(ds.map(jittered_square, {.num_parallel_calls = K::AUTOTUNE})) == squares);
  auto unordered = values(ds.map(jittered_square, {.num_parallel_calls = 4, .deterministic = false}));
  std::sort(unordered.begin(), unordered.end());
  CHECK(unordered == squares);
  CHECK(ds.map(jittered_square, {.num_parallel_calls = 4}).cardinality() == 40);
  CHECK_THROWS_AS(ds.map(jittered_square, {.num_parallel_calls = -2}), K::ValueError);
}

TEST_CASE("map: a parallel call's error comes out at its element, after the ones before it") {
  auto ds = range(10).map(
      [](const K::Example& e) {
        if (e[0].to_vector()[0] == 6.f) throw K::ValueError("element six is bad");
        return jittered_square(e);
      },
      {.num_parallel_calls = 3});
  auto it = ds.make_iterator();
  K::Example e;
  for (int i = 0; i < 6; ++i) {
    REQUIRE(it->next(e));
    CHECK(e[0].to_vector()[0] == static_cast<float>(i * i));
  }
  CHECK_THROWS_WITH_AS(it->next(e), "element six is bad", K::ValueError);
  REQUIRE(it->next(e));  // as a sequential map: the next call goes on with the next element
  CHECK(e[0].to_vector()[0] == 49.f);
}

TEST_CASE("map: Options.deterministic = false lets a finished element overtake a slow one") {
  // Element 0's call waits until the consumer has received another element; a non-deterministic
  // map hands out element 1 meanwhile. The wait is a TaskPool::BlockingRegion, so even a
  // one-thread pool (the TSan run) starts a second thread for element 1.
  auto received = std::make_shared<std::atomic<bool>>(false);
  auto ds = range(2)
                .map(
                    [received](const K::Example& e) {
                      if (e[0].to_vector()[0] == 0.f) {
                        K::detail::TaskPool::BlockingRegion blocking;
                        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                        while (!*received && std::chrono::steady_clock::now() < give_up)
                          std::this_thread::sleep_for(std::chrono::milliseconds(1));
                      }
                      return e;
                    },
                    {.num_parallel_calls = 2})
                .with_options({.deterministic = false});
  auto it = ds.make_iterator();
  K::Example first, second;
  REQUIRE(it->next(first));
  *received = true;
  REQUIRE(it->next(second));
  CHECK(first[0].to_vector()[0] == 1.f);
  CHECK(second[0].to_vector()[0] == 0.f);
}

TEST_CASE("autotune: parallelism grows while the consumer waits and shrinks when results pile up") {
  K::detail::ParallelismTuner t(K::AUTOTUNE, 3);
  CHECK(t.value() == 1);
  for (int i = 0; i < 4 * K::detail::ParallelismTuner::kWindow; ++i) t.record(true, 0);
  CHECK(t.value() == 3);  // capped at the pool's size
  for (int i = 0; i < 2 * K::detail::ParallelismTuner::kWindow; ++i) t.record(false, 2);
  CHECK(t.value() == 2);
  for (int i = 0; i < 2 * K::detail::ParallelismTuner::kWindow; ++i) t.record(false, 1);
  CHECK(t.value() == 2);  // one ready is not ahead enough to give a call up
  K::detail::ParallelismTuner fixed(5, 2);
  fixed.record(true, 0);
  CHECK(fixed.value() == 5);

  K::detail::BufferTuner b(K::AUTOTUNE);
  CHECK(b.value() == 2);
  b.starved(false, 4);  // the producer never got ahead: a bigger buffer would not help
  CHECK(b.value() == 2);
  for (int i = 0; i < 100; ++i) b.starved(true, 4);
  CHECK(b.value() == K::detail::BufferTuner::kMaxElements);
  K::detail::BufferTuner big(K::AUTOTUNE);
  for (int i = 0; i < 100; ++i) big.starved(true, K::detail::BufferTuner::kMaxBytes / 3);
  CHECK(big.value() == 3);  // the memory budget holds three such elements
}

TEST_CASE("prefetch(AUTOTUNE) keeps every element in order") {
  CHECK(values(range(50).map(jittered_square).prefetch(K::AUTOTUNE)) == values(range(50).map(jittered_square)));
}

// ---- filter, unbatch, zip, concatenate ----

TEST_CASE("filter keeps the elements its predicate accepts") {
  auto evens = range(10).filter([](const K::Example& e) { return static_cast<int>(e[0].to_vector()[0]) % 2 == 0; });
  CHECK(values(evens) == std::vector<float>{0, 2, 4, 6, 8});
  CHECK(evens.cardinality() == K::Dataset::kUnknown);
  CHECK(range(10).repeat().filter([](const K::Example&) { return true; }).cardinality() == K::Dataset::kInfinite);
}

TEST_CASE("unbatch undoes batch, and refuses scalars and ragged components") {
  auto x = K::Tensor::from_vector({7, 2}, iota_f(14));
  auto y = K::Tensor::from_vector({7}, iota_f(7, 100.f));
  auto ds = K::Dataset::from_tensor_slices(x, y);
  CHECK(values(ds.batch(3).unbatch()) == values(ds));
  CHECK_FALSE(ds.batch(3).unbatch().is_batched());
  CHECK_THROWS_AS(values(range(3).unbatch()), K::ShapeError);
  auto ragged = K::Dataset::zip({ds.batch(3), range(7).batch(2)});
  CHECK_THROWS_WITH_AS(values(ragged.unbatch()), doctest::Contains("same leading dimension"), K::ShapeError);
}

TEST_CASE("zip puts the components side by side and ends with the shortest input") {
  auto z = K::Dataset::zip({range(5), range(3).map([](const K::Example& e) {
                              return K::Example{e[0], K::Tensor::from_vector({}, {e[0].to_vector()[0] * 10.f})};
                            })});
  CHECK(z.cardinality() == 3);
  CHECK(values(z) == std::vector<float>{0, 0, 0, 1, 1, 10, 2, 2, 20});
  CHECK(K::Dataset::zip({range(4), range(2).repeat()}).cardinality() == 4);
  CHECK(K::Dataset::zip({range(4), counted_generator(2, std::make_shared<std::atomic<int>>(0))}).cardinality() ==
        K::Dataset::kUnknown);
  CHECK_THROWS_AS(K::Dataset::zip({}), K::ValueError);
}

TEST_CASE("concatenate: one dataset then the other, with matching dtypes") {
  auto c = range(3).concatenate(range(2));
  CHECK(c.cardinality() == 5);
  CHECK(values(c) == std::vector<float>{0, 1, 2, 0, 1});
  CHECK(range(3).concatenate(range(2).repeat()).cardinality() == K::Dataset::kInfinite);
  auto ints = K::Dataset::from_tensor_slices(K::Tensor::from_vector({2}, std::vector<std::int32_t>{5, 6}));
  CHECK_THROWS_WITH_AS(values(range(2).concatenate(ints)), doctest::Contains("element 2 has components (int32)"),
                       K::ValueError);
}

// ---- padded_batch, bucket_by_sequence_length ----

namespace {
// Element i: int32 (i+1,) holding 1..i+1, so its length is i+1.
K::Dataset sequences(int n) {
  return range(n).map([](const K::Example& e) {
    const int len = static_cast<int>(e[0].to_vector()[0]) + 1;
    std::vector<std::int32_t> v(static_cast<std::size_t>(len));
    std::iota(v.begin(), v.end(), 1);
    return K::Example{K::Tensor::from_vector({len}, v)};
  });
}
// The padded batch of sequences with lengths `lens` (each 1..len), padded with `pad` to `width`.
std::vector<float> padded(const std::vector<int>& lens, int width, float pad) {
  std::vector<float> out;
  for (int len : lens)
    for (int k = 0; k < width; ++k) out.push_back(k < len ? static_cast<float>(k + 1) : pad);
  return out;
}
}  // namespace

TEST_CASE("padded_batch pads to the longest in the batch, or to padded_shapes") {
  auto b = elements(sequences(5).padded_batch(2, {.padding_values = {-1}}));
  REQUIRE(b.size() == 3);
  CHECK(b[0][0].shape() == K::Shape{2, 2});
  CHECK(b[0][0].dtype() == K::DType::int32);
  CHECK(b[0][0].to_vector() == padded({1, 2}, 2, -1));
  CHECK(b[1][0].to_vector() == padded({3, 4}, 4, -1));
  CHECK(b[2][0].to_vector() == padded({5}, 5, -1));
  auto fixed = elements(sequences(5).padded_batch(2, {.padded_shapes = {{6}}, .drop_remainder = true}));
  REQUIRE(fixed.size() == 2);
  CHECK(fixed[1][0].to_vector() == padded({3, 4}, 6, 0));
  CHECK(range(5).padded_batch(2, {.drop_remainder = true}).cardinality() == 2);
  CHECK_THROWS_WITH_AS(values(sequences(5).padded_batch(5, {.padded_shapes = {{3}}})),
                       doctest::Contains("size 5 on axis 0, more than the 3"), K::ShapeError);
  CHECK_THROWS_AS(sequences(5).padded_batch(0), K::ValueError);
}

TEST_CASE("bucket_by_sequence_length batches similar lengths together") {
  // Lengths 1..10, buckets [0,3) [3,6) [6,inf) with batch sizes 2, 2, 3: full buckets come out as
  // they fill ({1,2}, {3,4}, {6,7,8}), the rest at the end in bucket order ({5}, {9,10}).
  auto length = [](const K::Example& e) { return e[0].dim(0); };
  auto b = elements(sequences(10).bucket_by_sequence_length(length, {3, 6}, {2, 2, 3}));
  REQUIRE(b.size() == 5);
  CHECK(b[0][0].to_vector() == padded({1, 2}, 2, 0));
  CHECK(b[1][0].to_vector() == padded({3, 4}, 4, 0));
  CHECK(b[2][0].to_vector() == padded({6, 7, 8}, 8, 0));
  CHECK(b[3][0].to_vector() == padded({5}, 5, 0));
  CHECK(b[4][0].to_vector() == padded({9, 10}, 10, 0));
  // Padded to the bucket's boundary - 1, partial buckets dropped.
  auto to_boundary = elements(sequences(10).bucket_by_sequence_length(
      length, {3, 6, 11}, {2, 2, 3, 1},
      {.padded_shapes = {{-1}}, .padding_values = {9}, .pad_to_bucket_boundary = true, .drop_remainder = true}));
  REQUIRE(to_boundary.size() == 3);
  CHECK(to_boundary[0][0].to_vector() == padded({1, 2}, 2, 9));
  CHECK(to_boundary[1][0].to_vector() == padded({3, 4}, 5, 9));
  CHECK(to_boundary[2][0].to_vector() == padded({6, 7, 8}, 10, 9));
  CHECK_THROWS_WITH_AS(values(sequences(10).bucket_by_sequence_length(
                           length, {3, 6}, {2, 2, 3}, {.padded_shapes = {{-1}}, .pad_to_bucket_boundary = true})),
                       doctest::Contains("not below the last bucket boundary 6"), K::ValueError);
  // no_padding: batch() within each bucket, refusing elements of different shapes.
  auto same = range(6).bucket_by_sequence_length([](const K::Example&) { return std::int64_t{1}; }, {3}, {4, 2},
                                                 {.no_padding = true});
  CHECK(values(same) == iota_f(6));
  CHECK_THROWS_AS(values(sequences(4).bucket_by_sequence_length(length, {100}, {2, 2}, {.no_padding = true})),
                  K::ShapeError);
  CHECK_THROWS_AS(sequences(3).bucket_by_sequence_length(length, {3, 6}, {2, 2}), K::ValueError);
  CHECK_THROWS_AS(sequences(3).bucket_by_sequence_length(length, {6, 3}, {2, 2, 2}), K::ValueError);
}

// ---- interleave ----

namespace {
// tf.data's documented example: range(1, 6).interleave(lambda x: from_tensors(x).repeat(6),
// cycle_length=2, block_length=4).
K::Dataset tf_doc_interleave(K::InterleaveOptions options) {
  return range(5)
      .map([](const K::Example& e) { return K::Example{K::Tensor::from_vector({}, {e[0].to_vector()[0] + 1.f})}; })
      .interleave(
          [](const K::Example& e) { return K::Dataset::from_tensor_slices(K::Tensor::full({6}, e[0].to_vector()[0])); },
          options);
}
const std::vector<float> kTfDocInterleave = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                             3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};
}  // namespace

TEST_CASE("interleave: tf.data's order, sequential and parallel") {
  CHECK(values(tf_doc_interleave({.cycle_length = 2, .block_length = 4})) == kTfDocInterleave);
  CHECK(values(tf_doc_interleave({.cycle_length = 2, .block_length = 4, .num_parallel_calls = 2})) == kTfDocInterleave);
  auto any_order = values(
      tf_doc_interleave({.cycle_length = 2, .block_length = 4, .num_parallel_calls = 2, .deterministic = false}));
  std::sort(any_order.begin(), any_order.end());
  auto sorted = kTfDocInterleave;
  std::sort(sorted.begin(), sorted.end());
  CHECK(any_order == sorted);
  CHECK(values(tf_doc_interleave({.cycle_length = 1})) ==
        std::vector<float>{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5});
  CHECK_THROWS_AS(tf_doc_interleave({.cycle_length = 0}), K::ValueError);
  CHECK_THROWS_AS(tf_doc_interleave({.block_length = 0}), K::ValueError);
}

TEST_CASE("interleave over parallel maps does not deadlock the shared pool") {
  // Every open input is read on a pool thread that waits for its own parallel map's calls,
  // queued on the same pool: the BlockingRegion lets the pool start threads for them.
  auto ds = range(6).interleave(
      [](const K::Example& e) {
        const float base = e[0].to_vector()[0] * 100.f;
        return range(5).map(
            [base](const K::Example& x) {
              return K::Example{K::Tensor::from_vector({}, {base + x[0].to_vector()[0]})};
            },
            {.num_parallel_calls = 3});
      },
      {.cycle_length = 6, .block_length = 5, .num_parallel_calls = K::AUTOTUNE});
  std::vector<float> want;
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 5; ++k) want.push_back(static_cast<float>(i * 100 + k));
  CHECK(values(ds) == want);
}

// ---- cache ----

TEST_CASE("cache(): the second pass reads memory, not the input") {
  auto starts = std::make_shared<std::atomic<int>>(0);
  auto ds = counted_generator(5, starts).cache();
  const auto first = values(ds, 0);
  CHECK(*starts == 1);
  CHECK(values(ds, 1) == first);
  CHECK(*starts == 1);
  // After a shuffle, the cached pass is replayed: every epoch has the first one's order.
  auto shuffled = range(20).shuffle(20, 7).cache();
  CHECK(values(shuffled, 3) == values(shuffled, 0));
  CHECK(values(range(20).shuffle(20, 7), 3) != values(range(20).shuffle(20, 7), 0));
  // A pass that stops early caches nothing.
  auto partial_starts = std::make_shared<std::atomic<int>>(0);
  auto partial = counted_generator(5, partial_starts).cache();
  {
    auto it = partial.make_iterator();
    K::Example e;
    CHECK(it->next(e));
  }
  CHECK(values(partial).size() == 20);  // 5 scalars and 1 + 2 + 3 + 4 + 5 values
  CHECK(*partial_starts == 2);          // the abandoned pass cached nothing: this one read the input
  CHECK(values(partial).size() == 20);
  CHECK(*partial_starts == 2);  // and this one read the cache
}

TEST_CASE("cache(path): a finished pass writes the file, later passes and datasets read it") {
  kerascpp_test::TempDir dir;
  const std::string path = dir.file("train.cache");
  auto starts = std::make_shared<std::atomic<int>>(0);
  auto ds = counted_generator(4, starts).cache(path);
  std::vector<float> first;
  {
    auto it = ds.make_iterator();
    K::Example e;
    for (int i = 0; i < 2; ++i) {
      REQUIRE(it->next(e));
      for (float v : e[1].to_vector()) first.push_back(v);
    }
    CHECK_FALSE(std::filesystem::exists(path));  // never there half-written
  }
  CHECK(dir.entries().empty());  // the abandoned pass left nothing behind
  const auto whole = values(ds);
  CHECK(std::filesystem::exists(path));
  CHECK(*starts == 2);
  CHECK(values(ds, 1) == whole);
  CHECK(*starts == 2);  // the second epoch read the file
  // A new pipeline over the same file does not run its input at all.
  auto never = K::Dataset::from_generator(
      []() -> K::Dataset::Generator { throw std::logic_error("the input must not be read"); },
      {{{}, K::DType::int32}, {{-1}, K::DType::float32}});
  auto reread = elements(never.cache(path));
  REQUIRE(reread.size() == 4);
  CHECK(reread[3][0].dtype() == K::DType::int32);
  CHECK(reread[3][1].shape() == K::Shape{4});
  CHECK(values(never.cache(path)) == whole);
  // A damaged file is an IOError naming it.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  CHECK_THROWS_WITH_AS(values(never.cache(path)), doctest::Contains("train.cache"), K::IOError);
}

// ---- ignore_errors ----

TEST_CASE("ignore_errors skips elements that failed with a kerascpp error and logs the count") {
  auto failing = range(10).map([](const K::Example& e) {
    const int v = static_cast<int>(e[0].to_vector()[0]);
    if (v % 3 == 0) throw K::IOError("record " + std::to_string(v) + " is corrupt");
    return e;
  });
  test_scopes::CerrCapture err;
  CHECK(values(failing.ignore_errors()) == std::vector<float>{1, 2, 4, 5, 7, 8});
  CHECK(err.text.str().find("skipped 4 elements") != std::string::npos);
  CHECK(err.text.str().find("record 0 is corrupt") != std::string::npos);
  CHECK(values(failing.map(jittered_square, {.num_parallel_calls = 2}).ignore_errors()) ==
        std::vector<float>{1, 4, 16, 25, 49, 64});
  auto bug = range(3).map([](const K::Example&) -> K::Example { throw std::logic_error("a bug"); });
  CHECK_THROWS_AS(values(bug.ignore_errors()), std::logic_error);
}

// ---- options ----

TEST_CASE("with_options merges: later set fields win, unset ones keep earlier values") {
  auto ds = range(3);
  CHECK_FALSE(ds.options().deterministic.has_value());
  CHECK(ds.options().auto_shard_policy == K::AutoShardPolicy::AUTO);
  auto a = ds.with_options({.deterministic = false});
  auto b = a.map([](const K::Example& e) { return e; }).with_options({.auto_shard_policy = K::AutoShardPolicy::DATA});
  CHECK(b.options().deterministic == false);
  CHECK(b.options().auto_shard_policy == K::AutoShardPolicy::DATA);
  CHECK(b.batch(2).options().auto_shard_policy == K::AutoShardPolicy::DATA);  // ops keep them
  CHECK_FALSE(ds.options().deterministic.has_value());                        // the original is unchanged
  CHECK(values(b) == values(ds));
}

TEST_CASE("TaskPool runs every task and grows only to its size") {
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  K::detail::TaskPool pool(2);  // declared last: joined before what its tasks use goes away
  for (int i = 0; i < 50; ++i)
    pool.submit([&] {
      std::lock_guard lock(mu);
      ++done;
      cv.notify_all();
    });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done == 50; });
  CHECK(done == 50);
  CHECK(pool.max_threads() == 2);
  CHECK(K::detail::available_cores() >= 1);
}
