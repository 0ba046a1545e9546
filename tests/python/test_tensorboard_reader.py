"""kerascpp's event files, read back by TensorBoard's own code.

tests/tools/write_events.cpp writes a train and a validation run the way Keras's TensorBoard
callback does and prints the values it wrote; here TensorBoard's readers must find exactly
those values: the EventAccumulator (tensors), the data provider behind the dashboards
(scalars, histograms, the Keras model graph), and the record reader with its CRC checks.
"""

import glob
import json
import os
import re
import subprocess

import numpy as np
import pytest

from tensorboard.backend.event_processing import data_provider
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub import errors as tb_errors
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow
from tensorboard.context import RequestContext
from tensorboard.util import tensor_util
from kerascpp_binaries import find_binary  # noqa: E402


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("tb_logs")
    result = subprocess.run([find_binary("write_events", "KERASCPP_WRITE_EVENTS"), str(log_dir)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return str(log_dir), json.loads(result.stdout)


def _accumulator(run_dir):
    # size_guidance 0 keeps every event instead of reservoir-sampling them.
    guidance = {key: 0 for key in event_accumulator.DEFAULT_SIZE_GUIDANCE}
    acc = event_accumulator.EventAccumulator(run_dir, size_guidance=guidance)
    acc.Reload()
    return acc


def _close(actual, expected):
    # Scalars are stored as float32, like tf.summary.scalar does.
    return actual == pytest.approx(expected, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("run", ["train", "validation"])
def test_files_pass_tensorboards_record_reader_and_crc_checks(written, run):
    log_dir, expected = written
    files = glob.glob(os.path.join(log_dir, run, "*"))
    assert files == [expected[run]["path"]]
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+\.v2",
                        os.path.basename(files[0]))
    # The stub reader raises DataLossError on a bad length or data CRC or a torn record.
    reader = pywrap_tensorflow.PyRecordReader_New(files[0].encode(), 0, b"", None)
    events = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            break
        events.append(event_pb2.Event.FromString(reader.record()))
    assert events[0].file_version == "brain.Event:2"
    assert events[0].wall_time > 1.5e9
    scalar_count = sum(len(series) for series in expected[run]["scalars"].values())
    extra = 1 + 3 if run == "train" else 0  # model config + one histogram per epoch
    assert len(events) == 1 + scalar_count + extra
    assert all(e.wall_time >= events[0].wall_time for e in events)


@pytest.mark.parametrize("run", ["train", "validation"])
def test_event_accumulator_reads_every_scalar(written, run):
    log_dir, expected = written
    acc = _accumulator(os.path.join(log_dir, run))
    assert acc.file_version == 2.0
    scalars = expected[run]["scalars"]
    assert set(acc.PluginTagToContent("scalars")) == set(scalars)
    for tag, series in scalars.items():
        events = acc.Tensors(tag)
        assert [e.step for e in events] == [step for step, _ in series], tag
        for event, (_, value) in zip(events, series):
            array = tensor_util.make_ndarray(event.tensor_proto)
            assert array.shape == () and array.dtype == np.float32, tag
            assert _close(float(array), value), (tag, float(array), value)


def _provider(log_dir):
    multiplexer = plugin_event_multiplexer.EventMultiplexer(size_guidance={"tensors": 0})
    multiplexer.AddRunsFromDirectory(log_dir)
    multiplexer.Reload()
    return data_provider.MultiplexerDataProvider(multiplexer, log_dir)


def test_scalars_dashboard_data(written):
    log_dir, expected = written
    provider = _provider(log_dir)
    ctx = RequestContext()
    runs = sorted(r.run_name for r in provider.list_runs(ctx, experiment_id=""))
    assert runs == ["train", "validation"]
    data = provider.read_scalars(ctx, experiment_id="", plugin_name="scalars", downsample=1000)
    for run in ("train", "validation"):
        assert set(data[run]) == set(expected[run]["scalars"])
        for tag, series in expected[run]["scalars"].items():
            got = [(d.step, d.value) for d in data[run][tag]]
            assert [s for s, _ in got] == [s for s, _ in series], (run, tag)
            assert all(_close(v, e) for (_, v), (_, e) in zip(got, series)), (run, tag, got)


def _tf_buckets(values, bucket_count):
    # tensorboard/plugins/histogram/summary_v2.py's bucketing, in numpy.
    values = np.asarray(values, dtype=np.float64)
    lo, hi = values.min(), values.max()
    width = (hi - lo) / bucket_count
    indices = np.minimum(np.floor((values - lo) / width).astype(int), bucket_count - 1)
    return np.bincount(indices, minlength=bucket_count).astype(np.float64), lo, hi


def test_histograms_dashboard_data(written):
    log_dir, expected = written
    hist = expected["train"]["histograms"]["dense/kernel/histogram"]
    acc = _accumulator(os.path.join(log_dir, "train"))
    assert "dense/kernel/histogram" in acc.PluginTagToContent("histograms")
    assert "dense/kernel/histogram" in acc.Tags()["tensors"]

    data = _provider(log_dir).read_tensors(RequestContext(), experiment_id="",
                                           plugin_name="histograms", downsample=1000)
    assert set(data) == {"train"}
    series = data["train"]["dense/kernel/histogram"]
    assert [d.step for d in series] == list(range(len(hist["values"])))
    for datum, values in zip(series, hist["values"]):
        rows = datum.numpy
        assert rows.shape == (hist["buckets"], 3) and rows.dtype == np.float64
        counts, lo, hi = _tf_buckets(np.float32(values), hist["buckets"])
        assert rows[:, 2].sum() == len(values)
        np.testing.assert_array_equal(rows[:, 2], counts)
        assert rows[0, 0] == pytest.approx(lo) and rows[-1, 1] == pytest.approx(hi)
        np.testing.assert_allclose(rows[1:, 0], rows[:-1, 1])


def test_keras_model_graph(written):
    log_dir, expected = written
    acc = _accumulator(os.path.join(log_dir, "train"))
    assert acc.PluginTagToContent("graph_keras_model") == {"keras": b"1"}
    (event,) = acc.Tensors("keras")
    assert event.step == 0
    assert event.tensor_proto.string_val[0].decode() == expected["train"]["keras_model_config"]

    # What the graphs dashboard does: list the blob sequence, then fetch the blob.
    provider = _provider(log_dir)
    ctx = RequestContext()
    blobs = provider.read_blob_sequences(ctx, experiment_id="", plugin_name="graph_keras_model",
                                         downsample=10)
    (datum,) = blobs["train"]["keras"]
    (blob_ref,) = datum.values
    config = provider.read_blob(ctx, blob_key=blob_ref.blob_key)
    assert json.loads(config) == json.loads(expected["train"]["keras_model_config"])
    assert "validation" not in blobs or not blobs["validation"]
