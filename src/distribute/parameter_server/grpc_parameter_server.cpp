// ParameterServerStrategy over gRPC (parameter_server.proto): the ps tasks' ParameterServer
// service, the workers' StepRunner service, and the coordinator (chief) that drives both. Every
// request carries the job's token and is refused without it; every server listens on its TF_CONFIG
// address only; every wait on another task is bounded and names that task when it fails.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "check.hpp"
#include "distribute/parameter_server/ps_task.hpp"
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/training/optimizers.hpp"
#include "parameter_server.grpc.pb.h"

namespace kerascpp::distribute {
namespace pb = kerascpp::parameter_server;
using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;  // gRPC's deadlines
using std::chrono::milliseconds;

namespace {

// A step's batch or a table shard; larger messages are refused by gRPC itself.
constexpr int kMaxMessageBytes = 256 << 20;
constexpr int kMaxRank = 8;

long long seconds(milliseconds t) { return std::chrono::duration_cast<std::chrono::seconds>(t).count(); }

// Compared in constant time: how long a wrong token takes to refuse says nothing about the right one.
bool token_matches(const std::string& got, const std::string& want) {
  if (want.empty()) return false;
  unsigned char diff = got.size() == want.size() ? 0 : 1;
  for (std::size_t i = 0; i < got.size(); ++i) diff |= static_cast<unsigned char>(got[i] ^ want[i % want.size()]);
  return diff == 0;
}

grpc::Status refused() {
  return {grpc::StatusCode::PERMISSION_DENIED,
          "the request does not carry this job's token; set KERASCPP_CLUSTER_TOKEN to the job's secret"};
}

void to_proto(const Tensor& tensor, pb::TensorData* out) {
  const Tensor t = tensor.to(Device{});
  for (std::int64_t d : t.shape()) out->add_shape(d);
  out->set_dtype(static_cast<int>(t.dtype()));
  out->set_data(static_cast<const char*>(t.raw()), t.nbytes());
}

// The tensor a request describes, or the reason it is malformed (never a crash or a huge allocation:
// the element count must match the bytes that arrived).
std::optional<Tensor> from_proto(const pb::TensorData& d, std::string& why) {
  if (d.dtype() < 0 || d.dtype() > static_cast<int>(DType::float16)) {
    why = fmt::format("unknown dtype {}", d.dtype());
    return std::nullopt;
  }
  if (d.shape_size() > kMaxRank) {
    why = fmt::format("rank {} is over {}", d.shape_size(), kMaxRank);
    return std::nullopt;
  }
  const auto dtype = static_cast<DType>(d.dtype());
  Shape shape;
  std::uint64_t n = 1;
  for (std::int64_t dim : d.shape()) {
    if (dim < 0 || dim > kMaxMessageBytes) {
      why = fmt::format("dimension {} is out of range", dim);
      return std::nullopt;
    }
    n *= static_cast<std::uint64_t>(dim);
    if (n > static_cast<std::uint64_t>(kMaxMessageBytes)) {
      why = "the tensor is larger than a message may be";
      return std::nullopt;
    }
    shape.push_back(dim);
  }
  if (n * dtype_size(dtype) != d.data().size()) {
    why = fmt::format("shape and dtype call for {} bytes but {} arrived", n * dtype_size(dtype), d.data().size());
    return std::nullopt;
  }
  Tensor t(shape, dtype, Device{});
  if (!d.data().empty()) std::memcpy(t.raw(), d.data().data(), d.data().size());
  return t;
}

grpc::Status malformed(const std::string& what, const std::string& why) {
  return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("malformed request: {}: {}", what, why)};
}

// How a task ends its wait: still running, finished normally, or stopped with a reason.
struct Outcome {
  bool done = false;
  std::string error;  // empty: finished normally
};

// What a ps task's and a worker task's services share: the job token, the coordinator's last
// contact, and how the coordinator's Finish / Abort end the task's wait.
class CoordinatedTask {
 protected:
  CoordinatedTask(std::string token, std::string me) : token_(std::move(token)), me_(std::move(me)) {}
  void touch() { last_contact_ = Clock::now(); }
  grpc::Status end(const pb::ControlRequest* request, bool abort) {
    if (!token_matches(request->token(), token_)) return refused();
    {
      std::lock_guard lock(mu_);
      outcome_ = {true, abort ? (request->reason().empty() ? std::string("aborted") : request->reason()) : ""};
    }
    cv_.notify_all();
    return grpc::Status::OK;
  }

