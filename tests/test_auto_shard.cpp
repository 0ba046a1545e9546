// data::auto_shard and distribute::experimental_distribute_dataset: the FILE, DATA, AUTO and OFF
// policies with the worker index and count given directly. Every element must reach exactly one
// worker per epoch under FILE and DATA, and every worker under OFF (tests/mpi covers real workers).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "data_files.hpp"
#include "kerascpp/data/auto_shard.hpp"
#include "kerascpp/data/text_line_dataset.hpp"
#include "kerascpp/distribute/distribute_dataset.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::error_of;
using kerascpp_test::strings_of;
using kerascpp_test::TempDir;
using kerascpp_test::write_file;
using Strings = std::vector<std::string>;

namespace {

// Five files of 1..5 lines "f<i>-<j>": uneven on purpose, so FILE shards differ in size.
Strings write_files(const TempDir& dir) {
  Strings files;
  for (int i = 0; i < 5; ++i) {
    std::string text;
    for (int j = 0; j <= i; ++j) text += "f" + std::to_string(i) + "-" + std::to_string(j) + "\n";
    files.push_back(dir.file("part" + std::to_string(i) + ".txt"));
    write_file(files.back(), text);
  }
  return files;
}

Strings all_lines() {
  Strings out;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j <= i; ++j) out.push_back("f" + std::to_string(i) + "-" + std::to_string(j));
  return out;
}

K::Dataset lines(const Strings& files, K::AutoShardPolicy policy) {
  return data::TextLineDataset(files).with_options({.auto_shard_policy = policy});
}

// How many times each element came out over all workers' parts.
std::map<std::string, int> counts_over_workers(const K::Dataset& ds, int workers) {
  std::map<std::string, int> seen;
  for (int w = 0; w < workers; ++w)
    for (const auto& s : strings_of(data::auto_shard(ds, workers, w))) ++seen[s];
  return seen;
}

std::map<std::string, int> each(const Strings& values, int times) {
  std::map<std::string, int> out;
  for (const auto& v : values) out[v] += times;
  return out;
}

// The file number of a line "f<i>-<j>".
int file_of(const std::string& line) { return line.at(1) - '0'; }

Strings numbers(std::int64_t n) {
  Strings out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// from_tensor_slices of 0..n-1 (int32), read back as strings for the counting helpers.
K::Dataset range(std::int64_t n) {
  K::Tensor t({n}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < n; ++i) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(i);
  return K::Dataset::from_tensor_slices(t);
}

Strings range_values(const K::Dataset& ds) {
  Strings out;
  auto it = ds.make_iterator();
  for (K::Example e; it->next(e);) out.push_back(std::to_string(e[0].data<std::int32_t>()[0]));
  return out;
}

}  // namespace

TEST_CASE("auto_shard FILE: worker w reads files w, w+k, ...; every line once over the workers") {
  TempDir dir;
  const Strings files = write_files(dir);
  for (int workers : {2, 3}) {
    CAPTURE(workers);
    const K::Dataset ds = lines(files, K::AutoShardPolicy::FILE);
    CHECK(counts_over_workers(ds, workers) == each(all_lines(), 1));
    for (int w = 0; w < workers; ++w)
      for (const auto& s : strings_of(data::auto_shard(ds, workers, w))) CHECK(file_of(s) % workers == w);
  }
  // Wherever the source sits, and on every pass of a repeat (opened later, from next()).
  const K::Dataset deep = data::TextLineDataset(files)
                              .map([](const K::Example& e) { return e; })
                              .repeat(2)
                              .with_options({.auto_shard_policy = K::AutoShardPolicy::FILE});
  CHECK(counts_over_workers(deep, 2) == each(all_lines(), 2));
  // Both inputs of a concatenate, the second opened only when the first runs out.
  const K::Dataset both = data::TextLineDataset({files[0], files[1]})
                              .concatenate(data::TextLineDataset({files[2], files[3], files[4]}))
                              .with_options({.auto_shard_policy = K::AutoShardPolicy::FILE});
  Strings worker1 = strings_of(data::auto_shard(both, 2, 1));
  CHECK(worker1 == Strings{"f1-0", "f1-1", "f3-0", "f3-1", "f3-2", "f3-3"});
  CHECK(counts_over_workers(both, 2) == each(all_lines(), 1));
}

