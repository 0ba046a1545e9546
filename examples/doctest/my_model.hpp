// The model under test: what a user's project would have in its own sources.
#pragma once
#include <kerascpp/kerascpp.hpp>

// A small MLP classifier for `features` inputs and `classes` classes (softmax output).
kerascpp::Model make_classifier(int features, int classes);

// Compiles it with Adam and sparse categorical cross-entropy, tracking accuracy.
void compile_classifier(kerascpp::Model& model, double learning_rate = 0.01);
