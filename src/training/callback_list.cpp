#include "training/callback_list.hpp"

namespace kerascpp::detail {

CallbackList::CallbackList(Model& model, const std::vector<callbacks::CallbackRef>& user, callbacks::Callback* first,
                           callbacks::Callback* last) {
  if (first) callbacks_.push_back(first);
  for (const callbacks::CallbackRef& r : user) callbacks_.push_back(r.get());
  if (last) callbacks_.push_back(last);
  for (callbacks::Callback* c : callbacks_) c->set_model(&model);
}

void CallbackList::detach() {
  for (callbacks::Callback* c : callbacks_) c->set_model(nullptr);
}

}  // namespace kerascpp::detail
