#include "training/predict_recordings.hpp"

namespace kerascpp::detail {

namespace {

// The entry key: each input's dtype and per-batch shape (the batch size included).
std::vector<std::int64_t> key_of(const std::vector<Tensor>& x, std::int64_t rows) {
  std::vector<std::int64_t> key;
  for (const Tensor& t : x) {
    key.push_back(static_cast<std::int64_t>(t.dtype()));
    key.push_back(t.rank());
    key.push_back(rows);
    for (std::int64_t d = 1; d < t.rank(); ++d) key.push_back(t.dim(d));
  }
  return key;
}

}  // namespace

void PredictRecordings::sweep(const Entry* keep) {
  int live = 0;
  for (auto& [key, e] : entries_)
    if (e.work && !e.work->valid()) e.drop();
    else if (e.work) ++live;
  while (live > kMaxLive) {
    Entry* oldest = nullptr;
    for (auto& [key, e] : entries_)
      if (e.work && &e != keep && (!oldest || e.last_use < oldest->last_use)) oldest = &e;
    if (!oldest) break;
    oldest->drop();
    --live;
  }
}

bool PredictRecordings::run(ReplicaContext& ctx, const Forward& forward, const std::vector<Tensor>& x,
                            std::int64_t begin, std::int64_t end, Tensor& dst) {
  if (ctx.backend->device().kind != Device::Kind::gpu) return false;  // only the GPU backend records
  Entry& e = entries_[key_of(x, end - begin)];
  ++e.batches;
  e.last_use = ++uses_;
  if (e.unrecordable) return false;
  if (e.work && !e.work->valid()) e.drop();
  if (!e.work) {
    // The first batch of a shape runs as usual; so does every one once recordings keep going stale.
    if (e.batches < 2) return false;
    if (e.recordings >= kMaxRecordings) {
      e.unrecordable = true;
      return false;
    }
    ++e.recordings;
    for (const Tensor& t : x) {
      e.inputs.emplace_back(t.slice(begin, end).shape(), t.dtype(), ctx.backend->device());
      e.inputs.back().copy_from(t.slice(begin, end));
    }
    e.work = ctx.backend->record([&] { e.output = forward(e.inputs); });
    if (!e.work) {
      e.unrecordable = true;
      e.drop();
      return false;
    }
    sweep(&e);
  } else {
    for (std::size_t i = 0; i < x.size(); ++i) e.inputs[i].copy_from(x[i].slice(begin, end));
  }
  e.work->replay();
  ++e.replays;
  dst.copy_from(e.output);
  return true;
}

}  // namespace kerascpp::detail
