// fit / evaluate / predict: the Keras loops, written once for every strategy.
#include <fmt/format.h>

#include <cmath>

#include "check.hpp"
#include "distribute/parameter_server/ps_task.hpp"
#include "distribute/strategy_impl.hpp"
#include "kerascpp/core/session.hpp"
#include "training/callback_list.hpp"
#include "training/epoch_iterator.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {
namespace {

void require_batched(const Dataset& data, const ModelImpl& m, const char* what) {
  KERASCPP_CHECK_SHAPE(data.is_batched(), "Model '{}': {}() needs a batched dataset; call .batch(batch_size) on it",
                       m.name, what);
}

// Rethrows the exception in flight with `context` in front of its message, as the same
// kerascpp::Error category (callers catch by category; list the categories before their base
// Error); anything else passes through unchanged.
template <class Category, class... Others>
[[noreturn]] void rethrow_with_context(const std::string& context) {
  try {
    throw;
  } catch (const Category& e) { throw Category(context + e.what()); } catch (...) {
    if constexpr (sizeof...(Others) > 0) rethrow_with_context<Others...>(context);
    else throw;
  }
}

// A count of batches: -1 means "all of the data"; 0 and other negatives are mistakes (Keras
// quietly treats 0 as None, which hides a bug in the caller's arithmetic).
void check_steps(std::int64_t steps, const ModelImpl& m, const char* what, const char* option) {
  KERASCPP_CHECK_VALUE(steps > 0 || steps == -1,
                       "Model '{}': {}() {} must be a positive number of batches, or -1 (the default) for all of the "
                       "data; got {}",
                       m.name, what, option, steps);
}

// The verbose level a call runs with: its option, else set_default_verbose()'s, else Keras'
// default for the call (`keras_default`).
int resolve_verbose(const std::optional<int>& option, int keras_default, const ModelImpl& m, const char* what) {
  const int verbose = option ? *option : default_verbose().value_or(keras_default);
  KERASCPP_CHECK_VALUE(
      verbose >= 0 && verbose <= 2,
      "Model '{}': {}() verbose must be 0 (silent), 1 (progress bar) or 2 (one line per epoch); got {}", m.name, what,
      verbose);
  return verbose;
}

// The *_on_batch calls: one global batch through `step`, after the same checks and lazy
// build/bind that fit/evaluate/predict do per batch.
template <class Step>
auto on_batch(ModelImpl& m, const char* what, const Inputs& x, Step step) {
  const detail::CompiledState& c = m.require_compiled(what);
  m.prepare(x);
  return step(c);
}

}  // namespace

