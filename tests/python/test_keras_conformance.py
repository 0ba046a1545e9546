"""Conformance suite against Keras 3 (issue 50): every name of Keras' own catalogue (keras.layers,
keras.activations, keras.losses, keras.metrics, keras.optimizers) must have a row in
docs/catalogue.md, so a new Keras release that adds one fails here rather than leaving a silent
gap. Every row marked supported is then proven by a round trip: Keras (on JAX) builds a tiny
model around it with non-default arguments (keras_conformance_cases.py) and saves it as .keras
with inputs, predictions, the first step's logs and the weights after training; kerascpp
(tests/tools/keras_conformance.cpp) loads it, predicts, trains the same steps and saves it back;
Keras loads kerascpp's file and predicts what kerascpp predicts. Prints the coverage line.
"""
import inspect
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")  # this process only walks names and compares
import keras  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOGUE = os.path.join(HERE, "..", "..", "docs", "catalogue.md")
CASES_SCRIPT = os.path.join(HERE, "keras_conformance_cases.py")
RTOL, ATOL = 1e-5, 1e-6

# Keras' abstract base classes: the custom-extension points, not vocabulary (kerascpp's are
# Layer, losses::Loss, metrics::Metric, optimizers::Optimizer; docs/custom_layers.md).
BASE_CLASSES = {"Layer", "Loss", "Metric", "Optimizer"}

# Supported names a Keras-built .keras file cannot carry to kerascpp, and why.
NOT_ROUND_TRIPPABLE = {
    "Lambda": "Keras saves the Python function's bytecode; kerascpp's Lambda is a registered C++ callable",
    "Wrapper": "abstract base of Bidirectional and TimeDistributed, which have cases of their own",
    # Keras' compile() passes (y_true, y_pred) to update_state(values, sample_weight): Keras cannot
    # compile a model with them, so no Keras-built file holds them.
    "Mean": "Keras' compile() cannot take it (update_state(values, sample_weight) gets y_true, y_pred)",
    "Sum": "Keras' compile() cannot take it (update_state(values, sample_weight) gets y_true, y_pred)",
}

# Cases of supported names that fail today (a regular expression over case ids -> the reason),
# printed with the results; a case listed here that passes fails the suite, so the list cannot go stale.
KNOWN_FAILURES = {
    r"metrics\.BinaryAccuracy": "kerascpp's BinaryAccuracy has threshold 0.5 only: load_model refuses the case's "
                               "0.3 (the model loads uncompiled)",
    r"losses\.MeanSquaredError\.sum": "kerascpp's losses reduce by sum_over_batch_size only: load_model refuses "
                                     "another reduction (the model loads uncompiled)",
    r"layers\.Conv1D\.dilation": "kerascpp's convolutions have no dilation_rate yet",
    r"layers\.BatchNormalization\.center": "kerascpp's BatchNormalization always learns beta (center=True)",
    r"layers\.UnitNormalization\.axis": "kerascpp's UnitNormalization normalizes over the last axis only",
}


def known_failure(case_id):
    return next((reason for pattern, reason in KNOWN_FAILURES.items() if re.fullmatch(pattern, case_id)), None)


# Section of docs/catalogue.md -> (category, column of the status, whether column 1 holds aliases).
SECTIONS = {"Activations": ("activations", 1, False), "Layers": ("layers", 2, True), "Losses": ("losses", 2, False),
            "Metrics": ("metrics", 2, False), "Optimizers": ("optimizers", 1, False)}
CATEGORIES = ["layers", "activations", "losses", "metrics", "optimizers"]


def parse_catalogue():
    """{category: [(names, status text)]}, one entry per table row."""
    rows, section = {c: [] for c in CATEGORIES}, None
    for line in open(CATALOGUE, encoding="utf-8"):
        if line.startswith("## "):
            section = SECTIONS.get(line[3:].strip())
        elif section and line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            names = set(re.findall(r"`([A-Za-z0-9_]+)`", cells[0]))
            if section[2]:
                names |= set(re.findall(r"`([A-Za-z0-9_]+)`", cells[1]))
            if names:  # the header row has none
                rows[section[0]].append((names, cells[section[1]]))
    return rows