  const std::string token_, me_;
  std::mutex mu_;
  std::condition_variable cv_;
  Clock::time_point last_contact_ = Clock::now();  // startup counts as contact: the chief has `timeout` to come
  Outcome outcome_;
};

// ---------------------------------------------------------------- ps task

class PsService final : public pb::ParameterServer::Service, CoordinatedTask {
 public:
  PsService(std::string token, std::string me) : CoordinatedTask(std::move(token), std::move(me)) {}

  grpc::Status Create(grpc::ServerContext*, const pb::CreateRequest* request, pb::Empty*) override {
    if (!token_matches(request->token(), token_)) return refused();
    std::lock_guard lock(mu_);
    touch();
    if (optimizer_) return grpc::Status::OK;  // a retried Create: the variables exist already
    optimizers::OptimizerRef optimizer;
    try {
      optimizer = optimizers::deserialize(request->optimizer_json());
    } catch (const Error& e) { return malformed("the optimizer", e.what()); }
    std::vector<std::unique_ptr<Variable>> shards;
    std::map<std::string, std::size_t> index;
    for (const pb::Shard& s : request->shards()) {
      std::string why;
      auto value = from_proto(s.value(), why);
      if (!value) return malformed(fmt::format("shard '{}'", s.name()), why);
      if (value->dtype() != DType::float32) return malformed(fmt::format("shard '{}'", s.name()), "not float32");
      if (!index.emplace(s.name(), shards.size()).second)
        return malformed(fmt::format("shard '{}'", s.name()), "listed twice");
      shards.push_back(std::make_unique<Variable>(s.name(), *value, true));
    }
    backend_ = make_cpu_backend(1);  // elementwise updates of small shards: one thread is plenty
    std::vector<Variable*> raw;
    for (auto& v : shards) raw.push_back(v.get());
    optimizer->build(raw, 1);  // each slot beside its shard, here
    std::string held;
    for (auto& v : shards) held += fmt::format(" {} {}", v->name(), shape_str(v->shape()));
    std::cerr << fmt::format("ParameterServerStrategy: {} holds {} shard(s) (variable/shard shape):{}\n", me_,
                             shards.size(), held);
    optimizer_ = optimizer;
    shards_ = std::move(shards);
    index_ = std::move(index);
    return grpc::Status::OK;
  }

  grpc::Status Pull(grpc::ServerContext*, const pb::PullRequest* request, pb::PullReply* reply) override {
    if (!token_matches(request->token(), token_)) return refused();
    std::lock_guard lock(mu_);
    touch();
    if (!optimizer_) return {grpc::StatusCode::FAILED_PRECONDITION, me_ + " holds no variables yet"};
    auto add = [&](std::size_t i) {
      pb::Shard* s = reply->add_shards();
      s->set_name(shards_[i]->name());
      to_proto(shards_[i]->value(0), s->mutable_value());
      if (request->with_state())
        for (Tensor* t : variable_state(*optimizer_.get(), i, shards_.size())) to_proto(*t, s->add_state());
    };
    if (request->names().empty())
      for (std::size_t i = 0; i < shards_.size(); ++i) add(i);
    for (const std::string& name : request->names()) {
      auto it = index_.find(name);
      if (it == index_.end()) return malformed("pull", fmt::format("{} holds no shard '{}'", me_, name));
      add(it->second);
    }
    return grpc::Status::OK;
  }

