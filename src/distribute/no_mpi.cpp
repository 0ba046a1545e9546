// The WorkerGroup of a build without MPI: a multi-worker launch cannot work, and says why.
#include "check.hpp"
#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

std::shared_ptr<WorkerGroup> join_worker_group(std::chrono::milliseconds) {
  throw DeviceError(
      "MultiWorkerMirroredStrategy: this process was started by an MPI launcher, but this kerascpp was "
      "built without MPI. Install OpenMPI (apt-get install libopenmpi-dev openmpi-bin; scripts/install_deps.sh "
      "does) and rebuild (-DKERASCPP_MPI=ON makes a missing MPI a configure error)");
}

}  // namespace kerascpp::distribute
