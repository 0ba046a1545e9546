// TFRecordDataset and TFRecordWriter: framing and CRCs, GZIP/ZLIB, several files, and the
// IOError each kind of damage raises (file, record index, byte offset, what was expected).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "data_files.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/tfrecord.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::error_of;
using kerascpp_test::read_file;
using kerascpp_test::strings_of;
using kerascpp_test::TempDir;
using kerascpp_test::write_file;

namespace {

// Records of every kind: empty, short, binary, and one longer than the readers' 64 KiB buffer.
std::vector<std::string> sample_records() {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  std::string big;
  for (int i = 0; i < 300; ++i) big += binary;
  return {"", "a", binary, big, "last\n"};
}

void write_records(const std::string& path, const std::vector<std::string>& records, const std::string& compression) {
  data::TFRecordWriter writer(path, {compression});
  for (const auto& r : records) writer.write(r);
  writer.close();
}

std::string le(std::uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return out;
}

// Byte offset of record `index` in a plain file of `records`.
std::uint64_t offset_of(const std::vector<std::string>& records, std::size_t index) {
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < index; ++i) at += 16 + records[i].size();
  return at;
}

}  // namespace

TEST_CASE("crc32c gives the CRC-32C check value and TFRecord's masked test vector") {
  CHECK(K::detail::crc32c("123456789", 9) == 0xE3069283u);
  CHECK(K::detail::crc32c("", 0) == 0u);
  // The masked CRC TensorFlow's own tests give for this record (also in ../shared/FORMATS.md).
  const std::string data =
      "\x1a\x11"
      "CRC test, one two";
  CHECK(K::detail::masked_crc32c(data.data(), data.size()) == 0x5794D08Au);
}

TEST_CASE("TFRecordWriter frames a record as length, masked length CRC, data, masked data CRC") {
  TempDir dir;
  write_records(dir.file("one.tfrecord"), {"hello"}, "");
  const std::string length = le(5, 8);
  const std::string expected = length + le(K::detail::masked_crc32c(length.data(), 8), 4) + "hello" +
                               le(K::detail::masked_crc32c("hello", 5), 4);
  CHECK(read_file(dir.file("one.tfrecord")) == expected);
}

TEST_CASE("TFRecordDataset reads back what TFRecordWriter wrote, plain, GZIP and ZLIB") {
  TempDir dir;
  const auto records = sample_records();
  for (const std::string compression : {"", "GZIP", "ZLIB"}) {
    CAPTURE(compression);
    const std::string path = dir.file("r" + compression + ".tfrecord");
    write_records(path, records, compression);
    const std::string bytes = read_file(path);
    if (compression == "GZIP") CHECK(bytes.substr(0, 2) == "\x1f\x8b");
    if (compression == "ZLIB") CHECK(static_cast<unsigned char>(bytes[0]) == 0x78);
    if (compression == "") CHECK(bytes.size() == offset_of(records, records.size()));
    const auto ds = data::TFRecordDataset({path}, {compression});
    CHECK(ds.cardinality() == K::Dataset::kUnknown);
    CHECK(strings_of(ds) == records);
    // Elements are 1-D uint8 tensors of the record's bytes.
    const auto first = kerascpp_test::drain(ds).at(2).at(0);
    CHECK(first.dtype() == K::DType::uint8);
    CHECK(first.shape() == K::Shape{256});
  }
}

TEST_CASE("TFRecordDataset reads its files in order and GZIP members one after another") {
  TempDir dir;
  write_records(dir.file("a"), {"a0", "a1"}, "");
  write_records(dir.file("b"), {}, "");
  write_records(dir.file("c"), {"c0"}, "");
  CHECK(strings_of(data::TFRecordDataset({dir.file("c"), dir.file("b"), dir.file("a")})) ==
        std::vector<std::string>{"c0", "a0", "a1"});
  // `cat x.gz y.gz` is one valid gzip file holding both.
  write_records(dir.file("x.gz"), {"x0"}, "GZIP");
  write_records(dir.file("y.gz"), {"y0", "y1"}, "GZIP");
  write_file(dir.file("xy.gz"), read_file(dir.file("x.gz")) + read_file(dir.file("y.gz")));
  CHECK(strings_of(data::TFRecordDataset({dir.file("xy.gz")}, {"GZIP"})) == std::vector<std::string>{"x0", "y0", "y1"});
}

