// write_events <log_dir>: writes <log_dir>/train and <log_dir>/validation the way Keras's
// TensorBoard callback does for 3 epochs, with known values, and prints those values as JSON
// so that tests/python/test_tensorboard_reader.py can check what TensorBoard reads back.
#include <cmath>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/event_file_writer.hpp"

namespace {

constexpr int kEpochs = 3;
constexpr std::int64_t kStepsPerEpoch = 100;  // optimizer iterations per epoch
constexpr int kKernelSize = 48;               // a 6x8 Dense kernel
const char* const kModelConfig = R"({"class_name": "Functional", "config": {}})";

using Series = std::vector<std::pair<std::int64_t, double>>;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string json_series(const Series& series) {
  std::ostringstream out;
  out << std::setprecision(17) << "[";
  for (std::size_t i = 0; i < series.size(); ++i)
    out << (i ? ", " : "") << "[" << series[i].first << ", " << series[i].second << "]";
  out << "]";
  return out.str();
}

std::string json_scalars(const std::vector<std::pair<std::string, Series>>& scalars) {
  std::string out = "{";
  for (std::size_t i = 0; i < scalars.size(); ++i)
    out += (i ? ", " : "") + json_string(scalars[i].first) + ": " + json_series(scalars[i].second);
  return out + "}";
}

std::vector<float> kernel_at(int epoch) {
  std::vector<float> kernel(kKernelSize);
  for (int i = 0; i < kKernelSize; ++i) kernel[i] = static_cast<float>(std::sin(0.7 * i + epoch) * (1.0 + 0.1 * epoch));
  return kernel;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_events <log_dir>\n";
    return 2;
  }
  const std::string log_dir = argv[1];
  try {
    kerascpp::io::EventFileWriter train(log_dir + "/train");
    kerascpp::io::EventFileWriter validation(log_dir + "/validation");

    // Keras writes the model config once, at step 0, in the train run.
    train.add_keras_model_config(kModelConfig, 0);

    Series loss, accuracy, learning_rate, val_loss, val_accuracy, eval_loss;
    std::ostringstream kernels;
    kernels << std::setprecision(9) << "[";
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
      loss.emplace_back(epoch, 1.0 / (epoch + 1));
      accuracy.emplace_back(epoch, 0.5 + 0.125 * epoch);
      learning_rate.emplace_back(epoch, 0.001);
      val_loss.emplace_back(epoch, 1.25 / (epoch + 1));
      val_accuracy.emplace_back(epoch, 0.4375 + 0.125 * epoch);
      eval_loss.emplace_back((epoch + 1) * kStepsPerEpoch, val_loss.back().second);

      train.add_scalar("epoch_loss", loss.back().second, epoch);
      train.add_scalar("epoch_accuracy", accuracy.back().second, epoch);
      train.add_scalar("epoch_learning_rate", learning_rate.back().second, epoch);
      const std::vector<float> kernel = kernel_at(epoch);
      train.add_histogram("dense/kernel/histogram", kernel.data(), kernel.size(), epoch);
      kernels << (epoch ? ", " : "") << "[";
      for (int i = 0; i < kKernelSize; ++i) kernels << (i ? ", " : "") << kernel[i];
      kernels << "]";

      validation.add_scalar("epoch_loss", val_loss.back().second, epoch);
      validation.add_scalar("epoch_accuracy", val_accuracy.back().second, epoch);
      validation.add_scalar("evaluation_loss_vs_iterations", eval_loss.back().second, eval_loss.back().first);
      train.flush();
      validation.flush();
    }
    kernels << "]";

    std::cout << "{\"train\": {\"path\": " << json_string(train.path()) << ", \"scalars\": "
              << json_scalars(
                     {{"epoch_loss", loss}, {"epoch_accuracy", accuracy}, {"epoch_learning_rate", learning_rate}})
              << ", \"histograms\": {\"dense/kernel/histogram\": {\"buckets\": 30, \"values\": " << kernels.str()
              << "}}, \"keras_model_config\": " << json_string(kModelConfig)
              << "},\n \"validation\": {\"path\": " << json_string(validation.path()) << ", \"scalars\": "
              << json_scalars({{"epoch_loss", val_loss},
                               {"epoch_accuracy", val_accuracy},
                               {"evaluation_loss_vs_iterations", eval_loss}})
              << "}}\n";
  } catch (const std::exception& e) {
    std::cerr << "write_events: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
