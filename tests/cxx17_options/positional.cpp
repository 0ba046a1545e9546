// C++17 code fills kerascpp's option structs without designated initializers: positionally
// (every member has a default member initializer, so -Wmissing-field-initializers stays quiet
// about the members left out) or field by field. Compiled with -std=c++17 -Wall -Wextra -Werror
// by the ctest options_cxx17_warnings; nothing runs.
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;

void fill_options_positionally() {
  K::layers::DenseOptions dense{"relu"};
  K::layers::Conv2DOptions conv{2, K::Padding::same, "relu"};
  K::layers::Conv1DOptions conv1d{2, K::Padding::causal, "relu"};
  K::layers::DepthwiseConv2DOptions depthwise{2, K::Padding::same, 3};
  K::layers::Conv2DTransposeOptions transpose{2, K::Padding::same, "relu"};
  K::layers::Pooling2DOptions pool{2};
  K::layers::DropoutOptions dropout{7};
  K::layers::BatchNormalizationOptions bn{0.9f};
  K::layers::ActivationOptions activation{"act"};
  K::layers::InputLayerOptions input{K::DType::float32};
  K::FitOptions fit{3};
  K::EvaluateOptions evaluate{2};
  K::PredictOptions predict{1};
  K::CompileOptions compile{"adam", "sparse_categorical_crossentropy"};
  K::optimizers::AdamOptions adam{0.8};
  K::optimizers::SGDOptions sgd{0.9};
  K::optimizers::RMSpropOptions rmsprop{0.8};
  K::optimizers::LossScaleOptions loss_scale{false, 128};
  K::losses::CrossentropyOptions crossentropy{true};
  K::distribute::StrategyOptions strategy{1};
  K::data::ImageDatasetOptions images{K::data::ImageLabels{"inferred"}, "categorical"};
  K::data::DecodeJpegOptions jpeg{3, 2};
  K::data::DecodePngOptions png{4};
  K::data::CifarOptions cifar{100, "coarse"};
  K::callbacks::EarlyStoppingOptions early{"loss"};
  K::callbacks::ReduceLROnPlateauOptions plateau{"loss"};
  K::callbacks::ModelCheckpointOptions checkpoint{"loss"};
  K::testing::GradientCheckOptions gradients{1e-3};
  K::testing::ClassificationOptions classification{3};
  K::testing::SessionOptions session{42};
  auto layer = K::layers::Dense(3, {"relu"});
  K::data::TextLineOptions text{"GZIP"};
  K::data::TFRecordOptions records{"ZLIB"};
  K::data::CsvOptions csv{"", true, ';'};
  K::data::MakeCsvOptions make_csv{"label"};
  K::data::ListFilesOptions list{false};
  K::data::FixedLenFeature fixed{{3}, K::DType::int64};
  K::data::VarLenFeature var_len{K::DType::float32};
  (void)dense, (void)conv, (void)pool, (void)dropout, (void)bn, (void)activation, (void)input, (void)fit;
  (void)evaluate, (void)predict, (void)compile, (void)adam, (void)sgd, (void)rmsprop, (void)crossentropy;
  (void)strategy, (void)early, (void)plateau, (void)checkpoint, (void)gradients, (void)classification;
  (void)session, (void)layer, (void)conv1d, (void)depthwise, (void)transpose, (void)loss_scale;
  (void)text, (void)records, (void)csv, (void)make_csv, (void)list, (void)fixed, (void)var_len;
}
