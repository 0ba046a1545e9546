# TF_CONFIG clusters for MultiWorkerMirroredStrategy without mpirun: Gloo (Debian: libgloo-dev)
# carries the collectives and the chief's gRPC coordination service (libgrpc++-dev,
# protobuf-compiler-grpc) is where the tasks meet. KERASCPP_TF_CONFIG_CLUSTER=AUTO builds it in when
# both are found; without them a TF_CONFIG job says how to get them. Sets KERASCPP_WITH_GLOO.
set(KERASCPP_TF_CONFIG_CLUSTER AUTO CACHE STRING
    "Build TF_CONFIG multi-worker training (Gloo + gRPC): AUTO (when both are found), ON or OFF")
set_property(CACHE KERASCPP_TF_CONFIG_CLUSTER PROPERTY STRINGS AUTO ON OFF)
set(KERASCPP_WITH_GLOO OFF)
if(NOT KERASCPP_TF_CONFIG_CLUSTER STREQUAL "OFF")
  if(KERASCPP_TF_CONFIG_CLUSTER STREQUAL "ON")
    find_package(Gloo CONFIG REQUIRED)
    find_package(gRPC CONFIG REQUIRED)
  else()
    find_package(Gloo CONFIG QUIET)
    find_package(gRPC CONFIG QUIET)
  endif()
  if(TARGET gloo AND TARGET gRPC::grpc++ AND TARGET gRPC::grpc_cpp_plugin)
    set(KERASCPP_WITH_GLOO ON)
    message(STATUS "kerascpp: TF_CONFIG multi-worker training over Gloo ${GLOO_VERSION} and gRPC ${gRPC_VERSION}")
  else()
    message(STATUS "kerascpp: no Gloo or gRPC found; a TF_CONFIG MultiWorkerMirroredStrategy job says how to get "
                   "them (apt-get install libgloo-dev libgrpc++-dev protobuf-compiler-grpc)")
  endif()
endif()

# The Gloo world and the coordination service, in a static library of their own linked into
# `target`: gRPC's and Gloo's usage requirements (include directories, -pthread, generated code)
# then reach only these files, not the flags of every other source file (which would also defeat
# the compiler cache shared between build trees).
function(kerascpp_add_tf_config_cluster target)
  if(NOT KERASCPP_WITH_GLOO)
    return()
  endif()
  # The chief's coordination service (MultiWorkerMirroredStrategy) and ParameterServerStrategy's
  # ps and worker services.
  set(protos ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/cluster/proto/coordination.proto
      ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/cluster/proto/parameter_server.proto)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/cluster_proto)
  file(MAKE_DIRECTORY ${out})
  add_library(kerascpp_cluster STATIC
    ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/cluster/coordination_service.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/gloo/gloo_world.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/parameter_server/grpc_parameter_server.cpp ${protos})
  set_target_properties(kerascpp_cluster PROPERTIES POSITION_INDEPENDENT_CODE ON)
  protobuf_generate(TARGET kerascpp_cluster LANGUAGE cpp APPEND_PATH PROTOS ${protos}
                    IMPORT_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/cluster/proto PROTOC_OUT_DIR ${out})
  protobuf_generate(TARGET kerascpp_cluster LANGUAGE grpc APPEND_PATH GENERATE_EXTENSIONS .grpc.pb.h .grpc.pb.cc
                    PLUGIN "protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>" PROTOS ${protos}
                    IMPORT_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/src/distribute/cluster/proto PROTOC_OUT_DIR ${out})
  target_include_directories(kerascpp_cluster PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR}/include ${out})
  target_link_libraries(kerascpp_cluster PRIVATE fmt::fmt nlohmann_json::nlohmann_json protobuf::libprotobuf
                        gRPC::grpc++ gloo)
  target_compile_options(kerascpp_cluster PRIVATE -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(${target} PRIVATE kerascpp_cluster)
endfunction()
