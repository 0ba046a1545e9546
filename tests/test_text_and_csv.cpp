// TextLineDataset, CsvDataset, make_csv_dataset and list_files on small files the tests write:
// line endings, RFC 4180 quoting, headers, column selection, defaults, compression, and the
// IOError a bad row raises (file, line, column).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "data_files.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/csv_dataset.hpp"
#include "kerascpp/data/list_files.hpp"
#include "kerascpp/data/text_line_dataset.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::drain;
using kerascpp_test::error_of;
using kerascpp_test::strings_of;
using kerascpp_test::TempDir;
using kerascpp_test::write_file;
using Strings = std::vector<std::string>;

namespace {

// The CSV error message for `text`, read with these defaults and options.
std::string csv_error(const TempDir& dir, const std::string& text, std::vector<data::CsvColumn> defaults,
                      data::CsvOptions options = {}) {
  const std::string path = dir.file("bad.csv");
  write_file(path, text);
  return error_of<K::IOError>([&] { drain(data::CsvDataset({path}, std::move(defaults), std::move(options))); });
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("TextLineDataset: one element per line, without \\n or \\r\\n, across files") {
  TempDir dir;
  write_file(dir.file("a.txt"), "first\nsecond\r\n\nlast without newline");
  write_file(dir.file("b.txt"), "ends in newline\n");
  write_file(dir.file("empty.txt"), "");
  std::string long_line(100000, 'x');
  write_file(dir.file("c.txt"), long_line + "\ny");
  const auto ds =
      data::TextLineDataset({dir.file("a.txt"), dir.file("empty.txt"), dir.file("b.txt"), dir.file("c.txt")});
  CHECK(ds.cardinality() == K::Dataset::kUnknown);
  CHECK(strings_of(ds) == Strings{"first", "second", "", "last without newline", "ends in newline", long_line, "y"});
  const auto lines = drain(ds);
  CHECK(lines[0][0].dtype() == K::DType::uint8);
  CHECK(lines[0][0].shape() == K::Shape{5});
  CHECK(lines[2][0].shape() == K::Shape{0});
}

TEST_CASE("TextLineDataset reads GZIP and ZLIB files; a missing file is an IOError naming it") {
  TempDir dir;
  write_file(dir.file("t.gz"), kerascpp_test::deflate_bytes("one\ntwo\n", true));
  write_file(dir.file("t.z"), kerascpp_test::deflate_bytes("three", false));
  CHECK(strings_of(data::TextLineDataset({dir.file("t.gz")}, {"GZIP"})) == Strings{"one", "two"});
  CHECK(strings_of(data::TextLineDataset({dir.file("t.z")}, {"ZLIB"})) == Strings{"three"});
  const std::string m = error_of<K::IOError>([&] { drain(data::TextLineDataset({dir.file("nope.txt")})); });
  CHECK(contains(m, "TextLineDataset"));
  CHECK(contains(m, dir.file("nope.txt")));
  CHECK(contains(error_of<K::IOError>([&] { drain(data::TextLineDataset({dir.path.string()})); }), "is a directory"));
}

TEST_CASE("CsvDataset: quoted fields, column types from the defaults, empty fields take the defaults") {
  TempDir dir;
  write_file(dir.file("q.csv"),
             "1,\"a, \"\"quoted\"\" b\",2.5,7\r\n"
             "2,\"two\nlines\",,\n"
             "-3,plain,1e-3,-9000000000\r"
             "+4,\"\",NA, 5 \n");
  const auto rows = drain(
      data::CsvDataset({dir.file("q.csv")}, {K::DType::int32, "default", -1.5f, std::int64_t{42}}, {.na_value = "NA"}));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0][0].dtype() == K::DType::int32);
  CHECK(rows[0][0].shape() == K::Shape{});
  CHECK(rows[0][2].dtype() == K::DType::float32);
  CHECK(rows[0][3].dtype() == K::DType::int64);
  CHECK(rows[0][0].data<std::int32_t>()[0] == 1);
  CHECK(data::tensor_bytes(rows[0][1]) == "a, \"quoted\" b");
  CHECK(rows[0][2].data<float>()[0] == 2.5f);
  CHECK(rows[0][3].data<std::int64_t>()[0] == 7);
  CHECK(data::tensor_bytes(rows[1][1]) == "two\nlines");
  CHECK(rows[1][2].data<float>()[0] == -1.5f);  // empty: the default
  CHECK(rows[1][3].data<std::int64_t>()[0] == 42);
  CHECK(rows[2][0].data<std::int32_t>()[0] == -3);
  CHECK(rows[2][2].data<float>()[0] == 1e-3f);
  CHECK(rows[2][3].data<std::int64_t>()[0] == -9000000000);
  CHECK(rows[3][0].data<std::int32_t>()[0] == 4);
  CHECK(data::tensor_bytes(rows[3][1]) == "default");  // "" quoted is empty too
  CHECK(rows[3][2].data<float>()[0] == -1.5f);         // na_value
  CHECK(rows[3][3].data<std::int64_t>()[0] == 5);      // spaces around numbers are ignored
}

