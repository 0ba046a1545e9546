"""What the fashion_mnist example leaves on disk, read by the real peers (TensorBoard, h5py).

(a) TensorBoard's EventAccumulator finds one epoch_* value per epoch in logs/train and
    logs/validation, equal to the History the run printed, plus the Keras model graph.
(b) SIGKILL at random moments never leaves an unreadable backup/latest.weights.h5, and each
    restart resumes from it.
(c) BackupAndRestore is exact: a run killed after its first backup and re-run ends with final
    weights bitwise equal to those of an uninterrupted run.
"""

import os
import random
import re
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util
from kerascpp_binaries import find_binary  # noqa: E402


# The example's MLP: Flatten -> Dense(512) -> Dense(256) -> Dense(10).
_MLP_SHAPES = {"dense": [(784, 512), (512,)], "dense_1": [(512, 256), (256,)], "dense_2": [(256, 10), (10,)]}


def _write_idx(path, array):
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with open(path, "wb") as f:
        f.write(header + array.tobytes())


def _tiny_fashion_mnist(directory, train=640, test=256):
    """IDX files in the Fashion-MNIST layout, small enough for whole epochs in a test."""
    os.makedirs(directory)
    rng = np.random.default_rng(0)
    for prefix, n in (("train", train), ("t10k", test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 64, (n, 28, 28)).astype(np.uint8)
        images[np.arange(n), labels * 2, :] = 255  # learnable: a bright row where the label says
        _write_idx(os.path.join(directory, f"{prefix}-images-idx3-ubyte"), images)
        _write_idx(os.path.join(directory, f"{prefix}-labels-idx1-ubyte"), labels)
    return str(directory)


def _epoch_logs(stdout):
    """The final progress line of every epoch, e.g. "10/10 [==...] - 1s 5ms/step - accuracy: ..."."""
    epochs = []
    for line in stdout.splitlines():
        if re.match(r"^\d+/\d+ \[[=>.]+\] - \d", line) and " - loss: " in line:
            epochs.append({k: float(v) for k, v in re.findall(r" - (\w+): (-?\d+\.\d+|nan|-?inf)", line)})
    return epochs


def _accumulator(run_dir):
    acc = event_accumulator.EventAccumulator(run_dir, size_guidance={"tensors": 0})
    acc.Reload()
    return acc


def _scalars(acc, tag):
    out = []
    for event in acc.Tensors(tag):
        array = tensor_util.make_ndarray(event.tensor_proto)
        assert array.shape == () and array.dtype == np.float32, tag
        out.append((event.step, float(array)))
    return out


@pytest.mark.parametrize("data", ["tiny_idx", "synthetic"])
def test_tensorboard_logs_match_the_printed_history(tmp_path, data):
    model_dir = tmp_path / "model"
    command = [find_binary("fashion_mnist"), "--model", "mlp", "--train_epochs", "2", "--batch_size", "64", "--cpu_replicas", "2",
               "--seed", "5", "--model_dir", str(model_dir)]
    if data == "tiny_idx":
        # Two whole epochs of 10 steps (640 examples), validated on 256.
        command += ["--data_dir", _tiny_fashion_mnist(tmp_path / "data")]
        epochs, iterations = 2, [10, 20]
    else:
        # 60000 synthetic examples: --max_train_steps ends the run inside epoch 1, which is still
        # validated and logged.
        command += ["--use_synthetic_data", "--max_train_steps", "60"]
        epochs, iterations = 1, [60]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    history = _epoch_logs(result.stdout)
    assert len(history) == epochs, result.stdout
    for logs in history:
        assert set(logs) == {"loss", "accuracy", "val_loss", "val_accuracy", "learning_rate"}, logs
    tolerance = 5e-5 + 1e-7  # the progress line rounds to 4 decimals; TensorBoard stores float32

    train = _accumulator(str(model_dir / "logs" / "train"))
    assert set(train.PluginTagToContent("scalars")) == {"epoch_loss", "epoch_accuracy", "epoch_learning_rate"}
    for key in ("loss", "accuracy", "learning_rate"):
        series = _scalars(train, "epoch_" + key)
        assert [step for step, _ in series] == list(range(epochs)), key  # one value per epoch
        for (_, value), logs in zip(series, history):
            assert abs(value - logs[key]) <= tolerance, (key, value, logs[key])
    assert train.PluginTagToContent("graph_keras_model") == {"keras": b"1"}
    # Weight histograms every epoch (--histogram_freq 1 in the example), TF2 form [buckets, 3].
    histogram_tags = set(train.PluginTagToContent("histograms"))
    assert {"dense/kernel/histogram", "dense/bias/histogram", "dense_2/kernel/histogram"} <= histogram_tags
    kernel = train.Tensors("dense/kernel/histogram")
    assert [event.step for event in kernel] == list(range(epochs))
    counts = tensor_util.make_ndarray(kernel[-1].tensor_proto)
    assert counts.shape[1] == 3 and counts[:, 2].sum() == 784 * 512

    validation = _accumulator(str(model_dir / "logs" / "validation"))
    assert set(validation.PluginTagToContent("scalars")) == {
        "epoch_loss", "epoch_accuracy", "evaluation_loss_vs_iterations", "evaluation_accuracy_vs_iterations"}
    for key in ("loss", "accuracy"):
        # evaluation_*_vs_iterations: x axis is the optimizer's iteration count at the epoch's end.
        for tag, steps in (("epoch_" + key, list(range(epochs))), (f"evaluation_{key}_vs_iterations", iterations)):
            series = _scalars(validation, tag)
            assert [step for step, _ in series] == steps, tag
            for (_, value), logs in zip(series, history):
                assert abs(value - logs["val_" + key]) <= tolerance, (tag, value, logs["val_" + key])

    # The other artifacts: a checkpoint per epoch, the final weights, and no backup left behind.
    assert sorted(os.listdir(model_dir / "ckpt")) == [f"e{e + 1:02d}.weights.h5" for e in range(epochs)]
    assert not (model_dir / "backup" / "latest.weights.h5").exists()
    with h5py.File(model_dir / "final.weights.h5", "r") as f:
        assert int(f["optimizer/vars/0"][()]) == iterations[-1]


def _synthetic_command(model_dir, *extra):
    return [find_binary("fashion_mnist"), "--use_synthetic_data", "--model", "mlp", "--train_epochs", "1", "--batch_size", "32",
            "--model_dir", str(model_dir), *extra]


_STEPS_PER_EPOCH = 60000 // 32 + (60000 % 32 > 0)  # synthetic data, --batch_size 32


def _check_backup(path):
    """A backup must be a complete Keras weights file with kerascpp's training state; returns its iteration."""
    with h5py.File(path, "r") as f:
        assert set(_MLP_SHAPES) <= set(f["layers"]), sorted(f["layers"])
        for name, shapes in _MLP_SHAPES.items():
            group = f["layers"][name]["vars"]
            assert len(group) == len(shapes), name
            for i, shape in enumerate(shapes):
                values = group[str(i)][()]
                assert values.shape == shape and values.dtype == np.float32, (name, i)
                assert np.isfinite(values).all(), (name, i)
        optimizer = f["optimizer/vars"]
        assert len(optimizer) == 2 + 2 * 6  # iteration, learning rate, Adam's (m, v) per variable
        iteration = int(optimizer["0"][()])
        epoch = int(f["kerascpp/training_state_epoch"][()])
        step = int(f["kerascpp/training_state_step"][()])
    assert 0 < step <= _STEPS_PER_EPOCH and step % 100 == 0, step  # save_freq = 100 batches
    assert iteration == epoch * _STEPS_PER_EPOCH + step, (iteration, epoch, step)
    return iteration


def test_sigkill_never_leaves_a_broken_backup(tmp_path):
    model_dir = tmp_path / "model"
    backup = model_dir / "backup" / "latest.weights.h5"
    # Steps take milliseconds: enough epochs that no run gets to finish before its kill.
    command = _synthetic_command(model_dir, "--max_train_steps", "1000000")
    command[command.index("--train_epochs") + 1] = "1000"
    rng = random.Random(20240601)
    steps_seen = []
    for kill in range(20):
        with open(tmp_path / "stderr.txt", "wb") as err:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
            time.sleep(rng.uniform(0.3, 3.0))
            exited = process.poll()
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert exited is None, (kill, exited, (tmp_path / "stderr.txt").read_text())
        assert process.returncode == -signal.SIGKILL
        if backup.exists():
            step = _check_backup(backup)
            # Restarts resume: the backup never goes back.
            assert not steps_seen or step >= steps_seen[-1], steps_seen + [step]
            steps_seen.append(step)
        # Whatever else a kill leaves in backup/ is a hidden temporary of the atomic writer.
        for name in os.listdir(backup.parent) if backup.parent.exists() else []:
            assert name == backup.name or re.fullmatch(r"\.latest\.weights\.h5\.tmp\.\d+\.\d+", name), name
    if not steps_seen:
        # A very loaded machine may not reach 100 steps within 3 s: still check one real backup.
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while not backup.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert backup.exists(), "no backup was written within 90 s"
        _check_backup(backup)


def _layers_and_optimizer(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.startswith(("layers/", "optimizer/")):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def test_backup_and_restore_resumes_bit_identically(tmp_path):
    extra = ("--max_train_steps", "250", "--seed", "3")
    straight = subprocess.run(_synthetic_command(tmp_path / "a", *extra), capture_output=True, text=True,
                              timeout=120, check=False)
    assert straight.returncode == 0, straight.stderr

    model_dir = tmp_path / "b"
    backup = model_dir / "backup" / "latest.weights.h5"
    process = subprocess.Popen(_synthetic_command(model_dir, *extra), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not backup.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it was killed"
    assert backup.exists() and _check_backup(backup) == 100
    resumed = subprocess.run(_synthetic_command(model_dir, *extra), capture_output=True, text=True, timeout=120,
                             check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert not backup.exists()  # deleted at the end of a completed fit

    a = _layers_and_optimizer(tmp_path / "a" / "final.weights.h5")
    b = _layers_and_optimizer(model_dir / "final.weights.h5")
    assert sorted(a) == sorted(b)
    assert sum(name.startswith("layers/") for name in a) == 6
    assert int(a["optimizer/vars/0"]) == 250
    differing = [name for name in a if not np.array_equal(a[name], b[name])]
    assert not differing, differing
    # The printed final evaluation agrees as well.
    final = [line for line in straight.stdout.splitlines() if line.startswith("Final evaluation")]
    assert final and final == [line for line in resumed.stdout.splitlines() if line.startswith("Final evaluation")]
