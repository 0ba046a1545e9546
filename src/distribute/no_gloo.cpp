// The TF_CONFIG WorkerGroup of a build without Gloo and gRPC: a TF_CONFIG job cannot run, and says why.
#include "check.hpp"
#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

std::shared_ptr<WorkerGroup> join_tf_config_group(const TFConfigClusterResolver& resolver, std::chrono::milliseconds) {
  resolver.check_for_collective_strategy("MultiWorkerMirroredStrategy");
  throw DeviceError(
      "MultiWorkerMirroredStrategy: TF_CONFIG describes a cluster, but this kerascpp was built without Gloo and "
      "gRPC. Install them (apt-get install libgloo-dev libgrpc++-dev protobuf-compiler-grpc; "
      "scripts/install_deps.sh does) and rebuild (-DKERASCPP_TF_CONFIG_CLUSTER=ON makes them a configure error), "
      "or start the job with mpirun instead");
}

}  // namespace kerascpp::distribute
