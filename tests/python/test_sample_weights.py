"""Per-example weights (sample_weight) and class_weight against Keras 3 and NumPy.

tests/tools/sample_weight_steps.cpp builds a two-Dense softmax classifier, evaluates it on
(x, y, sample_weight) in batches of 5, trains it 20 SGD steps with the weights and, from the same
start, 5 epochs of fit(class_weight=...), and writes everything down. Here:
(a) Keras 3 (numpy backend) rebuilds the model from kerascpp's JSON, loads the weights, and its
    evaluate(x, y, sample_weight=sw, batch_size=5) with metrics=["accuracy"] and
    weighted_metrics=["accuracy"] gives the loss and both accuracies kerascpp reports;
(b) a float64 NumPy reference of the steps (Keras' sum_over_batch_size: Σ w·loss / N, so each
    example's gradient is scaled by its weight; class_weight looked up from the labels) gives the
    same weights and losses, on one replica and under MirroredStrategy with 2 CPU replicas.
"""

import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import tanh_softmax_reference  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402

LR, MOMENTUM, STEPS, CW_EPOCHS = 0.1, 0.9, 20, 5
CLASS_WEIGHT = {0: 0.5, 2: 2.5}


def _run(directory, replicas):
    result = subprocess.run([find_binary("sample_weight_steps"), str(directory), str(replicas)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(directory, "result.json")) as f:
        out = json.load(f)
    read = lambda name, shape: np.fromfile(os.path.join(directory, name), dtype="<f4").reshape(shape)  # noqa: E731
    out["x"] = read("x.f32", (16, 6))
    out["y"] = read("y.f32", (16,)).astype(np.int64)
    out["sw"] = read("sw.f32", (16,))
    for suffix in ("initial", "final", "cw"):
        out[suffix] = [read(f"w{i}_{suffix}.f32", s).astype(np.float64) for i, s in enumerate(out["shapes"])]
    return out


def _sgd(initial, x, y, sw, steps):
    w = [v.copy() for v in initial]
    velocity = [np.zeros_like(v) for v in w]
    losses = []
    for _ in range(steps):
        loss, grads = tanh_softmax_reference.loss_and_grads(w, x, y, sw)
        losses.append(loss)
        for i, g in enumerate(grads):
            velocity[i] = MOMENTUM * velocity[i] - LR * g
            w[i] = w[i] + velocity[i]
    return w, losses


@pytest.mark.parametrize("replicas", [1, 2])
def test_weighted_sgd_steps_match_a_numpy_reference(tmp_path, replicas):
    out = _run(tmp_path, replicas)
    x, y, sw = out["x"].astype(np.float64), out["y"], out["sw"].astype(np.float64)
    expected_w, expected_losses = _sgd(out["initial"], x, y, sw, STEPS)
    np.testing.assert_allclose(out["train_losses"], expected_losses, rtol=0, atol=1e-5)
    for got, want in zip(out["final"], expected_w):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    # The weights matter: the unweighted run ends elsewhere.
    unweighted, _ = _sgd(out["initial"], x, y, np.ones_like(sw), STEPS)
    assert max(np.abs(a - b).max() for a, b in zip(unweighted, expected_w)) > 1e-2

    # class_weight: each example weighs its class's weight (1 for class 1, not listed).
    cw = np.array([CLASS_WEIGHT.get(int(label), 1.0) for label in y])
    expected_cw, expected_cw_losses = _sgd(out["initial"], x, y, cw, CW_EPOCHS)
    np.testing.assert_allclose(out["cw_losses"], expected_cw_losses, rtol=0, atol=1e-5)
    for got, want in zip(out["cw"], expected_cw):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_keras_evaluate_with_sample_weight_reports_the_same_loss_and_metrics(tmp_path):
    out = _run(tmp_path, 1)
    keras.backend.clear_session()
    with open(tmp_path / "model.json") as f:
        model = keras.models.model_from_json(f.read())
    model.load_weights(str(tmp_path / "initial.weights.h5"))
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  weighted_metrics=["accuracy"])
    logs = model.evaluate(out["x"], out["y"], sample_weight=out["sw"], batch_size=5, verbose=0, return_dict=True)
    # Keras' names: the weighted "accuracy" is logged as weighted_accuracy beside the plain one.
    assert set(logs) == {"loss", "accuracy", "weighted_accuracy"}
    for key in logs:
        assert out["eval"][key] == pytest.approx(float(logs[key]), abs=1e-6), key
    # The two accuracies differ on this data, so the comparison tells them apart.
    assert abs(out["eval"]["accuracy"] - out["eval"]["weighted_accuracy"]) > 1e-3
    # And the loss is Keras' compute_loss on the whole batch with the weights (Σ w·loss / N).
    y_pred = model.predict(out["x"], verbose=0)
    whole = float(model.compute_loss(x=out["x"], y=out["y"], y_pred=y_pred, sample_weight=out["sw"]))
    expected_first = tanh_softmax_reference.loss_and_grads(out["initial"], out["x"].astype(np.float64), out["y"],
                                                           out["sw"].astype(np.float64))[0]
    assert whole == pytest.approx(expected_first, abs=1e-5)
    assert out["train_losses"][0] == pytest.approx(whole, abs=1e-5)
