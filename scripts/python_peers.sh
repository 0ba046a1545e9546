#!/usr/bin/env bash
# Creates the project-local venv (.venv) with the light Python test peers: Keras on its numpy
# backend (which imports jax for a few ops), h5py, TensorBoard, tfrecord (TensorFlow's Example protos
# and a TFRecord writer, without TensorFlow) and pytest, and for the notebook
# tests cppyy (its wheel brings Cling, the interpreter of xeus-cling) and nbformat. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.kerascpp-test-peers-v3
if [ ! -f "$stamp" ]; then
  .venv/bin/pip install -q --disable-pip-version-check keras h5py tensorboard tfrecord numpy scipy jax pytest cppyy nbformat
  touch "$stamp"
fi