  grpc::Status Push(grpc::ServerContext*, const pb::PushRequest* request, pb::Empty*) override {
    if (!token_matches(request->token(), token_)) return refused();
    std::lock_guard lock(mu_);
    touch();
    if (!optimizer_) return {grpc::StatusCode::FAILED_PRECONDITION, me_ + " holds no variables yet"};
    // A step's push carries every shard held here (steps are synchronous): checked in full before
    // any of it is applied, so a malformed push changes nothing.
    if (static_cast<std::size_t>(request->gradients_size()) != shards_.size())
      return malformed("push", fmt::format("{} gradients for {} shards", request->gradients_size(), shards_.size()));
    std::vector<Tensor> grads(shards_.size());
    for (const pb::Shard& g : request->gradients()) {
      auto it = index_.find(g.name());
      if (it == index_.end()) return malformed("push", fmt::format("{} holds no shard '{}'", me_, g.name()));
      std::string why;
      auto value = from_proto(g.value(), why);
      if (!value) return malformed(fmt::format("gradient of '{}'", g.name()), why);
      if (value->dtype() != DType::float32 || value->shape() != shards_[it->second]->shape())
        return malformed(fmt::format("gradient of '{}'", g.name()), "its shape or dtype is not the shard's");
      if (grads[it->second].defined()) return malformed("push", fmt::format("shard '{}' twice", g.name()));
      grads[it->second] = *value;
    }
    std::vector<Variable*> raw;
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      shards_[i]->grad(0).copy_from(grads[i]);
      raw.push_back(shards_[i].get());
    }
    ReplicaContext ctx;
    ctx.backend = backend_.get();
    if (optimizer_->prepare_gradients(ctx, raw))
      for (std::size_t i = 0; i < raw.size(); ++i) optimizer_->apply(*backend_, 0, i, *raw[i]);
    optimizer_->finish_step();
    return grpc::Status::OK;
  }

  grpc::Status Ping(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    if (!token_matches(request->token(), token_)) return refused();
    std::lock_guard lock(mu_);
    touch();
    return grpc::Status::OK;
  }
  grpc::Status Finish(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    return end(request, false);
  }
  grpc::Status Abort(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    return end(request, true);
  }

  // Waits until the coordinator finishes or aborts the job, or goes quiet for `timeout`.
  Outcome wait(milliseconds timeout, const std::string& coordinator) {
    std::unique_lock lock(mu_);
    for (;;) {
      if (outcome_.done) return outcome_;
      if (Clock::now() - last_contact_ > timeout)
        return {true, fmt::format("{} heard nothing from the coordinator {} for {} s: it died, stopped or cannot "
                                  "reach this task",
                                  me_, coordinator, seconds(timeout))};
      cv_.wait_for(lock, milliseconds(200));
    }
  }

 private:
  optimizers::OptimizerRef optimizer_;
  std::unique_ptr<Backend> backend_;
  std::vector<std::unique_ptr<Variable>> shards_;
  std::map<std::string, std::size_t> index_;
};

std::unique_ptr<grpc::Server> serve(const std::string& address, grpc::Service* service, const std::string& who) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(service);
  auto server = builder.BuildAndStart();
  KERASCPP_CHECK_DEVICE(server && bound_port != 0,
                        "ParameterServerStrategy: {} could not listen on its TF_CONFIG address {} (is the port in use, "
                        "or the host not an address of this machine?); free the port or fix TF_CONFIG",
                        who, address);
  return server;
}

[[noreturn]] void run_ps_task(const TFConfigClusterResolver& resolver, const std::string& token, milliseconds timeout) {
  const std::string address = resolver.task_address("ps", resolver.task_id());
  const std::string me = fmt::format("ps:{} ({})", resolver.task_id(), address);
  PsService service(token, me);
  auto server = serve(address, &service, me);
  const Outcome outcome = service.wait(timeout, fmt::format("chief:0 ({})", resolver.task_address("chief", 0)));
  server->Shutdown(WallClock::now() + std::chrono::seconds(1));
  if (!outcome.error.empty()) std::cerr << "ParameterServerStrategy: " << me << " stops: " << outcome.error << '\n';
  std::cerr.flush();
  std::fflush(nullptr);
  // The process ends here (see ParameterServerStrategy): the program's own code after the
  // strategy's construction is for chief and worker tasks.
  std::_Exit(outcome.error.empty() ? 0 : 1);
}