TEST_CASE("a TFRecordDataset pipeline maps, shuffles and batches records") {
  TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 10; ++i) records.push_back(std::string(4, static_cast<char>('a' + i)));
  write_records(dir.file("fixed"), records, "ZLIB");
  const auto ds = data::TFRecordDataset({dir.file("fixed")}, {"ZLIB"}).shuffle(10, 3).batch(4);
  const auto batches = kerascpp_test::drain(ds);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0][0].shape() == K::Shape{4, 4});
  CHECK(batches[2][0].shape() == K::Shape{2, 4});
  std::string all;
  for (const auto& b : batches) all += data::tensor_bytes(b[0]);
  std::sort(all.begin(), all.end());
  std::string expected;
  for (const auto& r : records) expected += r;
  CHECK(all == expected);
}

TEST_CASE("a damaged TFRecord file is an IOError naming the file, record index, byte offset and what was expected") {
  TempDir dir;
  const auto records = sample_records();
  const std::string path = dir.file("damaged.tfrecord");
  write_records(path, records, "");
  const std::string good = read_file(path);
  const auto message = [&](const std::string& bytes) {
    write_file(path, bytes);
    return error_of<K::IOError>([&] { strings_of(data::TFRecordDataset({path})); });
  };
  const std::uint64_t at2 = offset_of(records, 2);
  const std::string where = "record 2 (counting from 0) at byte offset " + std::to_string(at2);

  SUBCASE("data CRC mismatch") {
    std::string bytes = good;
    bytes[at2 + 12 + 100] ^= 0x01;
    const std::string m = message(bytes);
    CHECK(m.find(path) != std::string::npos);
    CHECK(m.find(where) != std::string::npos);
    CHECK(m.find("data CRC mismatch: expected masked CRC-32C 0x") != std::string::npos);
  }
  SUBCASE("length CRC mismatch") {
    std::string bytes = good;
    bytes[at2 + 9] ^= 0x10;
    const std::string m = message(bytes);
    CHECK(m.find(where) != std::string::npos);
    CHECK(m.find("length CRC mismatch") != std::string::npos);
  }
  SUBCASE("a length changed with its CRC still matching the old one") {
    std::string bytes = good;
    bytes[at2 + 1] = 0;  // 256 → 0
    CHECK(message(bytes).find("length CRC mismatch") != std::string::npos);
  }
  SUBCASE("file cut inside a header") {
    const std::string m = message(good.substr(0, at2 + 5));
    CHECK(m.find(where) != std::string::npos);
    CHECK(m.find("12-byte header") != std::string::npos);
    CHECK(m.find("ends 5 bytes into it") != std::string::npos);
  }
  SUBCASE("file cut inside the data") {
    const std::string m = message(good.substr(0, at2 + 12 + 10));
    CHECK(m.find(where) != std::string::npos);
    CHECK(m.find("declares 256 data bytes but the file ends after 10") != std::string::npos);
  }
  SUBCASE("file cut inside the data CRC") {
    const std::string m = message(good.substr(0, at2 + 12 + 256 + 2));
    CHECK(m.find("4-byte data CRC") != std::string::npos);
  }
  SUBCASE("the records before the damage still come out") {
    std::string bytes = good;
    bytes[at2 + 12] ^= 0x01;
    write_file(path, bytes);
    auto it = data::TFRecordDataset({path}).make_iterator();
    K::Example e;
    CHECK(it->next(e));
    CHECK(it->next(e));
    CHECK_THROWS_AS(it->next(e), K::IOError);
  }
}

