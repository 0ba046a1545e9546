"""kerascpp's Nadam against Keras 3's Nadam.apply_gradients (numpy backend) over 20 steps."""
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
