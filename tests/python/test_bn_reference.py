"""BatchNormalization trained against a float64 Keras reference (issue 10).

The same Conv2D-BN-ReLU network (+ Flatten, Dense softmax) starts from the same weights (written
by Keras as init.weights.h5) and takes the same SGD steps on the same batches in
  * Keras float64 (jax backend with JAX_ENABLE_X64): the reference,
  * Keras float32: what "as good as Keras" means,
  * kerascpp (tests/tools/bn_reference.cpp), with 1 and with 2 threads.
kerascpp must end within 3x Keras float32's distance (max |dw| over every variable) from the
reference, with either thread count. The BN layer sees batch 64 of 26x26 = 43,264
rows per step, the issue's case. The images are bright and low-contrast (pixels 0.9 ± 0.05, as
unnormalised photos of a bright scene are), so every channel's mean is large against its spread:
the case where float sums of the BN statistics lose their digits.

Keras runs in a subprocess (this file run as a script): the numpy backend the other peer tests
use cannot train, and float64 on jax needs JAX_ENABLE_X64 before jax is imported. With the
BatchNormalization of before issue 10 (float sums in oneDNN's fused primitive) kerascpp ended
5.9x Keras float32's distance here.
"""

import os
import subprocess
import sys

import numpy as np

STEPS, BATCH, LEARNING_RATE, SIDE = 32, 64, 0.05, 28
# The Keras layer names kerascpp gives the same layers (a fresh Keras session restarts them).
VARIABLES = ["conv2d/vars/0", "conv2d/vars/1", "batch_normalization/vars/0", "batch_normalization/vars/1",
             "batch_normalization/vars/2", "batch_normalization/vars/3", "dense/vars/0", "dense/vars/1"]


def _keras_model(keras):
    layers = keras.layers
    inputs = keras.Input((SIDE, SIDE, 1))
    x = layers.Conv2D(8, 3)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.Flatten()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def _keras_train(directory):
    """Runs in a subprocess: writes init.weights.h5, then trains from it in float32 and in float64.

    JAX_ENABLE_X64 is set for the whole process (without it jax computes float64 layers in float32);
    the float32 run gives the same bits with and without it.
    """
    import keras

    init = os.path.join(directory, "init.weights.h5")
    x = np.fromfile(os.path.join(directory, "x.f32"), "<f4").reshape(STEPS * BATCH, SIDE, SIDE, 1)
    y = np.fromfile(os.path.join(directory, "y.i32"), "<i4")
    for floatx in ("float32", "float64"):
        keras.backend.clear_session()  # restarts the automatic layer names: conv2d, batch_normalization, ...
        keras.config.set_floatx(floatx)
        keras.utils.set_random_seed(3)
        model = _keras_model(keras)
        if floatx == "float32":
            model.save_weights(init)
        model.load_weights(init)
        model.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE), loss="sparse_categorical_crossentropy")
        model.fit(x.astype(floatx), y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        assert all(str(v.dtype) == floatx for v in model.weights), [v.dtype for v in model.weights]
        model.save_weights(os.path.join(directory, f"final_{floatx}.weights.h5"))


def _keras(directory):
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1")
    return subprocess.Popen([sys.executable, __file__, str(directory)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _kerascpp(directory, threads):
    from kerascpp_binaries import find_binary

    return subprocess.Popen([find_binary("bn_reference"), str(directory), str(STEPS), str(BATCH),
                             str(LEARNING_RATE), str(threads)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait(process, what):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, f"{what} failed ({process.returncode}):\n{out}\n{err}"


def _weights(path):
    import h5py

    with h5py.File(path, "r") as f:
        return {name: np.asarray(f["layers/" + name], dtype=np.float64) for name in VARIABLES}


def _max_abs_diff(a, b):
    return max(float(np.max(np.abs(a[name] - b[name]))) for name in VARIABLES)


def test_bn_training_ends_as_close_to_float64_keras_as_float32_keras(tmp_path):
    rng = np.random.default_rng(10)
    # Bright, low-contrast images with labels the network can learn (a class's pixels are lighter
    # in one band of rows), so the steps are a real descent, not noise.
    labels = rng.integers(0, 10, STEPS * BATCH).astype("<i4")
    images = 0.9 + 0.05 * rng.standard_normal((STEPS * BATCH, SIDE, SIDE, 1))
    for k in range(10):
        images[labels == k, 2 * k + 3:2 * k + 6] += 0.03
    images.astype("<f4").tofile(tmp_path / "x.f32")
    labels.tofile(tmp_path / "y.i32")

    _wait(_keras(tmp_path), "Keras")
    runs = {threads: _kerascpp(tmp_path, threads) for threads in (1, 2)}
    for threads, process in runs.items():
        _wait(process, f"bn_reference with {threads} thread(s)")

    reference = _weights(tmp_path / "final_float64.weights.h5")
    keras32 = _max_abs_diff(_weights(tmp_path / "final_float32.weights.h5"), reference)
    moved = _max_abs_diff(_weights(tmp_path / "init.weights.h5"), reference)
    ours = {threads: _weights(tmp_path / f"final_t{threads}.weights.h5") for threads in runs}
    distance = {threads: _max_abs_diff(weights, reference) for threads, weights in ours.items()}
    print(f"\nmax |dw| from Keras float64 after {STEPS} steps: Keras float32 {keras32:.3g}, kerascpp "
          + ", ".join(f"{d:.3g} ({threads} thread(s), ratio {d / keras32:.3g})" for threads, d in distance.items())
          + f"; the weights moved {moved:.3g}; kerascpp 1 vs 2 threads {_max_abs_diff(ours[1], ours[2]):.3g}")
    # Not a degenerate comparison: training moved the weights far more than the distances measured.
    assert moved > 100 * max(keras32, *distance.values())
    for threads, d in distance.items():
        assert d <= 3 * keras32, f"kerascpp with {threads} thread(s) ends {d:.3g} from float64 Keras"
    # 1 and 2 threads are not compared bit for bit here: oneDNN's convolution weight gradient
    # changes with the thread count (BatchNormalization does not: tests/test_bn_numerics.cpp).

if __name__ == "__main__":
    _keras_train(sys.argv[1])