callbacks::History Model::fit(const Dataset& data, FitOptions options) {
  ModelImpl& m = *impl_;
  const detail::CompiledState& c = m.require_compiled("fit");
  require_batched(data, m, "fit");
  check_steps(options.steps_per_epoch, m, "fit", "steps_per_epoch");
  check_steps(options.validation_steps, m, "fit", "validation_steps");
  const int verbose = resolve_verbose(options.verbose, 1, m, "fit");
  if (options.validation_data) {
    // Checked before training starts, so a bad validation set does not cost an epoch first.
    require_batched(*options.validation_data, m, "fit (validation_data)");
    const std::int64_t val_card = options.validation_data->cardinality();
    KERASCPP_CHECK_VALUE(val_card != 0,
                         "Model '{}': fit() got an empty validation_data dataset; pass a dataset with at "
                         "least one batch, or leave validation_data unset",
                         m.name);
    KERASCPP_CHECK_VALUE(val_card != Dataset::kInfinite,
                         "Model '{}': fit()'s validation_data repeats forever, so validation would never "
                         "end; apply take(n) to it or remove repeat()",
                         m.name);
  }
  KERASCPP_CHECK_VALUE(options.epochs >= 0 && options.initial_epoch >= 0,
                       "Model '{}': epochs ({}) and initial_epoch ({}) must not be negative", m.name, options.epochs,
                       options.initial_epoch);
  KERASCPP_CHECK_VALUE(options.validation_freq >= 1,
                       "Model '{}': fit() validation_freq must be at least 1 (validate every N epochs), got {}", m.name,
                       options.validation_freq);
  distribute::ParameterServerTask* ps = detail::strategy_impl(c.strategy())->parameter_server();
  if (ps) {
    KERASCPP_CHECK_VALUE(options.steps_per_epoch > 0,
                         "Model '{}': fit() under ParameterServerStrategy needs steps_per_epoch (as Keras does): the "
                         "coordinator dispatches that many steps per epoch to the workers; pass .steps_per_epoch = N",
                         m.name);
    if (!ps->is_coordinator()) {
      // A worker runs the coordinator's steps on the batches it sends, until the coordinator's fit ends.
      ps->serve_steps([&](const distribute::StepBatch& b) {
        m.prepare(b.inputs);
        return m.train_step(b.inputs, b.targets, b.sample_weight).flatten();
      });
      return callbacks::History();
    }
  }
  std::int64_t card = data.cardinality();
  KERASCPP_CHECK_VALUE(card != 0, "Model '{}': fit() got an empty dataset", m.name);
  KERASCPP_CHECK_VALUE(card != Dataset::kInfinite || options.steps_per_epoch > 0,
                       "Model '{}': the dataset repeats forever; pass steps_per_epoch to fit()", m.name);
  std::int64_t steps = options.steps_per_epoch > 0 ? options.steps_per_epoch : (card >= 0 ? card : -1);

  auto history = std::make_shared<callbacks::History>();
  detail::EpochIterator epochs(m, data, detail::LoopKind::fit, steps, options.steps_per_epoch > 0);
  auto progbar = std::make_shared<callbacks::ProgbarLogger>(verbose);
  progbar->set_params(options.epochs, steps);
  detail::CallbackList cbs(*this, options.callbacks, progbar.get(), history.get());
  stop_training = false;

  Logs empty;
  m.position.clear_resume();
  cbs.on_train_begin(empty);  // BackupAndRestore may ask to resume here
  int first_epoch = options.initial_epoch;
  std::optional<detail::ResumePoint> resume = m.position.take_resume();
  if (resume) first_epoch = resume->epoch;
  bool class_weight_checked = false;
  for (int epoch = first_epoch; epoch < options.epochs && !stop_training; ++epoch) {
    cbs.on_epoch_begin(epoch, empty);
    StepTotals& epoch_totals = m.position.begin_epoch(epoch);
    epochs.begin_epoch(epoch);
    if (resume && resume->epoch == epoch) {
      // Replay the data order up to where the backup was taken; the epoch's sums come from the backup.
      epochs.skip(resume->step);
      epoch_totals = resume->totals;
      m.position.set_steps_done(epochs.step());
      resume.reset();
    }
    detail::Batch batch;
    while (!stop_training && epochs.next(batch)) {
      auto& [x, y, sw] = batch;
      if (!options.class_weight.empty()) {
        KERASCPP_CHECK_VALUE(!sw.defined(),
                             "Model '{}': You cannot `class_weight` and `sample_weight` at the same time; the dataset "
                             "yields (x, y, sample_weight), so drop class_weight or the weights",
                             m.name);
        if (!class_weight_checked) {  // needs the built graph (a Sequential builds on its first batch)
          const auto& outputs = m.require_graph("fit").outputs();
          const Shape& out = outputs.at(0).shape();
          detail::check_class_weight(options.class_weight, outputs.size(), out.empty() ? 1 : out.back(),
                                     c.loss().name(), m.name);
          class_weight_checked = true;
        }
        sw = detail::class_weight_to_sample_weight(y, options.class_weight, m.name);
      }
      const std::int64_t step = epochs.step();
      cbs.on_train_batch_begin(step, empty);
      epoch_totals.add(m.train_step(x, y, sw));
      m.position.set_steps_done(step + 1);
      Logs logs = c.logs_from(epoch_totals);
      cbs.on_train_batch_end(step, logs);
      epochs.batch_done();
    }
    KERASCPP_CHECK_VALUE(epochs.step() != 0, "Model '{}': the training dataset produced no batches", m.name);
    // ParameterServerStrategy: the chief's model catches up with the ps tasks (variables and
    // optimizer state) before validation and the epoch-end callbacks (checkpoints) read it.
    if (ps) ps->pull(m.bound_trainable(), &c.optimizer());
    Logs logs = c.logs_from(epoch_totals);
    // A stopped epoch skips validation: it would stop after one batch anyway, and the user asked to stop.
    bool validate = options.validation_data && (epoch + 1) % options.validation_freq == 0 && !epochs.interrupted();
    if (validate) {
      EvaluateOptions eo;
      eo.verbose = 0;  // validation never prints, whatever the session default
      eo.steps = options.validation_steps;
      for (auto& cb : options.callbacks) eo.callbacks.push_back(cb);
      Logs val;
      try {
        val = evaluate(*options.validation_data, eo);
      } catch (const Error&) {
        rethrow_with_context<ShapeError, ValueError, IOError, DeviceError, StateError, Error>(
            fmt::format("fit() validation_data (after epoch {}): ", epoch + 1));
      }
      for (auto& [k, v] : val) logs.set("val_" + k, v);
    }
    logs.set("learning_rate", c.optimizer().learning_rate());
    if (epochs.stop_requested()) stop_training = true;  // also a request during validation
    cbs.on_epoch_end(epoch, logs);
  }
  if (ps) ps->end_fit();  // the workers' fit returns
  cbs.on_train_end(empty);
  cbs.detach();
  return *history;
}

