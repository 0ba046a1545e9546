// Moving batches to GPU replicas ahead of time (see device_staging.hpp).
#include "training/device_staging.hpp"

#include "distribute/strategy_impl.hpp"

namespace kerascpp::detail {

void DeviceStaging::set_strategy(distribute::Strategy strategy) {
  strategy_ = std::move(strategy);
  staged_.clear();
}

bool DeviceStaging::replicas_on_gpu() const {
  return strategy_ && strategy_->devices().front().kind == Device::Kind::gpu;
}

const PendingUpload* DeviceStaging::find_upload(const StagedTensor& s, const Tensor& t, int replica) {
  if (!t.defined() || !s.host.defined() || s.host.raw() != t.raw() || s.host.shape() != t.shape()) return nullptr;
  return &s.per_replica.at(static_cast<std::size_t>(replica));
}

void DeviceStaging::stage_batch(const Example& batch) {
  if (!replicas_on_gpu() || batch.empty()) return;
  // Malformed batches are left to the step, which reports them with the model's name.
  const Tensor& x = batch.front();
  for (const Tensor& t : batch)
    if (!t.defined() || t.rank() == 0 || t.dim(0) != x.dim(0) || !t.on_host()) return;
  const distribute::Strategy& strategy = *strategy_;
  auto ranges = strategy.shard_ranges(x.dim(0));
  auto upload = [&](const Tensor& t) {
    StagedTensor s{t, {}};
    for (int r = 0; r < detail::strategy_impl(strategy)->num_replicas(); ++r) {
      const ReplicaContext& ctx = detail::strategy_impl(strategy)->context(r);
      auto [begin, end] = ranges[static_cast<std::size_t>(ctx.replica_id_in_sync)];
      s.per_replica.push_back(upload_async(t.slice(begin, end), *ctx.backend));
    }
    return s;
  };
  StagedBatch b;
  for (const Tensor& t : batch) b.push_back(upload(t));
  staged_.push_back(std::move(b));
  while (staged_.size() > 2) staged_.pop_front();  // a batch fetched but never stepped on
}

Tensor DeviceStaging::replica_rows(ReplicaContext& ctx, const Tensor& global, std::int64_t begin,
                                   std::int64_t end) const {
  for (const StagedBatch& b : staged_) {
    for (const StagedTensor& s : b) {
      if (const PendingUpload* up = find_upload(s, global, ctx.replica_id)) {
        wait_upload(*up, *ctx.backend);
        return up->tensor;
      }
    }
  }
  return global.slice(begin, end).to(ctx.backend->device());
}

void DeviceStaging::unstage(const Tensor& x) {
  for (auto it = staged_.begin(); it != staged_.end(); ++it)
    if (x.defined() && !it->empty() && it->front().host.defined() && it->front().host.raw() == x.raw()) {
      staged_.erase(it);
      return;
    }
}

class DeviceLookahead final : public Dataset::Iterator {
 public:
  DeviceLookahead(std::unique_ptr<Dataset::Iterator> inner, DeviceStaging& staging)
      : inner_(std::move(inner)), staging_(staging) {}
  // Whatever it staged and nobody stepped on must not be mistaken later for a batch that happens
  // to have the same memory and shape (e.g. a buffer the caller refills).
  ~DeviceLookahead() override { staging_.clear(); }

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
    if (has_next_) staging_.stage_batch(next_);
  }

  std::unique_ptr<Dataset::Iterator> inner_;
  DeviceStaging& staging_;
  Example next_;
  bool primed_ = false, has_next_ = false;
};

std::unique_ptr<Dataset::Iterator> DeviceStaging::with_device_lookahead(std::unique_ptr<Dataset::Iterator> it) {
  if (!replicas_on_gpu()) return it;
  return std::make_unique<DeviceLookahead>(std::move(it), *this);
}

}  // namespace kerascpp::detail
