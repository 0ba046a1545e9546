#include "distribute/cluster/coordination_service.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "check.hpp"
#include "coordination.grpc.pb.h"

namespace kerascpp::distribute {
namespace pb = kerascpp::coordination;
using Clock = std::chrono::steady_clock;
// gRPC's deadlines are wall-clock time points.
using WallClock = std::chrono::system_clock;

namespace {

// One server-side wait is capped so that a request with a huge timeout cannot pin a thread forever;
// the client simply asks again until its own bound.
constexpr std::chrono::milliseconds kMaxServerWait{10'000};
// Keys and values are small (Gloo's addresses); anything larger is a confused or hostile client.
constexpr int kMaxMessageBytes = 1 << 20;

class Service final : public pb::Coordination::Service {
 public:
  explicit Service(int ranks) : heartbeats_(static_cast<std::size_t>(ranks)) {}

  grpc::Status Set(grpc::ServerContext*, const pb::SetRequest* request, pb::SetReply*) override {
    {
      std::lock_guard lock(mu_);
      store_[request->key()] = request->value();
    }
    cv_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext* context, const pb::GetRequest* request, pb::GetReply* reply) override {
    const auto wait =
        std::min(std::chrono::milliseconds(std::max<std::int64_t>(request->timeout_ms(), 0)), kMaxServerWait);
    std::unique_lock lock(mu_);
    const auto found = [&] { return store_.count(request->key()) > 0 || stopping_ || context->IsCancelled(); };
    cv_.wait_for(lock, wait, found);
    auto it = store_.find(request->key());
    reply->set_found(it != store_.end());
    if (it != store_.end()) reply->set_value(it->second);
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext*, const pb::HeartbeatRequest* request, pb::HeartbeatReply*) override {
    std::lock_guard lock(mu_);
    if (request->rank() < 0 || static_cast<std::size_t>(request->rank()) >= heartbeats_.size())
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("rank {} is outside the job's {} workers", request->rank(), heartbeats_.size())};
    heartbeats_[static_cast<std::size_t>(request->rank())] = Clock::now();
    return grpc::Status::OK;
  }

  grpc::Status Liveness(grpc::ServerContext*, const pb::LivenessRequest*, pb::LivenessReply* reply) override {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    for (const auto& at : heartbeats_)
      reply->add_ms_since_heartbeat(at ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *at).count() : -1);
    return grpc::Status::OK;
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> store_;
  std::vector<std::optional<Clock::time_point>> heartbeats_;
  bool stopping_ = false;
};

}  // namespace

struct CoordinationServer::State {
  explicit State(int ranks) : service(ranks) {}
  Service service;
  std::unique_ptr<grpc::Server> server;
};

CoordinationServer::CoordinationServer(const std::string& address, int ranks) : state_(std::make_unique<State>(ranks)) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.RegisterService(&state_->service);
  state_->server = builder.BuildAndStart();
  KERASCPP_CHECK_DEVICE(state_->server && bound_port != 0,
                        "MultiWorkerMirroredStrategy: the chief could not serve the coordination service on its "
                        "TF_CONFIG address {} (is the port in use, or the host not an address of this machine?); "
                        "free the port or fix the chief's address in TF_CONFIG",
                        address);
}

CoordinationServer::~CoordinationServer() {
  state_->service.stop();  // releases waiting Gets so that Shutdown does not wait for them
  state_->server->Shutdown(WallClock::now() + std::chrono::seconds(1));
}

struct CoordinationClient::State {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::Coordination::Stub> stub;
};

CoordinationClient::CoordinationClient(const std::string& coordinator, std::string who)
    : state_(std::make_unique<State>()), address_(coordinator), who_(std::move(who)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  state_->channel = grpc::CreateCustomChannel(coordinator, grpc::InsecureChannelCredentials(), args);
  state_->stub = pb::Coordination::NewStub(state_->channel);
}

CoordinationClient::~CoordinationClient() = default;

namespace {

// wait_for_ready: a coordinator that is not listening yet (started later) is retried until the
// deadline instead of failing at once.
void prepare(grpc::ClientContext& context, WallClock::time_point deadline) {
  context.set_deadline(deadline);
  context.set_wait_for_ready(true);
}

}  // namespace

#define KERASCPP_DETAIL_RPC_CHECK(status, what, timeout)                                                            \
  KERASCPP_CHECK_DEVICE((status).ok(),                                                                              \
                        "the coordination service of {} at {} did not answer {} within {} s ({}): the coordinator " \
                        "task died, has not started, or is unreachable; start it, or check its TF_CONFIG address",  \
                        who_, address_, what, std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),    \
                        (status).error_message())

void CoordinationClient::set(const std::string& key, const std::vector<char>& value,
                             std::chrono::milliseconds timeout) {
  pb::SetRequest request;
  request.set_key(key);
  request.set_value(std::string(value.begin(), value.end()));
  pb::SetReply reply;
  grpc::ClientContext context;
  prepare(context, WallClock::now() + timeout);
  grpc::Status status = state_->stub->Set(&context, request, &reply);
  KERASCPP_DETAIL_RPC_CHECK(status, fmt::format("setting '{}'", key), timeout);
}

std::vector<char> CoordinationClient::get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {  // the server waits at most kMaxServerWait per request: ask again until our own bound
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pb::GetRequest request;
    request.set_key(key);
    request.set_timeout_ms(std::max<std::int64_t>(left.count(), 0));
    pb::GetReply reply;
    grpc::ClientContext context;
    prepare(context, WallClock::now() + left + std::chrono::seconds(2));  // the reply of a full wait still arrives
    grpc::Status status = state_->stub->Get(&context, request, &reply);
    KERASCPP_DETAIL_RPC_CHECK(status, fmt::format("a read of '{}'", key), timeout);
    if (reply.found()) return {reply.value().begin(), reply.value().end()};
    KERASCPP_CHECK_DEVICE(Clock::now() < deadline,
                          "waited {} s at the coordination service of {} ({}) for '{}', which no task set: a task "
                          "of the job did not start or did not reach the rendezvous",
                          std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), who_, address_, key);
  }
}

void CoordinationClient::heartbeat(int rank, std::chrono::milliseconds timeout) {
  pb::HeartbeatRequest request;
  request.set_rank(rank);
  pb::HeartbeatReply reply;
  grpc::ClientContext context;
  context.set_deadline(WallClock::now() + timeout);  // no wait_for_ready: a gone coordinator fails fast
  grpc::Status status = state_->stub->Heartbeat(&context, request, &reply);
  KERASCPP_DETAIL_RPC_CHECK(status, "a heartbeat", timeout);
}

std::vector<std::int64_t> CoordinationClient::liveness(std::chrono::milliseconds timeout) {
  pb::LivenessRequest request;
  pb::LivenessReply reply;
  grpc::ClientContext context;
  context.set_deadline(WallClock::now() + timeout);
  grpc::Status status = state_->stub->Liveness(&context, request, &reply);
  KERASCPP_DETAIL_RPC_CHECK(status, "a liveness query", timeout);
  return {reply.ms_since_heartbeat().begin(), reply.ms_since_heartbeat().end()};
}

}  // namespace kerascpp::distribute
