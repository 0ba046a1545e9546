#include "kerascpp/callbacks/csv_logger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "check.hpp"
#include "io/atomic_file.hpp"
#include "kerascpp/training/model.hpp"
#include "path_checks.hpp"

namespace kerascpp::callbacks {

CSVLogger::CSVLogger(std::string filename, char separator, bool append)
    : filename_(std::move(filename)), separator_(separator), append_(append) {
  // Checked here, not after the first epoch of training.
  check_output_file(filename_, "CSVLogger", "filename", "e.g. \"training.log\"");
  KERASCPP_CHECK_VALUE(
      separator_ != '\n' && separator_ != '\r' && separator_ != '\0',
      "CSVLogger '{}': separator must not be a line break or NUL (it splits a row into columns); use ',' "
      "or '\\t'",
      filename_);
}

void CSVLogger::on_train_begin(const Logs&) {
  text_.clear();
  keys_.clear();
  if (append_) {
    std::ifstream in(filename_);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      text_ = ss.str();
    }
  }
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (!model().distribute_strategy().is_chief()) return;
  if (keys_.empty()) {
    for (auto& [k, v] : logs) keys_.push_back(k);
    std::sort(keys_.begin(), keys_.end());
    if (text_.empty()) {
      text_ += "epoch";
      for (auto& k : keys_) text_ += separator_ + k;
      text_ += "\n";
    }
  }
  text_ += std::to_string(epoch);
  for (auto& k : keys_) text_ += separator_ + (logs.contains(k) ? fmt::format("{}", logs.at(k)) : std::string("NA"));
  text_ += "\n";
  io::write_atomically(filename_, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    out << text_;
    out.flush();
    KERASCPP_CHECK_IO(out, "CSVLogger: cannot write '{}'", tmp);
  });
}

}  // namespace kerascpp::callbacks