TEST_CASE("CsvDataset: header, select_cols, exclude_cols, delimiter, quotes off, compression") {
  TempDir dir;
  write_file(dir.file("h.csv"), "id,name,score,extra\n1,ann,0.5,x\n2,bob,0.25,y\n");
  const auto selected =
      drain(data::CsvDataset({dir.file("h.csv")}, {K::DType::int64, 0.0f}, {.header = true, .select_cols = {0, 2}}));
  REQUIRE(selected.size() == 2);
  CHECK(selected[1].size() == 2);
  CHECK(selected[1][0].data<std::int64_t>()[0] == 2);
  CHECK(selected[1][1].data<float>()[0] == 0.25f);
  const auto excluded =
      drain(data::CsvDataset({dir.file("h.csv")}, {"", 0.0f, ""}, {.header = true, .exclude_cols = {0}}));
  REQUIRE(excluded.size() == 2);
  CHECK(data::tensor_bytes(excluded[0][0]) == "ann");
  CHECK(data::tensor_bytes(excluded[0][2]) == "x");

  write_file(dir.file("semi.csv"), "a;\"b\"\n");
  const auto semi =
      drain(data::CsvDataset({dir.file("semi.csv")}, {"", ""}, {.field_delim = ';', .use_quote_delim = false}));
  CHECK(data::tensor_bytes(semi[0][1]) == "\"b\"");

  write_file(dir.file("z.csv.gz"), kerascpp_test::deflate_bytes("h\n5\n6\n", true));
  const auto gz = drain(data::CsvDataset({dir.file("z.csv.gz")}, {0}, {.compression_type = "GZIP", .header = true}));
  REQUIRE(gz.size() == 2);
  CHECK(gz[1][0].data<std::int32_t>()[0] == 6);
}

TEST_CASE("CsvDataset: a bad row is an IOError naming the file, line and column") {
  TempDir dir;
  const std::string path = dir.file("bad.csv");
  SUBCASE("wrong field count") {
    const std::string m = csv_error(dir, "a,b\n1,2\n3\n", {0, 0}, {.header = true});
    CHECK(contains(m, "CsvDataset: file '" + path + "', line 3, column 1"));
    CHECK(contains(m, "the record has 1 field but record_defaults has 2 columns"));
  }
  SUBCASE("too many fields") {
    CHECK(contains(csv_error(dir, "1,2\n3,4,5\n", {0, 0}), "line 2, column 1: the record has 3 fields"));
  }
  SUBCASE("a value that does not parse, counting lines inside quoted fields") {
    const std::string m = csv_error(dir, "\"multi\nline\",1\nok,x1\n", {"", 0});
    CHECK(contains(m, "line 3, column 2: 'x1' is not a valid int32"));
  }
  SUBCASE("int32 out of range, float garbage") {
    CHECK(contains(csv_error(dir, "3000000000\n", {0}), "line 1, column 1: '3000000000' is not a valid int32"));
    CHECK(contains(csv_error(dir, "1.5x\n", {0.0f}), "'1.5x' is not a valid float32"));
  }
  SUBCASE("a required field left empty") {
    const std::string m = csv_error(dir, "1,\n", {0, K::DType::float32});
    CHECK(contains(m, "line 1, column 2: the field is empty"));
    CHECK(contains(m, "required"));
  }
  SUBCASE("a quoted field that never closes names the line it opened on") {
    CHECK(contains(csv_error(dir, "1,2\n3,\"open\n\n", {0, ""}), "line 2, column 2: a quoted field opens here"));
  }
  SUBCASE("stray quotes") {
    CHECK(contains(csv_error(dir, "ab\"c\n", {""}), "column 1: a quote inside an unquoted field"));
    CHECK(contains(csv_error(dir, "1,\"ab\"c\n", {0, ""}), "column 2: 'c' follows the closing quote"));
  }
  SUBCASE("an empty line is a record of one empty field, as in tf.data") {
    CHECK(contains(csv_error(dir, "1,2\n\n3,4\n", {0, 0}), "line 2, column 1: the record has 1 field"));
  }
  SUBCASE("select_cols past the end of a record") {
    CHECK(contains(csv_error(dir, "1,2\n", {0}, {.select_cols = {3}}), "select_cols reads column 4"));
  }
}

