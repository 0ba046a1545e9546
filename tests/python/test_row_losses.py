"""kerascpp's losses and metrics of issue 50 against Keras 3's own, on the same inputs."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

N, D = 12, 4


def run(what, name, pred, target, **options):
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([pred.ravel(), target.ravel()]))
    args = [find_binary("row_loss_values"), what, name, str(pred.shape[0]), str(pred.shape[1])]
    args += [f"{k}={float(v)}" for k, v in options.items()]
    out = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60, check=True).stdout
    return np.array([float(v) for v in out.split()])


def inputs(seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(N, D))
    probs = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float32)
    one_hot = np.eye(D, dtype=np.float32)[rng.integers(0, D, N)]
    positive = rng.uniform(0.05, 2.0, size=(N, D)).astype(np.float32)
    return logits.astype(np.float32), probs, one_hot, positive


LOSSES = [
    # (our name, Keras loss object, prediction kind, target kind, our options)
    ("kl_divergence", keras.losses.KLDivergence, "probs", "probs", {}),
    ("poisson", keras.losses.Poisson, "positive", "positive", {}),
    ("cosine_similarity", keras.losses.CosineSimilarity, "logits", "positive", {}),
    ("hinge", keras.losses.Hinge, "logits", "one_hot", {}),
    ("squared_hinge", keras.losses.SquaredHinge, "logits", "one_hot", {}),
    ("categorical_hinge", keras.losses.CategoricalHinge, "logits", "one_hot", {}),
    ("log_cosh", keras.losses.LogCosh, "logits", "positive", {}),
    ("mape", keras.losses.MeanAbsolutePercentageError, "logits", "positive", {}),
    ("msle", keras.losses.MeanSquaredLogarithmicError, "positive", "positive", {}),
    ("mae", keras.losses.MeanAbsoluteError, "logits", "positive", {}),
]


@pytest.mark.parametrize("name,cls,pred_kind,target_kind,options", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_equals_keras(name, cls, pred_kind, target_kind, options):
    logits, probs, one_hot, positive = inputs(1)
    data = {"logits": logits, "probs": probs, "one_hot": one_hot, "positive": positive}
    pred, target = data[pred_kind], data[target_kind]
    if pred_kind == target_kind:
        target = inputs(2)[["logits", "probs", "one_hot", "positive"].index(target_kind)]
    theirs = np.asarray(cls(reduction=None)(target, pred), np.float64)
    np.testing.assert_allclose(run("loss", name, pred, target, **options), theirs, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("balancing", [False, True])
def test_binary_focal_crossentropy_equals_keras(from_logits, balancing):
    logits, probs, one_hot, _ = inputs(3)
    pred = logits if from_logits else probs
    keras_loss = keras.losses.BinaryFocalCrossentropy(apply_class_balancing=balancing, alpha=0.3, gamma=1.5,
                                                      from_logits=from_logits, label_smoothing=0.1, reduction=None)
    ours = run("loss", "binary_focal_crossentropy", pred, one_hot, apply_class_balancing=balancing, alpha=0.3,
               gamma=1.5, from_logits=from_logits, label_smoothing=0.1)
    np.testing.assert_allclose(ours, np.asarray(keras_loss(one_hot, pred), np.float64), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("from_logits", [False, True])
def test_categorical_focal_crossentropy_equals_keras(from_logits):
    logits, probs, one_hot, _ = inputs(4)
    pred = logits if from_logits else probs
    keras_loss = keras.losses.CategoricalFocalCrossentropy(alpha=0.4, gamma=2.5, from_logits=from_logits,
                                                           reduction=None)
    ours = run("loss", "categorical_focal_crossentropy", pred, one_hot, alpha=0.4, gamma=2.5, from_logits=from_logits)
    np.testing.assert_allclose(ours, np.asarray(keras_loss(one_hot, pred), np.float64), rtol=2e-5, atol=1e-6)


def test_generalized_crossentropy_tversky_and_dice_equal_keras():
    _, probs, one_hot, positive = inputs(5)
    masks = np.clip(positive / 2, 0, 1)  # not summing to 1 per row, so Tversky's alpha and beta matter
    labels = one_hot.argmax(-1).astype(np.float32)
    theirs = keras.losses.CategoricalGeneralizedCrossEntropy(q=0.7, reduction=None)(labels, probs)
    np.testing.assert_allclose(run("loss", "categorical_generalized_cross_entropy", probs, labels, q=0.7, labels=1),
                               np.asarray(theirs, np.float64), rtol=2e-5, atol=1e-6)
    # axis=None: one value for the batch, which every example carries in kerascpp.
    tversky = float(keras.losses.Tversky(alpha=0.3, beta=0.7)(one_hot, masks))
    assert abs(tversky - float(keras.losses.Tversky()(one_hot, masks))) > 1e-3
    np.testing.assert_allclose(run("loss", "tversky", masks, one_hot, alpha=0.3, beta=0.7), np.full(N, tversky),
                               rtol=2e-5)
    dice = float(keras.losses.Dice()(one_hot, masks))
    np.testing.assert_allclose(run("loss", "dice", masks, one_hot), np.full(N, dice), rtol=2e-5)


def test_circle_equals_keras():
    rng = np.random.default_rng(9)
    pred = rng.normal(size=(N, D)).astype(np.float32)
    pred /= np.linalg.norm(pred, axis=-1, keepdims=True)
    labels = rng.integers(0, 4, N).astype(np.float32)
    labels[0] = 7  # a class of one example: no positive pair, left out of Keras' mean
    theirs = float(keras.losses.Circle(gamma=20.0, margin=0.3)(labels, pred))
    ours = run("loss", "circle", pred, labels, gamma=20.0, margin=0.3, labels=1)
    assert ours.mean() == pytest.approx(theirs, rel=2e-5)
    assert ours[0] == 0


def test_ctc_equals_keras():
    rng = np.random.default_rng(10)
    steps, classes = 6, 5
    logits = rng.normal(size=(N, steps, classes)).astype(np.float32)
    labels = rng.integers(1, classes, size=(N, 3)).astype(np.int32)
    labels[::3, 2] = 0  # shorter label sequences, padded with the blank
    labels[1, 1] = labels[1, 0]  # a repeated label
    theirs = np.asarray(keras.losses.CTC(reduction=None)(labels, logits), np.float64)
    ours = run("loss", "ctc", logits.reshape(N, -1), labels.astype(np.float32), steps=steps, label_length=3)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-5)


def keras_metric(metric, target, pred):
    metric.update_state(target, pred)
    return float(np.asarray(metric.result()))


def test_metrics_equal_keras():
    logits, probs, one_hot, positive = inputs(6)
    rng = np.random.default_rng(7)
    scores = rng.uniform(size=(N, D)).astype(np.float32)
    m = keras.metrics
    cases = [
        ("accuracy", m.Accuracy(), np.round(positive), np.round(inputs(8)[3]), {}),
        ("top_k_categorical_accuracy", m.TopKCategoricalAccuracy(k=2), logits, one_hot, {"k": 2}),
        ("r2_score", m.R2Score(), logits, positive, {}),
        ("f1_score", m.F1Score(average="macro"), probs, one_hot, {}),
        ("fbeta_score", m.FBetaScore(average="micro", beta=2.0, threshold=0.3), probs, one_hot,
         {"micro": 1, "beta": 2.0, "threshold": 0.3}),
        ("one_hot_mean_io_u", m.OneHotMeanIoU(num_classes=D), probs, one_hot, {}),
        ("binary_io_u", m.BinaryIoU(threshold=0.4), scores, one_hot, {"threshold": 0.4}),
        ("precision_at_recall", m.PrecisionAtRecall(0.6, num_thresholds=50), scores, one_hot,
         {"value": 0.6, "num_thresholds": 50}),
        ("recall_at_precision", m.RecallAtPrecision(0.3), scores, one_hot, {"value": 0.3}),
        ("sensitivity_at_specificity", m.SensitivityAtSpecificity(0.5), scores, one_hot, {"value": 0.5}),
        ("specificity_at_sensitivity", m.SpecificityAtSensitivity(0.7), scores, one_hot, {"value": 0.7}),
        ("true_positives", m.TruePositives(thresholds=0.3), scores, one_hot, {"threshold": 0.3}),
        ("pearson_correlation", m.PearsonCorrelation(), logits, positive, {}),
        ("concordance_correlation", m.ConcordanceCorrelation(), logits, positive, {}),
        ("root_mean_squared_error", m.RootMeanSquaredError(), logits, positive, {}),
        ("cosine_similarity", m.CosineSimilarity(), logits, positive, {}),
        ("logcosh", m.LogCoshError(), logits, positive, {}),
    ]
    for name, metric, pred, target, options in cases:
        theirs = keras_metric(metric, target, pred)
        ours = run("metric", name, pred, target, **options)[0]
        assert ours == pytest.approx(theirs, rel=2e-5, abs=1e-6), name
    # The rate-at-rate metrics above did not all return their fallback 0.
    assert keras_metric(m.SensitivityAtSpecificity(0.5), one_hot, scores) > 0