TEST_CASE("auto_shard DATA keeps every k-th element; OFF gives every worker everything") {
  TempDir dir;
  const Strings files = write_files(dir);
  const K::Dataset by_data = lines(files, K::AutoShardPolicy::DATA);
  CHECK(counts_over_workers(by_data, 3) == each(all_lines(), 1));
  const Strings all = all_lines();
  Strings expected_worker2;
  for (std::size_t i = 2; i < all.size(); i += 3) expected_worker2.push_back(all[i]);
  CHECK(strings_of(data::auto_shard(by_data, 3, 2)) == expected_worker2);

  const K::Dataset numbers_by_data = range(10).with_options({.auto_shard_policy = K::AutoShardPolicy::DATA});
  CHECK(range_values(data::auto_shard(numbers_by_data, 4, 1)) == Strings{"1", "5", "9"});
  CHECK(data::auto_shard(numbers_by_data, 4, 1).cardinality() == 3);

  for (int w = 0; w < 3; ++w) CHECK(strings_of(data::auto_shard(lines(files, K::AutoShardPolicy::OFF), 3, w)) == all);
  CHECK(range_values(data::auto_shard(range(7).with_options({.auto_shard_policy = K::AutoShardPolicy::OFF}), 2, 1)) ==
        numbers(7));
}

TEST_CASE("auto_shard AUTO: FILE when there are files to split, DATA otherwise") {
  TempDir dir;
  const Strings files = write_files(dir);
  const K::Dataset by_auto = lines(files, K::AutoShardPolicy::AUTO);
  for (const auto& s : strings_of(data::auto_shard(by_auto, 2, 0))) CHECK(file_of(s) % 2 == 0);
  CHECK(counts_over_workers(by_auto, 2) == each(all_lines(), 1));
  // Tensors: no file source, so every k-th element.
  CHECK(range_values(data::auto_shard(range(7), 2, 1)) == Strings{"1", "3", "5"});
  std::map<std::string, int> seen;
  for (int w = 0; w < 3; ++w)
    for (const auto& v : range_values(data::auto_shard(range(7).batch(1).unbatch(), 3, w))) ++seen[v];
  CHECK(seen == each(numbers(7), 1));
  // Two files for three workers: FILE would leave one idle, so AUTO splits the lines instead.
  const K::Dataset two_files = lines({files[3], files[4]}, K::AutoShardPolicy::AUTO);
  CHECK(counts_over_workers(two_files, 3) ==
        each(Strings{"f3-0", "f3-1", "f3-2", "f3-3", "f4-0", "f4-1", "f4-2", "f4-3", "f4-4"}, 1));
  CHECK(strings_of(data::auto_shard(two_files, 3, 1)) == Strings{"f3-1", "f4-0", "f4-3"});
}

TEST_CASE("auto_shard FILE refuses pipelines it cannot split by file, with the fix") {
  TempDir dir;
  const Strings files = write_files(dir);
  const std::string no_files = error_of<K::ValueError>([] {
    strings_of(data::auto_shard(range(4).with_options({.auto_shard_policy = K::AutoShardPolicy::FILE}), 2, 0));
  });
  CHECK(no_files.find("no file-based source") != std::string::npos);
  CHECK(no_files.find("AutoShardPolicy::DATA") != std::string::npos);
  const std::string too_few = error_of<K::ValueError>(
      [&] { strings_of(data::auto_shard(lines({files[0], files[1]}, K::AutoShardPolicy::FILE), 3, 0)); });
  CHECK(too_few.find("2 file(s) for 3 workers") != std::string::npos);
  CHECK(!error_of<K::ValueError>([&] { data::auto_shard(lines(files, K::AutoShardPolicy::FILE), 2, 2); }).empty());
  // One worker: the dataset as it is, whatever the policy.
  CHECK(strings_of(data::auto_shard(lines(files, K::AutoShardPolicy::FILE), 1, 0)) == all_lines());
}

TEST_CASE("experimental_distribute_dataset on one worker leaves the dataset whole") {
  K::distribute::MirroredStrategy<> strategy(std::vector<std::string>{"cpu:0", "cpu:1"});
  TempDir dir;
  const Strings files = write_files(dir);
  CHECK(strings_of(K::distribute::experimental_distribute_dataset(strategy, lines(files, K::AutoShardPolicy::FILE))) ==
        all_lines());
  CHECK(range_values(K::distribute::experimental_distribute_dataset(strategy, range(5))) == numbers(5));
}
