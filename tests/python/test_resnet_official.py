"""examples/resnet.cpp's ResNet-20 is the official Keras CIFAR ResNet, L2 regularization included.

The official model (TensorFlow models' resnet_cifar_model.py) is built here in Keras 3 from its
description: ZeroPadding2D(1) + "valid" 3x3 stem, three stages of basic blocks whose first block
has a 1x1 projection shortcut, convs with biases, L2(2e-4) on every kernel and bias, BN momentum
0.997 and epsilon 1e-5, global average pooling, a softmax Dense. kerascpp's example must have the
same parameter count, and its regularization loss must equal Keras' sum(model.losses) on the same
weights (Keras rebuilds kerascpp's model from its JSON and loads its weights).
"""

import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from keras import layers  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402

L2 = 2e-4


def _conv_bn(x, filters, kernel, strides=1, padding="same"):
    x = layers.Conv2D(filters, kernel, strides=strides, padding=padding, kernel_initializer="he_normal",
                      kernel_regularizer=keras.regularizers.L2(L2), bias_regularizer=keras.regularizers.L2(L2))(x)
    return layers.BatchNormalization(momentum=0.997, epsilon=1e-5)(x)


def _official_resnet(depth, classes=10):
    blocks = (depth - 2) // 6
    inputs = keras.Input((32, 32, 3))
    x = layers.ZeroPadding2D(1)(inputs)
    x = layers.Activation("relu")(_conv_bn(x, 16, 3, padding="valid"))
    for stage, filters in enumerate([16, 32, 64]):
        for block in range(blocks):
            strides = 2 if block == 0 and stage > 0 else 1
            shortcut = _conv_bn(x, filters, 1, strides, "valid") if block == 0 else x
            y = layers.Activation("relu")(_conv_bn(x, filters, 3, strides))
            y = _conv_bn(y, filters, 3)
            x = layers.Activation("relu")(layers.add([y, shortcut]))
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(classes, activation="softmax", kernel_initializer="he_normal",
                           kernel_regularizer=keras.regularizers.L2(L2), bias_regularizer=keras.regularizers.L2(L2))(x)
    return keras.Model(inputs, outputs)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("resnet20")
    result = subprocess.run([find_binary("resnet"), "--resnet_size", "20", "--export_model", str(directory)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with open(directory / "model_info.json") as f:
        return directory, json.load(f)


def test_resnet20_has_the_official_parameter_count(exported):
    _, info = exported
    keras.backend.clear_session()
    official = _official_resnet(20)
    assert info["params"] == official.count_params()
    # 6n+2 = 20 layers with weights on the main path (19 convs + the classifier), plus one
    # projection shortcut per stage.
    assert len([layer for layer in official.layers if isinstance(layer, layers.Conv2D)]) == 19 + 3


def test_resnet20_regularization_loss_equals_keras(exported):
    directory, info = exported
    keras.backend.clear_session()
    with open(directory / "model.json") as f:
        model = keras.models.model_from_json(f.read())
    model.load_weights(str(directory / "model.weights.h5"))
    regularized = [layer for layer in model.layers if getattr(layer, "kernel_regularizer", None) is not None]
    assert len(regularized) == 23  # 22 convs (3 of them projections) + fc10
    keras_loss = float(sum(np.asarray(loss, dtype=np.float64) for loss in model.losses))
    assert keras_loss > 0.1
    assert info["regularization_loss"] == pytest.approx(keras_loss, rel=1e-6)
