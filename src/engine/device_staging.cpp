// Moving batches to GPU replicas ahead of time. fit() looks one batch ahead and stages it: each
// replica's rows go through pinned memory on its GPU's copy stream while the current step runs.
// On CPU replicas nothing is staged and replica_rows is a zero-copy view.
#include "engine/model_impl.hpp"
#include "distribute/strategy_impl.hpp"

namespace kerascpp {

bool ModelImpl::replicas_on_gpu() const { return strategy.devices().front().kind == Device::Kind::gpu; }

namespace {
const detail::PendingUpload* find_upload(const ModelImpl::StagedTensor& s, const Tensor& t, int replica) {
  if (!t.defined() || !s.host.defined() || s.host.raw() != t.raw() || s.host.shape() != t.shape()) return nullptr;
  return &s.per_replica.at(static_cast<std::size_t>(replica));
}
}  // namespace

void ModelImpl::stage_batch(const Tensor& x, const Tensor& y) {
  if (!replicas_on_gpu()) return;
  // Malformed batches are left to the step, which reports them with the model's name.
  if (!x.defined() || x.rank() == 0 || !x.on_host()) return;
  if (y.defined() && (y.rank() == 0 || y.dim(0) != x.dim(0) || !y.on_host())) return;
  auto ranges = strategy.shard_ranges(x.dim(0));
  auto upload = [&](const Tensor& t) {
    StagedTensor s{t, {}};
    for (int r = 0; r < strategy.num_replicas_in_sync(); ++r) {
      auto [begin, end] = ranges[static_cast<std::size_t>(r)];
      s.per_replica.push_back(detail::upload_async(t.slice(begin, end), *strategy.impl()->context(r).backend));
    }
    return s;
  };
  StagedBatch b;
  b.x = upload(x);
  if (y.defined()) b.y = upload(y);
  staged.push_back(std::move(b));
  while (staged.size() > 2) staged.pop_front();  // a batch fetched but never stepped on
}

Tensor ModelImpl::replica_rows(ReplicaContext& ctx, const Tensor& global, std::int64_t begin, std::int64_t end) const {
  for (const StagedBatch& b : staged) {
    for (const StagedTensor* s : {&b.x, &b.y}) {
      if (const detail::PendingUpload* up = find_upload(*s, global, ctx.replica_id)) {
        detail::wait_upload(*up, *ctx.backend);
        return up->tensor;
      }
    }
  }
  return global.slice(begin, end).to(ctx.backend->device());
}

void ModelImpl::unstage(const Tensor& x) {
  for (auto it = staged.begin(); it != staged.end(); ++it)
    if (x.defined() && it->x.host.defined() && it->x.host.raw() == x.raw()) {
      staged.erase(it);
      return;
    }
}

namespace {

class DeviceLookahead final : public Dataset::Iterator {
 public:
  DeviceLookahead(std::unique_ptr<Dataset::Iterator> inner, ModelImpl& model)
      : inner_(std::move(inner)), model_(model) {}
  // Whatever it staged and nobody stepped on must not be mistaken later for a batch that happens
  // to have the same memory and shape (e.g. a buffer the caller refills).
  ~DeviceLookahead() override { model_.staged.clear(); }

  bool next(Example& out) override {
    if (!primed_) {
      primed_ = true;
      fetch();
    }
    if (!has_next_) return false;
    out = std::move(next_);
    fetch();  // its upload overlaps the step the caller is about to run on `out`
    return true;
  }

 private:
  void fetch() {
    next_.clear();
    has_next_ = inner_->next(next_);
    if (has_next_ && !next_.empty()) model_.stage_batch(next_[0], next_.size() > 1 ? next_[1] : Tensor());
  }

  std::unique_ptr<Dataset::Iterator> inner_;
  ModelImpl& model_;
  Example next_;
  bool primed_ = false, has_next_ = false;
};

}  // namespace

std::unique_ptr<Dataset::Iterator> ModelImpl::with_device_lookahead(std::unique_ptr<Dataset::Iterator> it) {
  if (!replicas_on_gpu()) return it;
  return std::make_unique<DeviceLookahead>(std::move(it), *this);
}

}  // namespace kerascpp
