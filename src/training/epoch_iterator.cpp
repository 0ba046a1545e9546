#include "training/epoch_iterator.hpp"

#include <fmt/format.h>

#include <iostream>
#include <mutex>
#include <string>

#include "check.hpp"
#include "distribute/strategy_impl.hpp"

namespace kerascpp::detail {

namespace {

const char* loop_name(LoopKind kind) {
  return kind == LoopKind::fit ? "fit" : kind == LoopKind::evaluate ? "evaluate" : "predict";
}

Batch unpack(const Example& e, bool need_y, const ModelImpl& m) {
  KERASCPP_CHECK_VALUE(!e.empty(), "Model '{}': the dataset yielded an empty element", m.name);
  const std::size_t n = m.num_inputs();
  if (e.size() < n + (need_y ? 1 : 0)) {
    KERASCPP_CHECK_SHAPE(n != 1,
                         "Model '{}': the dataset yields only inputs; fit/evaluate need (x, y) elements — use "
                         "Dataset::from_tensor_slices(x, y)",
                         m.name);
    throw ShapeError(
        fmt::format("Model '{}' has {} inputs, so its dataset elements must be (input_1, ..., "
                    "input_{}{}), but an element has {} tensors; use "
                    "Dataset::from_tensor_slices({{x_1, ..., x_{}{}}})",
                    m.name, n, n, need_y ? ", y" : "", e.size(), n, need_y ? ", y" : ""));
  }
  KERASCPP_CHECK_SHAPE(e.size() <= n + 2,
                       "Model '{}': the dataset yields elements of {} tensors; give the model's {} input(s), "
                       "then y, then optionally sample_weight (Keras' (x, y, sample_weight))",
                       m.name, e.size(), n);
  Batch b;
  b.x.assign(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(n));
  if (e.size() > n) b.y = e[n];
  if (e.size() > n + 1) b.sample_weight = e[n + 1];
  return b;
}

// Keras 3's EpochIterator warning, word for word, when a positive step count outlasts the data.
void warn_ran_out_of_data(const ModelImpl& m, const char* what) {
  std::cerr << "WARNING: Model '" << m.name << "' " << what
            << "(): Your input ran out of data; interrupting training. Make sure that your dataset or generator can "
               "generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function "
               "when building your dataset.\n";
}

}  // namespace

// What a running fit/evaluate/predict holds for Model::request_stop and Ctrl-C: the outermost
// call forgets an earlier request, and SIGINT becomes a request while any runs.
class EpochIterator::StopScope {
 public:
  explicit StopScope(ModelImpl& m) : m_(m) {
    if (m_.call_depth++ == 0) m_.stop_flag.store(false);
  }
  ~StopScope() { --m_.call_depth; }
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

  // Notes the stop on std::cerr the first time it is seen.
  bool stopping(const char* what, std::int64_t batches) {
    if (!m_.stop_flag.load() && !sigint_received()) return false;
    if (!noted_)
      std::cerr << "Model '" << m_.name << "': " << what << "() "
                << (sigint_received() ? "interrupted (Ctrl-C)" : "stopped by request_stop()") << " after " << batches
                << (batches == 1 ? " batch" : " batches") << " of this "
                << (std::string(what) == "fit" ? "epoch" : "pass") << "; stopping cleanly\n";
    noted_ = true;
    return true;
  }

 private:
  ModelImpl& m_;
  SigintGuard sigint_;
  bool noted_ = false;
};

EpochIterator::EpochIterator(ModelImpl& m, const Dataset& data, LoopKind kind, std::int64_t steps, bool steps_given)
    : m_(m), data_(data), kind_(kind), steps_(steps), steps_given_(steps_given), stop_(std::make_unique<StopScope>(m)) {
  // fit/evaluate/predict split every global batch between the workers whatever the dataset's
  // auto-shard policy (TensorFlow's DATA result); FILE and OFF take effect through
  // experimental_distribute_dataset only. Said once, by the chief, rather than silently.
  const AutoShardPolicy policy = data_.defined() ? data_.options().auto_shard_policy : AutoShardPolicy::AUTO;
  const distribute::Strategy& strategy = m_.strategy();
  static std::once_flag noted;
  if (strategy.num_workers() > 1 && strategy.is_chief() &&
      (policy == AutoShardPolicy::FILE || policy == AutoShardPolicy::OFF))
    std::call_once(noted, [&] {
      std::cerr << "Model '" << m_.name << "': " << loop_name(kind_) << "() splits each global batch between the "
                << strategy.num_workers() << " workers (the DATA policy's result); the dataset's auto_shard_policy "
                << (policy == AutoShardPolicy::FILE ? "FILE" : "OFF")
                << " applies to distribute::experimental_distribute_dataset only (docs/data.md)\n";
    });
}

EpochIterator::~EpochIterator() = default;

void EpochIterator::begin_epoch(int epoch) {
  epoch_ = epoch;
  step_ = 0;
  // With fit's steps_per_epoch the pass carries over epochs (like Keras); otherwise one pass per epoch.
  const bool carry_over = kind_ == LoopKind::fit && steps_given_;
  if (!it_ || !carry_over)
    it_ = m_.staging.with_device_lookahead(data_.make_iterator(static_cast<std::uint64_t>(epoch)));
  // KERASCPP_GPU_PHASES: the fit loop's own time between steps, split (the first replica's table).
  if (kind_ == LoopKind::fit)
    phases_ = detail::strategy_impl(m_.require_compiled("fit").strategy())->context(0).backend;
}

void EpochIterator::skip(std::int64_t n) {
  Example element;
  while (step_ < n && it_->next(element)) ++step_;
}

bool EpochIterator::pull(Example& element) {
  if (phases_) phases_->mark_phase("fit next batch");
  bool got = it_->next(element);
  if (phases_) phases_->mark_phase("fit prepare");
  if (got) return true;
  if (kind_ == LoopKind::fit && steps_given_ && step_ == 0) {
    // fit with steps_per_epoch: a finite dataset that ran out starts its next pass.
    it_ = m_.staging.with_device_lookahead(data_.make_iterator(static_cast<std::uint64_t>(epoch_)));
    return it_->next(element);
  }
  // Like Keras 3: the epoch ends early with a warning (the next one starts a new pass).
  if (steps_given_ && step_ > 0) warn_ran_out_of_data(m_, loop_name(kind_));
  return false;
}

bool EpochIterator::next(Batch& batch) {
  if (interrupted_ || (steps_ >= 0 && step_ >= steps_)) return false;
  Example element;
  if (!pull(element)) return false;
  batch = unpack(element, kind_ != LoopKind::predict, m_);
  if (kind_ == LoopKind::predict) m_.prepare_inference(batch.x);
  else m_.prepare(batch.x);
  return true;
}

void EpochIterator::batch_done() {
  ++step_;
  if (stop_->stopping(loop_name(kind_), step_)) interrupted_ = true;
}

bool EpochIterator::stop_requested() {
  if (stop_->stopping(loop_name(kind_), step_)) interrupted_ = true;
  return interrupted_;
}

}  // namespace kerascpp::detail