def keras_catalogue():
    """{category: [set of exported names of one class or function]}: aliases share an entry."""
    def grouped(module, keep):
        by_object = {}
        for name in dir(module):
            obj = getattr(module, name)
            if not name.startswith("_") and keep(obj) and name not in BASE_CLASSES:
                by_object.setdefault(id(obj), set()).add(name)
        return list(by_object.values())

    def subclasses(base):
        return lambda obj: inspect.isclass(obj) and issubclass(obj, base)

    return {"layers": grouped(keras.layers, subclasses(keras.layers.Layer)),
            "activations": grouped(keras.activations, lambda obj: inspect.isfunction(obj) and obj.__name__ not in (
                "get", "serialize", "deserialize")),
            "losses": grouped(keras.losses, subclasses(keras.losses.Loss)),
            "metrics": grouped(keras.metrics, subclasses(keras.metrics.Metric)),
            "optimizers": grouped(keras.optimizers, subclasses(keras.optimizers.Optimizer))}


def is_supported(status):
    return status.startswith("yes")


def is_out_of_scope(status):
    return status.startswith("out of scope")


def _match(rows, names):
    return next((row for row in rows if row[0] & names), None)


def coverage(catalogue, keras_names):
    """Per category: (supported, in scope) over Keras' entries; and Keras' entries with no row."""
    counts, missing = {}, []
    for category in CATEGORIES:
        supported = in_scope = 0
        for names in keras_names[category]:
            row = _match(catalogue[category], names)
            if row is None:
                missing.append(f"{category}: {'/'.join(sorted(names))}")
                continue
            in_scope += not is_out_of_scope(row[1])
            supported += is_supported(row[1])
        counts[category] = (supported, in_scope)
    return counts, missing


def coverage_line(counts):
    parts = [f"{s} of {m} {c}" for c, (s, m) in counts.items()]
    total = sum(s for s, _ in counts.values()), sum(m for _, m in counts.values())
    return f"{total[0]} of {total[1]} layers, activations, losses, metrics, optimizers ({', '.join(parts)}; " \
           f"out-of-scope rows not counted)"


@pytest.fixture(scope="module")
def catalogue():
    return parse_catalogue()


def test_catalogue_has_a_row_for_every_keras_name(catalogue):
    counts, missing = coverage(catalogue, keras_catalogue())
    print("\nconformance coverage: " + coverage_line(counts))
    assert not missing, (f"Keras {keras.__version__} has names docs/catalogue.md does not list (add a row: "
                         f"supported, not yet, or out of scope with the reason): {missing}")


def _case_ids(catalogue):
    from keras_conformance_cases import CASES  # noqa: imports only the table: its Keras calls wait for a builder
    wanted, unbuilt = [], []
    for category in CATEGORIES:
        for names, status in catalogue[category]:
            if not is_supported(status) or names & NOT_ROUND_TRIPPABLE.keys():
                continue
            ids = [i for i, (c, n, _) in CASES.items() if c == category and n in names]
            wanted += ids
            if not ids:
                unbuilt.append(f"{category}: {'/'.join(sorted(names))}")
    return wanted, unbuilt


