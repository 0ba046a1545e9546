"""kerascpp's Nadam against Keras 3's: 20 steps of apply_gradients (numpy backend), and its state
(slots, u_product) in a weights file loaded both ways."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

STEPS, SIZE = 20, 9


@pytest.mark.parametrize("lr,b1,b2,eps", [(0.001, 0.9, 0.999, 1e-7), (0.05, 0.8, 0.99, 1e-4)])
def test_nadam_equals_keras_apply_gradients(lr, b1, b2, eps):
    rng = np.random.default_rng(4)
    init = rng.normal(size=SIZE).astype(np.float32)
    grads = rng.normal(size=(STEPS, SIZE)).astype(np.float32)
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([init, grads.ravel()]))
    out = subprocess.run([find_binary("nadam_steps"), str(lr), str(b1), str(b2), str(eps), str(STEPS), str(SIZE)],
                         input=stdin, capture_output=True, text=True, timeout=60, check=True).stdout
    values = np.array([float(v) for v in out.split()])
    ours, ours_u = values[:SIZE], values[SIZE]

    opt = keras.optimizers.Nadam(learning_rate=lr, beta_1=b1, beta_2=b2, epsilon=eps)
    var = keras.Variable(init.copy())
    for g in grads:
        opt.apply_gradients([(g, var)])
    want = np.asarray(var.numpy(), np.float64)
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-5)
    assert ours_u == pytest.approx(float(opt._u_product.numpy()), rel=1e-6)
    assert np.max(np.abs(want - init)) > 1e-3  # Keras really moved the variable


def _keras_dense_model():
    keras.backend.clear_session()  # Keras' automatic names (dense) match kerascpp's
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(3)(inputs))
    model.compile(optimizer=keras.optimizers.Nadam(0.01), loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


def _nadam_weights(*args):
    out = subprocess.run([find_binary("nadam_weights"), *map(str, args)], capture_output=True, text=True, timeout=60,
                         check=True).stdout.split()
    return int(out[1]), float(out[3])


def test_nadam_state_file_loads_into_keras_and_back(tmp_path):
    import warnings

    iterations, u_product = _nadam_weights("save", tmp_path)
    assert iterations == 3 and 0 < u_product < 1
    model = _keras_dense_model()
    with warnings.catch_warnings():  # Keras reports a mismatch of optimizer variables only as a warning
        warnings.simplefilter("error", UserWarning)
        model.load_weights(str(tmp_path / "model.weights.h5"))
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) == 3
    assert float(keras.ops.convert_to_numpy(model.optimizer._u_product)) == pytest.approx(u_product, rel=1e-7)
    # And Keras' own state back into kerascpp: two more Keras steps move iterations and u_product.
    rng = np.random.default_rng(7)
    for _ in range(2):
        grads = [rng.normal(size=tuple(v.shape)).astype(np.float32) for v in model.trainable_variables]
        model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
    model.save_weights(str(tmp_path / "model.weights.h5"))
    loaded_iterations, loaded_u = _nadam_weights("load", tmp_path)
    assert loaded_iterations == 5
    assert loaded_u == pytest.approx(float(keras.ops.convert_to_numpy(model.optimizer._u_product)), rel=1e-7)
    assert loaded_u < u_product
