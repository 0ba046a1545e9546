"""examples/ncf.cpp's NeuMF has the official TensorFlow models' NCF layout and parameter count.

The official model (official/recommendation/neumf_model.py, construct_model) is built here in
Keras 3 from its description: per user and per item one Embedding table of width
mf_dim + layers[0] // 2 (glorot_uniform), sliced by two Lambda layers into the GMF part (first
mf_dim columns) and the MLP part (the rest); GMF = Multiply of the user and item parts; MLP =
Concatenate of theirs, then Dense(layers[i], relu) for i >= 1; Concatenate of GMF and MLP;
Dense(1) logits ("rating", lecun_uniform). kerascpp stores the two slices as two tables (no
Lambda layer), so the check is on the parameter count, the table widths, the Dense stack and the
merges, for the example's default (official run.sh) configuration and its --small one (the
official flag defaults). Keras also rebuilds kerascpp's model from its JSON.
"""

import json
import os
import subprocess

import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from keras import layers  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402


def _official_neumf(num_users, num_items, mf_dim, model_layers):
    user_input = keras.Input(shape=(), dtype="int32", name="user_id")
    item_input = keras.Input(shape=(), dtype="int32", name="item_id")
    width = mf_dim + model_layers[0] // 2
    embedding_user = layers.Embedding(num_users, width, embeddings_initializer="glorot_uniform",
                                      embeddings_regularizer=keras.regularizers.L2(0.0), name="embedding_user")(user_input)
    embedding_item = layers.Embedding(num_items, width, embeddings_initializer="glorot_uniform",
                                      embeddings_regularizer=keras.regularizers.L2(0.0), name="embedding_item")(item_input)
    mf_user = layers.Lambda(lambda x: x[:, :mf_dim], name="embedding_user_mf")(embedding_user)
    mf_item = layers.Lambda(lambda x: x[:, :mf_dim], name="embedding_item_mf")(embedding_item)
    mlp_user = layers.Lambda(lambda x: x[:, mf_dim:], name="embedding_user_mlp")(embedding_user)
    mlp_item = layers.Lambda(lambda x: x[:, mf_dim:], name="embedding_item_mlp")(embedding_item)
    mf_vector = layers.multiply([mf_user, mf_item])
    mlp_vector = layers.concatenate([mlp_user, mlp_item])
    for units in model_layers[1:]:
        mlp_vector = layers.Dense(units, activation="relu", kernel_regularizer=keras.regularizers.L2(0.0))(mlp_vector)
    predict_vector = layers.concatenate([mf_vector, mlp_vector])
    logits = layers.Dense(1, activation=None, kernel_initializer="lecun_uniform", name="rating")(predict_vector)
    return keras.Model([user_input, item_input], logits)


def _export(directory, *flags):
    result = subprocess.run([find_binary("ncf"), "--export_model", str(directory), *flags], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with open(directory / "model_info.json") as f:
        info = json.load(f)
    with open(directory / "model.json") as f:
        config = json.load(f)
    return info, config


def _layers_of(config, class_name):
    return [layer["config"] for layer in config["config"]["layers"] if layer["class_name"] == class_name]


@pytest.mark.parametrize("flags,mf_dim,model_layers", [
    ((), 64, [256, 256, 128, 64]),             # official run.sh: the example's default
    (("--small",), 8, [64, 32, 16, 8]),        # ncf_common.py's flag defaults
    (("--num_factors", "16", "--layers", "32,16"), 16, [32, 16]),
])
def test_neumf_matches_the_official_model(tmp_path, flags, mf_dim, model_layers):
    info, config = _export(tmp_path, *flags)
    assert info["mf_dim"] == mf_dim and info["layers"] == model_layers
    keras.backend.clear_session()
    official = _official_neumf(info["num_users"], info["num_items"], mf_dim, model_layers)
    assert info["params"] == official.count_params()

    # Each id's two kerascpp tables together are the official table (mf_dim + layers[0] / 2 wide).
    tables = {e["name"]: e for e in _layers_of(config, "Embedding")}
    assert set(tables) == {"embedding_user_mf", "embedding_user_mlp", "embedding_item_mf", "embedding_item_mlp"}
    for who, ids in (("user", info["num_users"]), ("item", info["num_items"])):
        assert tables[f"embedding_{who}_mf"]["output_dim"] == mf_dim
        assert tables[f"embedding_{who}_mf"]["output_dim"] + tables[f"embedding_{who}_mlp"]["output_dim"] == \
            official.get_layer(f"embedding_{who}").output_dim
        assert tables[f"embedding_{who}_mf"]["input_dim"] == tables[f"embedding_{who}_mlp"]["input_dim"] == ids

    # The same Dense stack (units and activations, in order) and the same merges.
    ours = [(d["units"], d["activation"]) for d in _layers_of(config, "Dense")]
    theirs = [(d.units, keras.activations.serialize(d.activation)) for d in official.layers
              if isinstance(d, layers.Dense)]
    assert ours == theirs
    assert ours[-1] == (1, "linear")
    assert len(_layers_of(config, "Multiply")) == 1
    assert len(_layers_of(config, "Concatenate")) == 2

    # Keras rebuilds kerascpp's model from its JSON with the same parameter count.
    keras.backend.clear_session()
    with open(tmp_path / "model.json") as f:
        rebuilt = keras.models.model_from_json(f.read())
    assert rebuilt.count_params() == official.count_params()


def test_odd_first_layer_is_refused_as_in_the_official_model(tmp_path):
    result = subprocess.run([find_binary("ncf"), "--export_model", str(tmp_path), "--layers", "63,32"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "--layers must start with an even size" in result.stderr
