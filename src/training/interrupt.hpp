// Ctrl-C as a clean stop: while any fit/evaluate/predict runs, SIGINT only sets a flag that the
// loops check between batches (Model::request_stop's rules, model.hpp). The handler is installed
// when the first call starts and the previous one put back when the last ends, so a program's
// own SIGINT handling is untouched outside those calls.
#pragma once

namespace kerascpp::detail {

class SigintGuard {
 public:
  SigintGuard();   // the first live guard clears the flag and installs the handler
  ~SigintGuard();  // the last one restores the previous handler and forgets the Ctrl-C
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;
};

// A Ctrl-C arrived while the guards live (false again once the last is gone).
bool sigint_received();

}  // namespace kerascpp::detail