TEST_CASE("compressed TFRecord damage is an IOError too, with offsets in the decompressed data") {
  TempDir dir;
  const auto records = sample_records();
  const std::string path = dir.file("r.gz");
  write_records(path, records, "GZIP");
  const std::string good = read_file(path);
  write_file(path, good.substr(0, good.size() / 2));
  const std::string cut = error_of<K::IOError>([&] { strings_of(data::TFRecordDataset({path}, {"GZIP"})); });
  CHECK(cut.find(path) != std::string::npos);
  CHECK(cut.find("truncated") != std::string::npos);

  // A gzip file read as plain bytes, and a plain file read as gzip, say what to pass instead.
  write_file(path, good);
  const std::string plain = error_of<K::IOError>([&] { strings_of(data::TFRecordDataset({path})); });
  CHECK(plain.find("compression_type \"GZIP\"") != std::string::npos);
  write_records(dir.file("plain"), records, "");
  const std::string as_gzip =
      error_of<K::IOError>([&] { strings_of(data::TFRecordDataset({dir.file("plain")}, {"GZIP"})); });
  CHECK(as_gzip.find("not a valid GZIP stream") != std::string::npos);

  // A record damaged inside a ZLIB stream: the offset counts decompressed bytes.
  std::string raw = read_file(dir.file("plain"));
  raw[offset_of(records, 3) + 12 + 7] ^= 0x20;
  write_file(path, kerascpp_test::deflate_bytes(raw, false));
  const std::string deep = error_of<K::IOError>([&] { strings_of(data::TFRecordDataset({path}, {"ZLIB"})); });
  CHECK(deep.find("record 3 (counting from 0) at byte offset " + std::to_string(offset_of(records, 3)) +
                  " of the ZLIB-decompressed data") != std::string::npos);
}

TEST_CASE("TFRecordDataset: a missing file is an IOError when the iterator reaches it; bad options are ValueErrors") {
  TempDir dir;
  write_records(dir.file("a"), {"a0"}, "");
  auto it = data::TFRecordDataset({dir.file("a"), dir.file("missing")}).make_iterator();
  K::Example e;
  CHECK(it->next(e));
  const std::string m = error_of<K::IOError>([&] { it->next(e); });
  CHECK(m.find(dir.file("missing")) != std::string::npos);
  CHECK(m.find("cannot open") != std::string::npos);
  CHECK_THROWS_AS(data::TFRecordDataset({dir.file("a")}, {"gzip"}), K::ValueError);
  CHECK(strings_of(data::TFRecordDataset({})).empty());
}

TEST_CASE("TFRecordWriter publishes the file only on close, and never half a file") {
  TempDir dir;
  const std::string path = dir.file("out.tfrecord");
  {
    data::TFRecordWriter writer(path, {"GZIP"});
    writer.write("one");
    writer.write(data::bytes_tensor("two"));
    writer.flush();
    CHECK_FALSE(std::filesystem::exists(path));
  }  // the destructor closes
  CHECK(strings_of(data::TFRecordDataset({path}, {"GZIP"})) == std::vector<std::string>{"one", "two"});
  CHECK(dir.entries() == std::vector<std::string>{"out.tfrecord"});

  // Unwinding from an exception drops the temporary file and leaves the old file alone.
  try {
    data::TFRecordWriter writer(path);
    writer.write("partial");
    throw std::runtime_error("stop");
  } catch (const std::runtime_error&) {}
  CHECK(strings_of(data::TFRecordDataset({path}, {"GZIP"})) == std::vector<std::string>{"one", "two"});
  CHECK(dir.entries() == std::vector<std::string>{"out.tfrecord"});

  data::TFRecordWriter closed(dir.file("closed"));
  closed.close();
  closed.close();  // idempotent
  CHECK_THROWS_AS(closed.write("late"), K::StateError);
  CHECK(strings_of(data::TFRecordDataset({dir.file("closed")})).empty());
  CHECK_THROWS_AS(data::TFRecordWriter(dir.file("no/such/dir/x")), K::IOError);
  CHECK_THROWS_AS(data::TFRecordWriter(dir.file("y"), {"LZ4"}), K::ValueError);
  CHECK_THROWS_AS(data::tensor_bytes(K::Tensor::zeros({2})), K::ShapeError);
}