// ---------------------------------------------------------------- worker task

class StepService final : public pb::StepRunner::Service, CoordinatedTask {
 public:
  StepService(std::string token, std::string me) : CoordinatedTask(std::move(token), std::move(me)) {}

  grpc::Status RunStep(grpc::ServerContext* context, const pb::StepRequest* request, pb::StepReply* reply) override {
    if (!token_matches(request->token(), token_)) return refused();
    StepBatch batch;
    std::string why;
    for (const auto& x : request->inputs()) {
      auto t = from_proto(x, why);
      if (!t) return malformed("a step's input", why);
      batch.inputs.push_back(*t);
    }
    if (batch.inputs.empty()) return malformed("a step", "no inputs");
    auto y = from_proto(request->targets(), why);
    if (!y) return malformed("a step's targets", why);
    batch.targets = *y;
    if (request->has_sample_weight()) {
      auto sw = from_proto(request->sample_weight(), why);
      if (!sw) return malformed("a step's sample weights", why);
      batch.sample_weight = *sw;
    }
    std::unique_lock lock(mu_);
    touch();
    if (job_) return {grpc::StatusCode::FAILED_PRECONDITION, me_ + " is already running a step"};
    job_ = std::move(batch);
    result_.reset();
    cv_.notify_all();
    while (!result_ && !outcome_.done && !context->IsCancelled()) cv_.wait_for(lock, milliseconds(200));
    if (!result_) return {grpc::StatusCode::ABORTED, fmt::format("{} stopped before the step ended", me_)};
    auto result = std::move(*result_);
    result_.reset();
    if (!result.second.empty()) return {grpc::StatusCode::ABORTED, result.second};
    for (double v : result.first) reply->add_totals(v);
    return grpc::Status::OK;
  }

  grpc::Status Ping(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    if (!token_matches(request->token(), token_)) return refused();
    std::lock_guard lock(mu_);
    touch();
    return grpc::Status::OK;
  }
  grpc::Status EndFit(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    return end(request, false);
  }
  grpc::Status Abort(grpc::ServerContext*, const pb::ControlRequest* request, pb::Empty*) override {
    return end(request, true);
  }

  // The worker's fit: runs each step the coordinator sends until it ends the fit.
  void serve(const std::function<std::vector<double>(const StepBatch&)>& step, milliseconds timeout,
             const std::string& coordinator) {
    std::unique_lock lock(mu_);
    touch();  // entering fit counts as contact: the coordinator has `timeout` to come
    for (;;) {
      if (outcome_.done) {
        const Outcome o = outcome_;
        outcome_ = {};
        KERASCPP_CHECK_DEVICE(o.error.empty(), "ParameterServerStrategy: {} stops: {}", me_, o.error);
        return;
      }
      KERASCPP_CHECK_DEVICE(Clock::now() - last_contact_ <= timeout,
                            "ParameterServerStrategy: {} heard nothing from the coordinator {} for {} s: it died, "
                            "stopped or cannot reach this task",
                            me_, coordinator, seconds(timeout));
      if (!job_ || result_) {
        cv_.wait_for(lock, milliseconds(200));
        continue;
      }
      StepBatch batch = std::move(*job_);
      lock.unlock();
      std::pair<std::vector<double>, std::string> result;
      std::exception_ptr failed;
      try {
        result.first = step(batch);
      } catch (const std::exception& e) {
        result.second = fmt::format("{} failed the step: {}", me_, e.what());
        failed = std::current_exception();
      }
      lock.lock();
      job_.reset();
      result_ = std::move(result);
      touch();
      cv_.notify_all();
      if (failed) std::rethrow_exception(failed);  // the coordinator stops the job; this task stops too
    }
  }

