"""kerascpp's Precision, Recall and AUC against Keras 3's keras.metrics on the same inputs."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

N, D = 60, 3


def ours(pred, target):
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([pred.ravel(), target.ravel()]))
    out = subprocess.run([find_binary("confusion_metric_values"), str(N), str(D)], input=stdin,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def keras_metrics():
    m = keras.metrics
    return {
        "precision": m.Precision(),
        "recall": m.Recall(),
        "precision_t0.3": m.Precision(thresholds=0.3),
        "recall_t0.7": m.Recall(thresholds=0.7),
        "precision_c1": m.Precision(class_id=1),
        "recall_c1": m.Recall(class_id=1),
        "auc_ROC_interpolation": m.AUC(),
        "auc_PR_interpolation": m.AUC(curve="PR"),
        "auc_ROC_minoring": m.AUC(summation_method="minoring"),
        "auc_ROC_majoring": m.AUC(summation_method="majoring"),
        "auc_PR_minoring": m.AUC(curve="PR", summation_method="minoring"),
        "auc_PR_majoring": m.AUC(curve="PR", summation_method="majoring"),
        "auc_t7_ROC": m.AUC(num_thresholds=7),
        "auc_t7_PR": m.AUC(num_thresholds=7, curve="PR"),
        "auc_logits": m.AUC(from_logits=True),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_confusion_metrics_equal_keras(seed):
    rng = np.random.default_rng(seed)
    # Scores on a coarse grid (ties, values exactly at 0.3/0.5/0.7, 0 and 1) plus continuous ones.
    grid = rng.choice(np.array([0.0, 0.3, 0.5, 0.7, 1.0, 0.25, 0.8], np.float32), size=(N, D))
    cont = rng.uniform(0, 1, size=(N, D)).astype(np.float32)
    pred = np.where(rng.uniform(size=(N, D)) < 0.5, grid, cont).astype(np.float32)
    # Positives likelier at high scores; nonzero targets other than 1 count as positive.
    target = (rng.uniform(size=(N, D)) < 0.2 + 0.6 * pred).astype(np.float32)
    target[0, 0] = 2.0 if target[0, 0] else 0.0
    got = ours(pred, target)
    for key, metric in keras_metrics().items():
        metric.update_state(target, pred)
        want = float(metric.result())
        assert got[key] == pytest.approx(want, abs=1e-6), key
    assert 0.5 < got["auc_ROC_interpolation"] < 1  # informative, not degenerate
    assert 0 < got["precision"] < 1 and 0 < got["recall"] < 1
