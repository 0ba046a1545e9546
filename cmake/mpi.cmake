# MPI for MultiWorkerMirroredStrategy. KERASCPP_MPI=AUTO builds it in when an MPI (Debian:
# libopenmpi-dev) is found; without MPI the strategy still works as a single worker and, when a
# program is started by mpirun anyway, says how to get MPI. Sets KERASCPP_WITH_MPI.
set(KERASCPP_MPI AUTO CACHE STRING "Build multi-worker training over MPI: AUTO (when an MPI is found), ON or OFF")
set_property(CACHE KERASCPP_MPI PROPERTY STRINGS AUTO ON OFF)
set(KERASCPP_WITH_MPI OFF)
if(NOT KERASCPP_MPI STREQUAL "OFF")
  if(KERASCPP_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(KERASCPP_WITH_MPI ON)
    message(STATUS "kerascpp: multi-worker training over MPI ${MPI_C_VERSION} (${MPIEXEC_EXECUTABLE})")
  else()
    message(STATUS "kerascpp: no MPI found; MultiWorkerMirroredStrategy runs single-worker "
                   "(apt-get install libopenmpi-dev openmpi-bin to build it in)")
  endif()
endif()