Logs Model::evaluate(const Dataset& data, EvaluateOptions options) {
  ModelImpl& m = *impl_;
  const detail::CompiledState& c = m.require_compiled("evaluate");
  require_batched(data, m, "evaluate");
  check_steps(options.steps, m, "evaluate", "steps");
  const int verbose = resolve_verbose(options.verbose, 1, m, "evaluate");
  KERASCPP_CHECK_VALUE(data.cardinality() != 0, "Model '{}': evaluate() got an empty dataset", m.name);
  KERASCPP_CHECK_VALUE(data.cardinality() != Dataset::kInfinite || options.steps > 0,
                       "Model '{}': the dataset repeats forever; pass steps to evaluate()", m.name);
  detail::EpochIterator pass(m, data, detail::LoopKind::evaluate, options.steps > 0 ? options.steps : -1,
                             options.steps > 0);
  auto progbar = std::make_shared<callbacks::ProgbarLogger>(verbose);
  std::int64_t steps = options.steps > 0 ? options.steps : data.cardinality();
  progbar->set_test_steps(steps);
  detail::CallbackList cbs(*this, options.callbacks, progbar.get());
  Logs empty;
  cbs.on_test_begin(empty);
  StepTotals totals = c.zero_totals();
  pass.begin_epoch(0);
  detail::Batch batch;
  while (pass.next(batch)) {
    const std::int64_t step = pass.step();
    cbs.on_test_batch_begin(step, empty);
    totals.add(m.test_step(batch.x, batch.y, batch.sample_weight));
    Logs logs = c.logs_from(totals);
    cbs.on_test_batch_end(step, logs);
    pass.batch_done();
  }
  KERASCPP_CHECK_VALUE(pass.step() != 0, "Model '{}': the evaluation dataset produced no batches", m.name);
  Logs logs = c.logs_from(totals);
  cbs.on_test_end(logs);
  return logs;
}

Tensor Model::predict(const Dataset& data, PredictOptions options) {
  ModelImpl& m = *impl_;
  require_batched(data, m, "predict");
  check_steps(options.steps, m, "predict", "steps");
  resolve_verbose(options.verbose, 0, m, "predict");  // checked; predict prints no progress
  KERASCPP_CHECK_VALUE(data.cardinality() != Dataset::kInfinite || options.steps > 0,
                       "Model '{}': the dataset repeats forever; pass steps to predict()", m.name);
  detail::EpochIterator pass(m, data, detail::LoopKind::predict, options.steps > 0 ? options.steps : -1,
                             options.steps > 0);
  detail::CallbackList cbs(*this, options.callbacks);
  Logs empty;
  cbs.on_predict_begin(empty);
  std::vector<Tensor> parts;
  std::int64_t rows = 0;
  pass.begin_epoch(0);
  detail::Batch batch;
  while (pass.next(batch)) {
    const std::int64_t step = pass.step();
    cbs.on_predict_batch_begin(step, empty);
    parts.push_back(m.predict_step(batch.x));
    rows += parts.back().dim(0);
    cbs.on_predict_batch_end(step, empty);
    pass.batch_done();
  }
  KERASCPP_CHECK_VALUE(!parts.empty(), "Model '{}': predict() got an empty dataset", m.name);
  Shape shape = parts[0].shape();
  shape[0] = rows;
  Tensor out(shape);
  std::int64_t at = 0;
  for (auto& p : parts) {
    Tensor dst = out.slice(at, at + p.dim(0));
    dst.copy_from(p);
    at += p.dim(0);
  }
  cbs.on_predict_end(empty);
  return out;
}

Logs Model::train_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight) {
  return train_on_batch(std::vector<Tensor>{x}, y, sample_weight);
}

Logs Model::train_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight) {
  return on_batch(*impl_, "train_on_batch", xs,
                  [&](const detail::CompiledState& c) { return c.logs_from(impl_->train_step(xs, y, sample_weight)); });
}

Logs Model::test_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight) {
  return test_on_batch(std::vector<Tensor>{x}, y, sample_weight);
}

Logs Model::test_on_batch(const std::vector<Tensor>& xs, const Tensor& y, const Tensor& sample_weight) {
  return on_batch(*impl_, "test_on_batch", xs,
                  [&](const detail::CompiledState& c) { return c.logs_from(impl_->test_step(xs, y, sample_weight)); });
}

Tensor Model::predict_on_batch(const Tensor& x) { return predict_on_batch(std::vector<Tensor>{x}); }

Tensor Model::predict_on_batch(const std::vector<Tensor>& xs) {
  impl_->prepare_inference(xs);  // compile() is not needed to predict
  return impl_->predict_step(xs, true);
}

}  // namespace kerascpp
