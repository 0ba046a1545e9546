// Recognises a process started by an MPI launcher from the environment it sets, so that a plain
// ./program never initialises MPI (which would try to start a runtime of its own).
#include <cstdlib>

#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

bool launched_by_mpi_launcher() {
  // OpenMPI's mpirun, PMIx-based launchers (srun --mpi=pmix, prterun), MPICH/Hydra and PMI-1/2 srun.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

}  // namespace kerascpp::distribute
