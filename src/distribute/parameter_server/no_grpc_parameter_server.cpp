// ParameterServerStrategy in a build without gRPC: the job cannot run, and says why.
#include "check.hpp"
#include "distribute/parameter_server/ps_task.hpp"

namespace kerascpp::distribute {

std::unique_ptr<ParameterServerTask> join_parameter_server_cluster(const TFConfigClusterResolver&, VariablePartitioner,
                                                                   const std::string&, std::chrono::milliseconds) {
  throw DeviceError(
      "ParameterServerStrategy: this kerascpp was built without gRPC, which carries the ps and worker services. "
      "Install it (apt-get install libgloo-dev libgrpc++-dev protobuf-compiler-grpc; scripts/install_deps.sh does) "
      "and rebuild (-DKERASCPP_TF_CONFIG_CLUSTER=ON makes it a configure error)");
}

}  // namespace kerascpp::distribute
