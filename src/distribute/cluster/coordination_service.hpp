// The chief's coordination service (gRPC, as TensorFlow's is) and its client. The server holds a
// key-value store whose reads wait for a key, and each task's last heartbeat; the client turns
// every RPC failure or expired wait into a DeviceError naming the coordinator's address, so a
// task never hangs on a coordinator that is gone.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace kerascpp::distribute {

class CoordinationServer {
 public:
  // Serves on `address` ("host:port", the coordinator's TF_CONFIG address, and nothing else) for
  // `ranks` tasks; DeviceError when the address cannot be bound.
  CoordinationServer(const std::string& address, int ranks);
  ~CoordinationServer();
  CoordinationServer(const CoordinationServer&) = delete;
  CoordinationServer& operator=(const CoordinationServer&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class CoordinationClient {
 public:
  // `coordinator`: "host:port"; `who` names the coordinator task in errors ("chief:0").
  CoordinationClient(const std::string& coordinator, std::string who);
  ~CoordinationClient();
  // Each call fails with a DeviceError when the coordinator does not answer within `timeout`
  // (a coordinator not started yet is waited for, within the same bound).
  void set(const std::string& key, const std::vector<char>& value, std::chrono::milliseconds timeout);
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout);
  void heartbeat(int rank, std::chrono::milliseconds timeout);
  // Milliseconds since each rank's last heartbeat (-1: never).
  std::vector<std::int64_t> liveness(std::chrono::milliseconds timeout);
  const std::string& who() const { return who_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string address_, who_;
};

}  // namespace kerascpp::distribute