def _run_workers(action, root, ids, jobs=2):
    """Runs keras_conformance_cases.py `action` over `ids`, split over `jobs` processes: on JAX to
    train (the numpy backend has no gradients), on numpy to predict (no compiling)."""
    env = dict(os.environ, KERAS_BACKEND="jax" if action == "generate" else "numpy", JAX_PLATFORMS="cpu",
               TF_CPP_MIN_LOG_LEVEL="3",
               # Unoptimized XLA code compiles faster; these models are tiny.
               XLA_FLAGS="--xla_backend_optimization_level=0")
    if os.environ.get("KERASCPP_BUILD_DIR"):
        # Compiling the training steps is most of the suite's time: JAX keeps what it compiled in
        # the build folder (keyed by the computation and JAX's version), so a rerun takes a third.
        cache = os.path.join(os.environ["KERASCPP_BUILD_DIR"], "keras_conformance_jax_cache")
        env.update(JAX_COMPILATION_CACHE_DIR=cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
    procs = [subprocess.Popen([sys.executable, CASES_SCRIPT, action, str(root), *ids[j::jobs]], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for j in range(jobs)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"keras_conformance_cases.py {action} failed:\n{err[-3000:]}"


def _run_driver(root, ids):
    """kerascpp over every case in one process; after a crash, again over the cases left."""
    left = [i for i in ids if (root / i / "case.json").exists()]
    while left:
        subprocess.run([find_binary("keras_conformance"), *[str(root / i) for i in left]], capture_output=True,
                       timeout=600, check=False)
        done = [i for i in left if (root / i / "result.json").exists()]
        if len(done) == len(left):
            return
        crashed = next(i for i in left if not (root / i / "result.json").exists())
        (root / crashed / "result.json").write_text(json.dumps({"error": "keras_conformance crashed on this case"}))
        left = [i for i in left if not (root / i / "result.json").exists()]


def _close(what, got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, Keras {want.shape}"
    if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        worst = np.argmax(np.abs(got - want) - RTOL * np.abs(want))
        return (f"{what}: differs by up to {np.max(np.abs(got - want)):.3g} "
                f"(at {np.unravel_index(worst, want.shape)}: {got.flat[worst]:.7g} vs Keras {want.flat[worst]:.7g})")
    return None


def _problems(d):
    """What is wrong with one case, in order; empty when it passes."""
    for action in ("generate", "check"):
        if (d / f"{action}.error").exists():
            return [f"Keras {action}: {(d / f'{action}.error').read_text()[:400]}"]
    result = json.loads((d / "result.json").read_text())
    if "error" in result:
        return [f"kerascpp: {result['error'][:400]}"]
    meta = json.loads((d / "case.json").read_text())
    keras_pred = np.load(d / "keras_pred.npy")  # Keras' prediction from its own file
    read = lambda name, shape: np.fromfile(d / name, dtype="<f4").reshape(shape)  # noqa: E731
    found = [_close("prediction", read("pred.f32", keras_pred.shape), keras_pred)]
    if result["logs"] is not None and meta["keras_logs"] is not None:
        logs = result["logs"]
        for key, want in meta["keras_logs"].items():
            found.append(_close(f"logs[{key}]", logs[key], want) if key in logs else
                         f"logs: no '{key}' (kerascpp has {sorted(logs)})")
    keras_weights = np.load(d / "keras_weights.npz")
    keras_weights = [keras_weights[f"arr_{i}"] for i in range(len(keras_weights.files))]
    if len(keras_weights) != len(result["weights"]):
        found.append(f"weights: kerascpp has {len(result['weights'])}, Keras {len(keras_weights)}")
    else:
        stage = "trained " if meta["steps"] else ""
        found += [_close(f"{stage}weight {i}", read(f"w{i}.f32", shape), want)
                  for i, (shape, want) in enumerate(zip(result["weights"], keras_weights))]
    trained_pred = read("pred_trained.f32", keras_pred.shape)
    found.append(_close("Keras' prediction from kerascpp.keras (vs kerascpp's)", np.load(d / "reloaded.npy"),
                        trained_pred))
    return [f for f in found if f]


def test_supported_entries_round_trip_with_keras(catalogue, tmp_path):
    ids, unbuilt = _case_ids(catalogue)
    assert not unbuilt, f"supported in docs/catalogue.md but no case in keras_conformance_cases.py: {unbuilt}"
    started = time.monotonic()
    _run_workers("generate", tmp_path, ids)
    generated = time.monotonic()
    _run_driver(tmp_path, ids)
    driven = time.monotonic()
    _run_workers("check", tmp_path, [i for i in ids if (tmp_path / i / "case.json").exists()])
    print(f"\nconformance time: Keras builds and trains {generated - started:.0f} s, "
          f"kerascpp {driven - generated:.0f} s, Keras reloads {time.monotonic() - driven:.0f} s")

    failures, known, fixed = {}, {}, []
    for i in ids:
        problems = _problems(tmp_path / i)
        if problems and known_failure(i):
            known[i] = problems
        elif problems:
            failures[i] = problems
        elif known_failure(i):
            fixed.append(i)
    print(f"\nconformance: {len(ids) - len(failures) - len(known)} of {len(ids)} cases pass against Keras "
          f"{keras.__version__}")
    for i in known:
        print(f"  known failure {i}: {known_failure(i)}")
    for name, reason in NOT_ROUND_TRIPPABLE.items():
        print(f"  not round-tripped {name}: {reason}")
    report = "\n".join(f"  {i}: " + "; ".join(p) for i, p in failures.items())
    print(report)
    assert not fixed, f"these cases pass now: take them off KNOWN_FAILURES: {fixed}"
    assert not failures, f"{len(failures)} supported entries differ from Keras:\n{report}"
