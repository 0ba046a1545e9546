#include "check.hpp"
#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/training/model.hpp"

namespace kerascpp::callbacks {

Model& Callback::model() const {
  KERASCPP_CHECK_STATE(model_, "Callback::model(): this callback is not attached to a model (it is set by fit)");
  return *model_;
}

void History::on_epoch_end(int e, const Logs& logs) {
  epoch.push_back(e);
  for (auto& [k, v] : logs) history[k].push_back(v);
}

}  // namespace kerascpp::callbacks
