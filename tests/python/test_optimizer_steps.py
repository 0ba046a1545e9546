"""kerascpp's optimizers and Keras' common optimizer options against Keras 3 (numpy backend): each
optimizer, built from keras.optimizers.serialize, takes the same steps on the same two variables as
Keras' apply_gradients (final values and every optimizer variable within 1e-5 relative); its
serialization rebuilds the same Keras optimizer; and its state moves through a .weights.h5 file
both ways."""
import json
import os
import subprocess
import warnings

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

STEPS = 7
SHAPES = [(3, 4), (5,)]
O = keras.optimizers

CASES = {
    "adamax": lambda: O.Adamax(learning_rate=0.02, beta_1=0.8, beta_2=0.95, epsilon=1e-4),
    "adadelta": lambda: O.Adadelta(learning_rate=1.0, rho=0.9, epsilon=1e-6),
    "ftrl": lambda: O.Ftrl(learning_rate=0.1, initial_accumulator_value=0.2, l1_regularization_strength=0.01,
                           l2_regularization_strength=0.02, l2_shrinkage_regularization_strength=0.01, beta=0.1),
    "ftrl_power": lambda: O.Ftrl(learning_rate=0.2, learning_rate_power=-0.3),
    "lion": lambda: O.Lion(learning_rate=0.01, beta_1=0.8, beta_2=0.95),
    "lamb": lambda: O.Lamb(learning_rate=0.01, beta_1=0.85, beta_2=0.99, epsilon=1e-5),
    "schedule_free_adamw": lambda: O.ScheduleFreeAdamW(learning_rate=0.05, beta_1=0.85, beta_2=0.99, epsilon=1e-6,
                                                       warmup_steps=3),
    # Keras' common options, several at once.
    "sgd_decay_clipvalue_scale": lambda: O.SGD(learning_rate=0.05, momentum=0.9, weight_decay=0.1, clipvalue=0.5,
                                               loss_scale_factor=8.0),
    "adam_ema_accumulation": lambda: O.Adam(learning_rate=0.01, use_ema=True, ema_momentum=0.9,
                                            ema_overwrite_frequency=3, gradient_accumulation_steps=3,
                                            global_clipnorm=1.0),
    "lion_decay_ema_accumulation": lambda: O.Lion(learning_rate=0.01, weight_decay=0.1, use_ema=True,
                                                  gradient_accumulation_steps=2, clipnorm=0.5),
    "adamw_clipvalue_ema": lambda: O.AdamW(learning_rate=0.01, weight_decay=0.1, clipvalue=0.2, use_ema=True),
    "nadam_accumulation": lambda: O.Nadam(learning_rate=0.01, gradient_accumulation_steps=2),
    "adadelta_ema_overwrite": lambda: O.Adadelta(learning_rate=5.0, use_ema=True, ema_momentum=0.5,
                                                 ema_overwrite_frequency=2),
}


def _serialized(opt):
    return json.dumps(keras.optimizers.serialize(opt))


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_equal_keras_apply_gradients(case):
    rng = np.random.default_rng(11)
    inits = [rng.normal(size=s).astype(np.float32) for s in SHAPES]
    grads = [[rng.normal(size=s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    opt = CASES[case]()
    config = _serialized(opt)
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([x.ravel() for x in inits] +
                                                        [g.ravel() for step in grads for g in step]))
    out = subprocess.run([find_binary("optimizer_steps"), "steps", config, str(STEPS)], input=stdin,
                         capture_output=True, text=True, timeout=60, check=True).stdout.strip().split("\n")
    ours_values = np.array([float(v) for v in out[0].split()])
    ours_slots = [np.array([float(v) for v in line.split()]) for line in out[1:-1]]
    ours_config = json.loads(out[-1])

    variables = [keras.Variable(x.copy()) for x in inits]
    for step in grads:
        opt.apply_gradients(zip([g.copy() for g in step], variables))
    want = np.concatenate([np.asarray(v.numpy()).ravel() for v in variables])
    _close(ours_values, want)
    assert np.max(np.abs(want - np.concatenate([x.ravel() for x in inits]))) > 1e-3  # Keras really moved them

    keras_slots = [np.asarray(v.numpy()).ravel() for v in opt.variables[2:]]  # after iteration, learning_rate
    assert len(ours_slots) == len(keras_slots)
    for ours, theirs in zip(ours_slots, keras_slots):
        _close(ours, theirs)

    # kerascpp's serialization rebuilds the same Keras optimizer (name aside). Through the class's
    # from_config: Keras 3.15's own deserialize does not know every class (it returns "Lamb").
    assert ours_config["class_name"] == type(opt).__name__
    rebuilt = type(opt).from_config(ours_config["config"]).get_config()
    original = opt.get_config()
    for key in set(original) | set(rebuilt):
        if key != "name":
            assert rebuilt.get(key) == pytest.approx(original.get(key)), key


WEIGHT_CASES = ["adamax", "adadelta", "ftrl", "lion", "lamb", "schedule_free_adamw", "adam_ema_accumulation"]


def _tool(*args):
    out = subprocess.run([find_binary("optimizer_steps"), *map(str, args)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip().split("\n")
    return int(out[0].split()[1]), [np.array([float(v) for v in line.split()]) for line in out[1:]]


@pytest.mark.parametrize("case", WEIGHT_CASES)
def test_state_file_loads_into_keras_and_back(case, tmp_path):
    config = _serialized(CASES[case]())
    iterations, ours = _tool("save", tmp_path, config)
    assert iterations == 4
    keras.backend.clear_session()  # Keras' automatic names (dense) match kerascpp's
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(3)(inputs))
    model.compile(optimizer=CASES[case](), loss="mse")
    model.optimizer.build(model.trainable_variables)
    with warnings.catch_warnings():  # Keras reports a mismatch of optimizer variables only as a warning
        warnings.simplefilter("error", UserWarning)
        model.load_weights(str(tmp_path / "model.weights.h5"))
    # _iterations: the saved count (Keras' `iterations` counts accumulation groups)
    assert int(keras.ops.convert_to_numpy(model.optimizer._iterations)) == 4
    theirs = [np.asarray(v.numpy()).ravel() for v in model.optimizer.variables[2:]]
    assert len(theirs) == len(ours)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.astype(np.float32), b)
    assert any(np.any(t != 0) for t in theirs)
    # Keras' own state back into kerascpp, two steps later.
    rng = np.random.default_rng(5)
    for _ in range(2):
        grads = [rng.normal(size=tuple(v.shape)).astype(np.float32) for v in model.trainable_variables]
        model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
    model.save_weights(str(tmp_path / "model.weights.h5"))
    iterations, loaded = _tool("load", tmp_path, config)
    assert iterations == 6
    for a, v in zip(loaded, model.optimizer.variables[2:]):
        np.testing.assert_array_equal(a.astype(np.float32), np.asarray(v.numpy()).ravel())
