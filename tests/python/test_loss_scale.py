"""LossScaleOptimizer against Keras 3's, and its state in Keras' weights-file layout.

tests/tools/loss_scale_steps.cpp trains Input(4) -> Dense(6, relu, L2 kernel) -> Dense(3) with MSE
20 steps with LossScaleOptimizer(Adam(0.01), initial_scale=1024, dynamic_growth_steps=3); batches 4
and 11 hold a 1e36 row, whose gradients overflow: those steps are skipped and halve the scale. Keras
3 trains the same model from the same weights on its JAX backend (in a subprocess: the peers run on
the numpy backend, which cannot train). Checked: every step's (unscaled) loss, the weights, and
Keras loading kerascpp's weights file (optimizer state included, no warning: Keras' layout with
step_counter, dynamic_scale and the inner_optimizer group) and kerascpp loading Keras', on one replica
and on 2 CPU replicas.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402

STEPS, BATCH, OVERFLOW_STEPS = 20, 8, (4, 11)

_MODEL = """
import keras
def build():
    keras.backend.clear_session()  # Keras' automatic names (dense, dense_1) match kerascpp's
    inputs = keras.Input((4,))
    h = keras.layers.Dense(6, activation="relu", kernel_regularizer=keras.regularizers.L2(0.01))(inputs)
    return keras.Model(inputs, keras.layers.Dense(3)(h))
def optimizer():
    return keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=1024.0,
                                               dynamic_growth_steps=3)
"""
exec(_MODEL)  # build() and optimizer() here too  # noqa: S102

_JAX_TRAIN = _MODEL + """
import sys
import numpy as np
d = sys.argv[1]
model = build()
model.load_weights(d + "/initial.weights.h5")
model.compile(optimizer=optimizer(), loss="mse")
x, y = np.load(d + "/x.npy"), np.load(d + "/y.npy")
losses = [float(model.train_on_batch(x[k], y[k])) for k in range(len(x))]
np.save(d + "/keras_losses.npy", np.array(losses))
model.save_weights(d + "/keras_trained.weights.h5")
opt = model.optimizer
print(float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy()), int(opt.iterations.numpy()))
"""


def _data(tmp_path):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(STEPS, BATCH, 4)).astype(np.float32)
    y = rng.normal(size=(STEPS, BATCH, 3)).astype(np.float32)
    for k in OVERFLOW_STEPS:
        x[k, -1, :] = 1e36
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    x.tofile(tmp_path / "x.f32")
    y.tofile(tmp_path / "y.f32")
    model = build()
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    model.save_weights(str(tmp_path / "initial.weights.h5"))
    return model


def _keras_train(tmp_path):
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, "-c", _JAX_TRAIN, str(tmp_path)], capture_output=True, text=True,
                            timeout=300, env=env, check=False)
    assert result.returncode == 0, result.stderr
    scale, counter, iterations = result.stdout.split()[-3:]
    return float(scale), int(counter), int(iterations), np.load(tmp_path / "keras_losses.npy")


@pytest.mark.parametrize("replicas", [1, 2])
def test_loss_scale_optimizer_matches_keras(tmp_path, replicas):
    pytest.importorskip("jax")
    binary = find_binary("loss_scale_steps")
    model = _data(tmp_path)
    scale, counter, iterations, keras_losses = _keras_train(tmp_path)
    # Keras skipped the two overflowing steps and halved the scale for each: the test means something.
    assert iterations == STEPS - len(OVERFLOW_STEPS)
    assert scale < 1024.0 * 2 ** ((STEPS - len(OVERFLOW_STEPS)) // 3)

    out = subprocess.run([binary, str(tmp_path), str(replicas), str(STEPS)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    losses = np.array([float(v) for v in lines[:STEPS]])
    final = lines[STEPS].split()
    assert (float(final[1]), int(final[3]), int(final[5])) == (scale, counter, iterations)
    finite = np.isfinite(keras_losses)
    np.testing.assert_array_equal(np.isfinite(losses), finite)
    np.testing.assert_allclose(losses[finite], keras_losses[finite], rtol=1e-5, atol=1e-6)

    model.load_weights(str(tmp_path / "keras_trained.weights.h5"))
    expected = model.get_weights()
    # kerascpp's file into a Keras model compiled the same way: weights and optimizer state, no warning.
    model.compile(optimizer=optimizer(), loss="mse")
    model.optimizer.build(model.trainable_variables)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.load_weights(str(tmp_path / "trained.weights.h5"))
    for got, want in zip(model.get_weights(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    opt = model.optimizer
    assert float(keras.ops.convert_to_numpy(opt.dynamic_scale)) == scale
    assert int(keras.ops.convert_to_numpy(opt.step_counter)) == counter
    assert int(keras.ops.convert_to_numpy(opt.iterations)) == iterations

    # And Keras' file (its JAX backend writes the counters as int32) into kerascpp: the same state.
    back = subprocess.run([binary, str(tmp_path), str(replicas), "0", str(tmp_path / "keras_trained.weights.h5")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert back.returncode == 0, back.stderr
    final = back.stdout.split()
    assert (float(final[1]), int(final[3]), int(final[5])) == (scale, counter, iterations)
