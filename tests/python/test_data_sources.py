"""kerascpp's file sources against independent readers and writers, without TensorFlow.

tests/tools/data_sources.cpp drives TFRecordWriter, TFRecordDataset, serialize_example,
parse_single_example and CsvDataset. The peers: TensorBoard's TFRecord writer (RecordWriter)
and its CRC-checking record reader, the `tfrecord` package's tf.train.Example classes (generated
from TensorFlow's example.proto and feature.proto) and writer, Python's gzip, zlib and csv.
"""

import csv
import gzip
import io
import json
import subprocess
import zlib

import numpy as np
import pytest
from tensorboard.compat.tensorflow_stub import errors as tb_errors
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow
from tensorboard.summary.writer.record_writer import RecordWriter
from tfrecord import example_pb2
from tfrecord.writer import TFRecordWriter as PeerExampleWriter

from kerascpp_binaries import find_binary  # noqa: E402

COMPRESSIONS = ["none", "GZIP", "ZLIB"]
# An empty record, short ones, one over the 64 KiB read buffer, bytes of every value.
PAYLOADS = [b"", b"a", b"\x1a\x11CRC test, one two", bytes(range(256)) * 300, b"\n\r\x00 tail"]


def tool(*args):
    result = subprocess.run([find_binary("data_sources"), *map(str, args)], capture_output=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def write_json(path, value):
    path.write_text(json.dumps(value))
    return path


def tensorboard_bytes(payloads):
    buf = io.BytesIO()
    writer = RecordWriter(buf)
    for p in payloads:
        writer.write(p)
    return buf.getvalue()


def compress(raw, compression):
    return {"none": lambda b: b, "GZIP": gzip.compress, "ZLIB": zlib.compress}[compression](raw)


def decompress(raw, compression):
    return {"none": lambda b: b, "GZIP": gzip.decompress, "ZLIB": zlib.decompress}[compression](raw)


def records_via_tensorboard_reader(path):
    """The records of a plain TFRecord file, through TensorBoard's reader (raises on a bad CRC)."""
    reader = pywrap_tensorflow.PyRecordReader_New(str(path).encode(), 0, b"", None)
    records = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            return records
        records.append(reader.record())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_our_framing_and_masked_crcs_are_byte_equal_to_tensorboards(tmp_path, compression):
    path = tmp_path / "ours.tfrecord"
    tool("write_records", path, compression, write_json(tmp_path / "in.json", [p.hex() for p in PAYLOADS]))
    written = path.read_bytes()
    if compression == "GZIP":
        assert written[:2] == b"\x1f\x8b"
    if compression == "ZLIB":
        assert written[0] == 0x78
    assert decompress(written, compression) == tensorboard_bytes(PAYLOADS)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_we_read_records_tensorboard_wrote(tmp_path, compression):
    path = tmp_path / "theirs.tfrecord"
    path.write_bytes(compress(tensorboard_bytes(PAYLOADS), compression))
    assert [bytes.fromhex(h) for h in json.loads(tool("read_records", compression, path))] == PAYLOADS


def test_tensorboards_reader_accepts_our_records(tmp_path):
    path = tmp_path / "ours.tfrecord"
    tool("write_records", path, "none", write_json(tmp_path / "in.json", [p.hex() for p in PAYLOADS]))
    assert records_via_tensorboard_reader(path) == PAYLOADS


def test_a_corrupted_record_from_tensorboard_names_its_index_and_offset(tmp_path):
    raw = bytearray(tensorboard_bytes(PAYLOADS[:3]))
    second = 12 + len(PAYLOADS[0]) + 4  # byte offset of record 1
    raw[second + 12] ^= 0x40  # its first data byte
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(raw))
    result = subprocess.run([find_binary("data_sources"), "read_records", "none", str(path)], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert str(path) in result.stderr
    assert f"record 1 (counting from 0) at byte offset {second}" in result.stderr
    assert "data CRC mismatch" in result.stderr


def peer_examples():
    """tf.train.Examples built with TensorFlow's generated classes, and the values they hold."""
    rng = np.random.default_rng(46)
    examples = []
    for i in range(5):
        image = rng.integers(0, 256, size=12, dtype=np.uint8).tobytes()
        e = example_pb2.Example()
        f = e.features.feature
        f["image"].bytes_list.value.append(image)
        f["label"].int64_list.value.append(i - 2 if i != 3 else -(2**40))
        f["position"].float_list.value.extend(rng.standard_normal(6).astype(np.float32).tolist())
        f["tags"].int64_list.value.extend(range(i))  # 0..4 values: a VarLenFeature
        if i % 2 == 0:
            f["weight"].float_list.value.append(0.25 * i)  # missing from odd examples: the default
        examples.append(e)
    return examples


SPEC = {
    "image": {"kind": "fixed", "dtype": "bytes", "shape": []},
    "label": {"kind": "fixed", "dtype": "int64", "shape": []},
    "position": {"kind": "fixed", "dtype": "float32", "shape": [2, 3]},
    "tags": {"kind": "var", "dtype": "int64"},
    "weight": {"kind": "fixed", "dtype": "float32", "shape": [], "default": [-1.0]},
}


def check_parsed(parsed, examples):
    assert len(parsed) == len(examples)
    for row, e in zip(parsed, examples):
        f = e.features.feature
        assert bytes.fromhex(row["image"]["values"]) == f["image"].bytes_list.value[0]
        assert row["image"]["dtype"] == "uint8" and row["image"]["shape"] == [12]
        assert row["label"] == {"dtype": "int64", "shape": [], "values": [f["label"].int64_list.value[0]]}
        assert row["position"]["shape"] == [2, 3]
        assert np.array_equal(np.float32(row["position"]["values"]), np.float32(f["position"].float_list.value))
        assert row["tags"]["values"] == list(f["tags"].int64_list.value)
        assert row["tags"]["shape"] == [len(f["tags"].int64_list.value)]
        weight = f["weight"].float_list.value[0] if "weight" in f else -1.0
        assert row["weight"]["values"] == [weight]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_examples_from_tensorflows_protos_parse_in_kerascpp(tmp_path, compression):
    examples = peer_examples()
    path = tmp_path / "examples.tfrecord"
    path.write_bytes(compress(tensorboard_bytes([e.SerializeToString() for e in examples]), compression))
    check_parsed(json.loads(tool("read_examples", compression, json.dumps(SPEC), path)), examples)


def test_examples_from_the_tfrecord_packages_writer_parse_in_kerascpp(tmp_path):
    path = tmp_path / "peer.tfrecord"
    writer = PeerExampleWriter(str(path))
    rows = [(3, [0.5, -1.5]), (-7, [2.0, 4.0])]
    for label, xy in rows:
        writer.write({"label": (label, "int"), "xy": (xy, "float"), "name": (b"row%d" % label, "byte")})
    writer.close()
    spec = {"label": {"kind": "fixed", "dtype": "int64", "shape": []},
            "xy": {"kind": "fixed", "dtype": "float32", "shape": [2]},
            "name": {"kind": "fixed", "dtype": "bytes", "shape": []}}
    parsed = json.loads(tool("read_examples", "none", json.dumps(spec), path))
    assert [(r["label"]["values"][0], r["xy"]["values"], bytes.fromhex(r["name"]["values"])) for r in parsed] == [
        (label, xy, b"row%d" % label) for label, xy in rows]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_examples_we_write_parse_with_tensorflows_protos(tmp_path, compression):
    ours = [
        {"x": {"dtype": "float32", "shape": [3], "values": [0.5, -2.25, 1e-3]},
         "y": {"dtype": "int64", "shape": [], "values": [2**41 + 3]},
         "raw": {"dtype": "bytes", "values": bytes([0, 255, 10, 13]).hex()}},
        {"x": {"dtype": "float32", "shape": [3], "values": [7.0, 8.0, 9.0]},
         "y": {"dtype": "int64", "shape": [], "values": [-1]},
         "raw": {"dtype": "bytes", "values": ""}},
    ]
    path = tmp_path / "ours.tfrecord"
    tool("write_examples", path, compression, write_json(tmp_path / "in.json", ours))
    plain = tmp_path / "plain.tfrecord"
    plain.write_bytes(decompress(path.read_bytes(), compression))
    records = records_via_tensorboard_reader(plain)  # checks every CRC
    assert len(records) == len(ours)
    for record, want in zip(records, ours):
        f = example_pb2.Example.FromString(record).features.feature
        assert set(f.keys()) == {"x", "y", "raw"}
        assert np.array_equal(np.float32(f["x"].float_list.value), np.float32(want["x"]["values"]))
        assert list(f["y"].int64_list.value) == want["y"]["values"]
        assert list(f["raw"].bytes_list.value) == [bytes.fromhex(want["raw"]["values"])]


def test_csv_written_by_pythons_csv_module_reads_back(tmp_path):
    rows = [
        ["plain", "with, comma", 'with "quotes"'],
        ["line\nbreak", "", "crlf\r\ninside"],
        ["  spaces  ", '"', "ünïcödé"],
        ["a" * 70000, "x", "y"],  # a field longer than the read buffer
    ]
    path = tmp_path / "peer.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)  # QUOTE_MINIMAL, "\r\n" line ends: RFC 4180
    parsed = json.loads(tool("read_csv", 3, path))
    assert [[bytes.fromhex(v).decode() for v in row] for row in parsed] == rows