 private:
  std::optional<StepBatch> job_;
  std::optional<std::pair<std::vector<double>, std::string>> result_;
};

// ---------------------------------------------------------------- chief and worker tasks

std::shared_ptr<grpc::Channel> channel_to(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

class GrpcTask final : public ParameterServerTask {
 public:
  GrpcTask(const TFConfigClusterResolver& resolver, VariablePartitioner partitioner, std::string token,
           milliseconds timeout)
      : partitioner_(std::move(partitioner)), token_(std::move(token)), timeout_(timeout) {
    coordinator_ = resolver.task_type() == "chief";
    chief_ = fmt::format("chief:0 ({})", resolver.task_address("chief", 0));
    const auto& cluster = resolver.cluster_spec();
    for (std::size_t i = 0; i < cluster.at("ps").size(); ++i) {
      ps_names_.push_back(fmt::format("ps:{} ({})", i, cluster.at("ps")[i]));
      ps_.push_back(pb::ParameterServer::NewStub(channel_to(cluster.at("ps")[i])));
    }
    const auto& workers = cluster.at("worker");
    if (coordinator_) {
      me_ = chief_;
      for (std::size_t i = 0; i < workers.size(); ++i) {
        worker_names_.push_back(fmt::format("worker:{} ({})", i, workers[i]));
        workers_.push_back(pb::StepRunner::NewStub(channel_to(workers[i])));
      }
      pinger_ = std::thread([this] { ping_loop(); });
    } else {
      me_ = fmt::format("worker:{} ({})", resolver.task_id(), workers.at(static_cast<std::size_t>(resolver.task_id())));
      step_service_ = std::make_unique<StepService>(token_, me_);
      server_ = serve(workers.at(static_cast<std::size_t>(resolver.task_id())), step_service_.get(), me_);
    }
  }

  ~GrpcTask() override {
    if (coordinator_) {
      {
        std::lock_guard lock(mu_);
        stopping_ = true;
      }
      cv_.notify_all();
      pinger_.join();
      // The job is over: the ps tasks end (best effort: a lost one is already reported).
      for (std::size_t p = 0; p < ps_.size(); ++p) {
        pb::ControlRequest request;
        request.set_token(token_);
        pb::Empty reply;
        grpc::ClientContext context;
        context.set_deadline(WallClock::now() + std::chrono::seconds(2));
        (void)ps_[p]->Finish(&context, request, &reply);
      }
    }
    if (server_) server_->Shutdown(WallClock::now() + std::chrono::seconds(1));
  }

  bool is_coordinator() const override { return coordinator_; }

  std::string describe() const override {
    if (coordinator_)
      return fmt::format("ParameterServerStrategy(chief of {} worker(s) and {} ps; cpu:0)", workers_.size(),
                         ps_.size());
    return fmt::format("ParameterServerStrategy({} with {} ps; cpu:0)", me_, ps_.size());
  }

  void create_variables(const std::vector<Variable*>& trainable, const std::string& optimizer_json) override {
    if (created_) return;
    layout(trainable);
    for (std::size_t p = 0; p < ps_.size(); ++p) {
      pb::CreateRequest request;
      request.set_token(token_);
      request.set_optimizer_json(optimizer_json);
      for (const ShardPlacement& s : placements_) {
        if (s.ps != static_cast<int>(p)) continue;
        pb::Shard* shard = request.add_shards();
        shard->set_name(s.name());
        shard->set_row_begin(s.row_begin);
        to_proto(rows_of(trainable[static_cast<std::size_t>(s.variable)]->value(0), s), shard->mutable_value());
      }
      pb::Empty reply;
      grpc::ClientContext context;
      context.set_deadline(WallClock::now() + timeout_);
      context.set_wait_for_ready(true);  // a ps started after the chief is waited for, within the bound
      check(ps_[p]->Create(&context, request, &reply), ps_names_[p], "creating the variables");
    }
    created_ = true;
  }

  std::vector<double> run_step(const StepBatch& batch) override {
    throw_if_lost();
    in_fit_ = true;
    const std::size_t w = next_worker_++ % workers_.size();
    pb::StepRequest request;
    request.set_token(token_);
    request.set_step(steps_++);
    for (const Tensor& x : batch.inputs) to_proto(x, request.add_inputs());
    to_proto(batch.targets, request.mutable_targets());
    if (batch.sample_weight.defined()) to_proto(batch.sample_weight, request.mutable_sample_weight());
    pb::StepReply reply;
    grpc::ClientContext context;
    context.set_deadline(WallClock::now() + timeout_);
    context.set_wait_for_ready(steps_ == 1);  // the first step may reach a worker still starting
    const grpc::Status status = workers_[w]->RunStep(&context, request, &reply);
    if (!status.ok()) {
      // The worker's own report names what failed (e.g. the ps it lost); otherwise the worker is lost.
      const std::string why = status.error_code() == grpc::StatusCode::ABORTED
                                  ? status.error_message()
                                  : fmt::format(
                                        "{} did not answer step {} within {} s ({}): the task died, stopped "
                                        "or is unreachable",
                                        worker_names_[w], steps_ - 1, seconds(timeout_), status.error_message());
      stop_job(why);
      throw_if_lost();
    }
    return {reply.totals().begin(), reply.totals().end()};
  }

  void end_fit() override {
    in_fit_ = false;
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      pb::ControlRequest request;
      request.set_token(token_);
      pb::Empty reply;
      grpc::ClientContext context;
      context.set_deadline(WallClock::now() + timeout_);
      check(workers_[w]->EndFit(&context, request, &reply), worker_names_[w], "the end of fit");
    }
  }

  void pull(const std::vector<Variable*>& trainable, optimizers::Optimizer* state) override {
    if (coordinator_ && !created_) return;  // a fit that ran no step: the chief's values are current
    layout(trainable);
    for (std::size_t p = 0; p < ps_.size(); ++p) {
      pb::PullRequest request;
      request.set_token(token_);
      request.set_with_state(state != nullptr);
      for (const ShardPlacement& s : placements_)
        if (s.ps == static_cast<int>(p)) request.add_names(s.name());
      if (request.names().empty()) continue;
      pb::PullReply reply;
      grpc::ClientContext context;
      context.set_deadline(WallClock::now() + timeout_);
      check(ps_[p]->Pull(&context, request, &reply), ps_names_[p], "a pull of the variables");
      KERASCPP_CHECK_DEVICE(reply.shards_size() == request.names_size(), "{} answered a pull with {} of {} shards",
                            ps_names_[p], reply.shards_size(), request.names_size());
      for (int i = 0; i < reply.shards_size(); ++i) {
        const ShardPlacement& s = placement(request.names(i));
        std::string why;
        auto value = from_proto(reply.shards(i).value(), why);
        Tensor dst = rows_of(trainable[static_cast<std::size_t>(s.variable)]->value(0), s);
        KERASCPP_CHECK_DEVICE(value && value->shape() == dst.shape() && value->dtype() == dst.dtype(),
                              "{} answered a pull of shard '{}' with a tensor that does not fit it{}{}", ps_names_[p],
                              s.name(), why.empty() ? "" : ": ", why);
        dst.copy_from(*value);
        if (state)
          pull_state(reply.shards(i), s, *trainable[static_cast<std::size_t>(s.variable)], trainable.size(), *state,
                     ps_names_[p]);
      }
    }
  }

  void serve_steps(const std::function<std::vector<double>(const StepBatch&)>& step) override {
    step_service_->serve(step, timeout_, chief_);
  }

  void push(const std::vector<Variable*>& trainable, int replica) override {
    layout(trainable);
    for (std::size_t p = 0; p < ps_.size(); ++p) {
      pb::PushRequest request;
      request.set_token(token_);
      for (const ShardPlacement& s : placements_) {
        if (s.ps != static_cast<int>(p)) continue;
        pb::Shard* g = request.add_gradients();
        g->set_name(s.name());
        g->set_row_begin(s.row_begin);
        to_proto(rows_of(trainable[static_cast<std::size_t>(s.variable)]->grad(replica), s), g->mutable_value());
      }
      if (request.gradients().empty()) continue;
      pb::Empty reply;
      grpc::ClientContext context;
      context.set_deadline(WallClock::now() + timeout_);
      check(ps_[p]->Push(&context, request, &reply), ps_names_[p], "a push of the gradients");
    }
  }

 private:
  // Shard s's rows of `t` (a view); a scalar variable is its one shard.
  static Tensor rows_of(const Tensor& t, const ShardPlacement& s) {
    return t.rank() == 0 ? t : t.slice(s.row_begin, s.row_end);
  }

  // The optimizer state of shard `s` into the rows of its variable's state in `optimizer`.
  static void pull_state(const pb::Shard& shard, const ShardPlacement& s, const Variable& v, std::size_t variables,
                         optimizers::Optimizer& optimizer, const std::string& who) {
    const std::vector<Tensor*> mine = variable_state(optimizer, static_cast<std::size_t>(s.variable), variables);
    KERASCPP_CHECK_DEVICE(static_cast<std::size_t>(shard.state_size()) == mine.size(),
                          "{} holds {} optimizer state tensor(s) for shard '{}' where this task's optimizer has {}; "
                          "every task must run the same program",
                          who, shard.state_size(), s.name(), mine.size());
    for (std::size_t j = 0; j < mine.size(); ++j) {
      std::string why;
      auto value = from_proto(shard.state(static_cast<int>(j)), why);
      KERASCPP_CHECK_DEVICE(mine[j]->shape() == v.shape(),
                            "the optimizer state {} of variable '{}' is not shaped like the variable, so its shards "
                            "cannot be gathered",
                            j, v.path());
      Tensor dst = rows_of(*mine[j], s);
      KERASCPP_CHECK_DEVICE(value && value->shape() == dst.shape() && value->dtype() == dst.dtype(),
                            "{} answered a pull of shard '{}' with optimizer state that does not fit it{}{}", who,
                            s.name(), why.empty() ? "" : ": ", why);
      dst.copy_from(*value);
    }
  }

  void layout(const std::vector<Variable*>& trainable) {
    if (!placements_.empty() || trainable.empty()) return;
    placements_ = place_variables(trainable, partitioner_, static_cast<int>(ps_.size()));
    for (std::size_t i = 0; i < placements_.size(); ++i) by_name_[placements_[i].name()] = i;
  }
  const ShardPlacement& placement(const std::string& name) const {
    auto it = by_name_.find(name);
    KERASCPP_CHECK_DEVICE(it != by_name_.end(), "a ps answered with shard '{}', which this task did not ask for", name);
    return placements_[it->second];
  }

  void check(const grpc::Status& status, const std::string& who, const std::string& what) {
    if (status.ok()) return;
    KERASCPP_CHECK_DEVICE(status.error_code() != grpc::StatusCode::PERMISSION_DENIED,
                          "ParameterServerStrategy: {} refused {} from {}: {}; give every task the same "
                          "KERASCPP_CLUSTER_TOKEN",
                          who, what, me_, status.error_message());
    throw DeviceError(
        fmt::format("ParameterServerStrategy: {} did not answer {} from {} within {} s ({}): the task "
                    "died, stopped or is unreachable",
                    who, what, me_, seconds(timeout_), status.error_message()));
  }

  // Coordinator: the job cannot go on. Every other task is told why (best effort, briefly), and
  // the coordinator's next step throws it.
  void stop_job(const std::string& why) {
    {
      std::lock_guard lock(mu_);
      if (lost_) return;
      lost_ = why;
    }
    auto tell = [&](auto& stub) {
      pb::ControlRequest request;
      request.set_token(token_);
      request.set_reason(why);
      pb::Empty reply;
      grpc::ClientContext context;
      context.set_deadline(WallClock::now() + std::chrono::seconds(2));
      (void)stub->Abort(&context, request, &reply);
    };
    for (auto& ps : ps_) tell(ps);
    for (auto& w : workers_) tell(w);
  }

  void throw_if_lost() {
    std::lock_guard lock(mu_);
    KERASCPP_CHECK_DEVICE(!lost_, "ParameterServerStrategy: the job stopped: {}", lost_.value_or(""));
  }

  // Coordinator: every ps task, and every worker while a fit runs, is pinged a few times per bound
  // (each ping short, so that the end of the job never waits long for the pinger); a task that has
  // not answered for the whole bound stops the job. The pings are also how the others know the
  // coordinator is alive.
  void ping_loop() {
    const auto period = std::clamp(timeout_ / 4, milliseconds(100), milliseconds(1000));
    const std::size_t n = ps_.size() + workers_.size();
    std::vector<Clock::time_point> last_ok(n, Clock::now());
    std::unique_lock lock(mu_);
    while (!stopping_ && !lost_) {
      lock.unlock();
      std::optional<std::string> failed;
      for (std::size_t t = 0; t < n && !failed; ++t) {
        const bool ps = t < ps_.size();
        const std::string& who = ps ? ps_names_[t] : worker_names_[t - ps_.size()];
        if (!ps && !in_fit_) {
          last_ok[t] = Clock::now();  // a worker outside fit may have ended: it is not watched
          continue;
        }
        pb::ControlRequest request;
        request.set_token(token_);
        pb::Empty reply;
        grpc::ClientContext context;
        context.set_deadline(WallClock::now() + period);
        context.set_wait_for_ready(true);  // a task still starting is waited for, within the bound
        const grpc::Status status =
            ps ? ps_[t]->Ping(&context, request, &reply) : workers_[t - ps_.size()]->Ping(&context, request, &reply);
        if (status.ok()) {
          last_ok[t] = Clock::now();
        } else if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
          failed = fmt::format(
              "{} refused the coordinator's token ({}); give every task the same "
              "KERASCPP_CLUSTER_TOKEN",
              who, status.error_message());
        } else if (Clock::now() - last_ok[t] > timeout_) {
          failed = fmt::format(
              "{} has not answered the coordinator's liveness pings for {} s ({}): the task died, "
              "stopped or is unreachable",
              who, seconds(timeout_), status.error_message());
        }
      }
      if (failed) stop_job(*failed);
      lock.lock();
      cv_.wait_for(lock, period, [&] { return stopping_; });
    }
  }

  bool coordinator_ = false;
  VariablePartitioner partitioner_;
  const std::string token_;
  const milliseconds timeout_;
  std::string me_, chief_;
  std::vector<std::string> ps_names_, worker_names_;
  std::vector<std::unique_ptr<pb::ParameterServer::Stub>> ps_;
  std::vector<std::unique_ptr<pb::StepRunner::Stub>> workers_;
  std::vector<ShardPlacement> placements_;
  std::map<std::string, std::size_t> by_name_;
  std::atomic<bool> created_{false};
  std::atomic<bool> in_fit_{true};  // workers are watched from the start until a fit ends
  std::size_t next_worker_ = 0;
  std::int64_t steps_ = 0;
  // Coordinator state shared with the pinger.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::optional<std::string> lost_;
  std::thread pinger_;
  // Worker.
  std::unique_ptr<StepService> step_service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

std::unique_ptr<ParameterServerTask> join_parameter_server_cluster(const TFConfigClusterResolver& resolver,
                                                                   VariablePartitioner partitioner,
                                                                   const std::string& token, milliseconds timeout) {
  if (resolver.task_type() == "ps") run_ps_task(resolver, token, timeout);
  return std::make_unique<GrpcTask>(resolver, std::move(partitioner), token, timeout);
}

}  // namespace kerascpp::distribute