TEST_CASE("CsvDataset: bad arguments are ValueErrors") {
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {K::DType::bfloat16}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {0, 0}, {.select_cols = {2, 1}}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {0, 0}, {.select_cols = {1}}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {0}, {.select_cols = {1}, .exclude_cols = {0}}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {0}, {.field_delim = '"'}), K::ValueError);
  CHECK_THROWS_AS(data::CsvDataset({"x"}, {0}, {.compression_type = "BZIP2"}), K::ValueError);
}

TEST_CASE("make_csv_dataset: (features, label) batches from files with a header") {
  TempDir dir;
  write_file(dir.file("part0.csv"), "x1,label,x2\n1.5,0,10\n2.5,1,20\n");
  write_file(dir.file("part1.csv"), "x1,label,x2\n3.5,2,30\n");
  const auto batches = drain(
      data::make_csv_dataset(dir.file("part*.csv"), 2, {.label_name = "label", .num_epochs = 1, .shuffle = false}));
  REQUIRE(batches.size() == 2);
  CHECK(batches[0][0].shape() == K::Shape{2, 2});
  CHECK(batches[0][0].to_vector() == std::vector<float>{1.5f, 10, 2.5f, 20});
  CHECK(batches[0][1].dtype() == K::DType::int32);
  CHECK(batches[0][1].to_vector() == std::vector<float>{0, 1});
  CHECK(batches[1][0].to_vector() == std::vector<float>{3.5f, 30});  // the remainder of one

  // select_columns, a float label, and an endless shuffled stream that drops the remainder.
  write_file(dir.file("f.csv"), "a,b,c,y\n1,2,3,0.5\n4,5,6,1.5\n7,8,9,2.5\n");
  auto it =
      data::make_csv_dataset(dir.file("f.csv"), 2, {.label_name = "y", .select_columns = {"c", "a"}, .shuffle_seed = 5})
          .make_iterator();
  std::multiset<float> labels;
  for (int i = 0; i < 6; ++i) {  // 12 rows: 4 passes
    K::Example b;
    REQUIRE(it->next(b));
    CHECK(b[0].shape() == K::Shape{2, 2});
    CHECK(b[1].dtype() == K::DType::float32);
    for (float v : b[1].to_vector()) labels.insert(v);
  }
  CHECK(labels == std::multiset<float>{0.5f, 0.5f, 0.5f, 0.5f, 1.5f, 1.5f, 1.5f, 1.5f, 2.5f, 2.5f, 2.5f, 2.5f});

  // Every file's header must be the first file's.
  write_file(dir.file("mixed0.csv"), "x1,label\n1,2\n");
  write_file(dir.file("mixed1.csv"), "label,x1\n3,4\n");
  const std::string m = error_of<K::IOError>([&] {
    drain(
        data::make_csv_dataset(dir.file("mixed*.csv"), 4, {.label_name = "label", .num_epochs = 1, .shuffle = false}));
  });
  CHECK(contains(m, dir.file("mixed1.csv")));
  CHECK(contains(m, "every file needs the same columns"));
  CHECK_THROWS_AS(data::make_csv_dataset(dir.file("f.csv"), 2, {.label_name = "nope"}), K::ValueError);
}

TEST_CASE("list_files: sorted without shuffle, a permutation fixed by the seed with it, IOError without a match") {
  TempDir dir;
  Strings names{"b.txt", "a.txt", "d.txt", "c.txt", "e.txt", "g.txt", "f.txt", "h.txt"};
  for (const auto& n : names) write_file(dir.file(n), n);
  write_file(dir.file("other.csv"), "");
  Strings sorted;
  for (const auto& n : {"a", "b", "c", "d", "e", "f", "g", "h"}) sorted.push_back(dir.file(std::string(n) + ".txt"));
  CHECK(data::list_files(dir.file("*.txt"), {.shuffle = false}) == sorted);
  CHECK(data::list_files({dir.file("[a-d].txt"), dir.file("[c-h].txt")}, {.shuffle = false}) == sorted);

  const Strings shuffled = data::list_files(dir.file("*.txt"), {.seed = 7});
  CHECK(shuffled == data::list_files(dir.file("*.txt"), {.seed = 7}));
  CHECK(std::is_permutation(shuffled.begin(), shuffled.end(), sorted.begin(), sorted.end()));
  bool some_seed_reorders = false;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    some_seed_reorders |= data::list_files(dir.file("*.txt"), {.seed = seed}) != sorted;
  CHECK(some_seed_reorders);

  const std::string m = error_of<K::IOError>([&] { data::list_files(dir.file("*.parquet")); });
  CHECK(contains(m, "no files match"));
  CHECK(contains(m, dir.file("*.parquet")));
}
