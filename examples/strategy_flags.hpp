// Strategy selection shared by the examples (the official models' flags):
//   --distribution_strategy  off | one_device | mirrored (default) | central_storage | multi_worker_mirrored
//                      (multi_worker_mirrored: start the program with mpirun or srun; each worker
//                      mirrors over its own --num_gpus GPUs or --cpu_replicas CPU replicas;
//                      central_storage: --cpu_replicas CPU replicas, variables once on the host;
//                      parameter_server (examples that pass steps_per_epoch, e.g. ncf): a TF_CONFIG
//                      cluster with ps tasks, tables split by MinSizePartitioner(256 KiB, ps count))
//   --num_gpus N       N GPUs; -1: every local GPU, or the CPU (with a notice) when there is none;
//                      0: the CPU
//   --cpu_replicas R   CPU replicas when running on the CPU
//   --all_reduce_alg   auto | nccl | hierarchical_copy | reduction_to_one_device | shared_memory
#pragma once
#include <CLI/CLI.hpp>
#include <kerascpp/distribute/central_storage.hpp>
#include <kerascpp/distribute/parameter_server.hpp>
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "flag_checks.hpp"

namespace examples {

struct StrategyFlags {
  std::string distribution_strategy = "mirrored";
  int num_gpus = 0;
  int cpu_replicas = 1;
  std::string all_reduce_alg = "auto";
};

// `parameter_server`: the example's fit passes steps_per_epoch, as ParameterServerStrategy requires.
inline void add_strategy_flags(CLI::App& app, StrategyFlags& f, bool parameter_server = false) {
  std::vector<std::string> names{"off", "one_device", "mirrored", "central_storage", "multi_worker_mirrored"};
  if (parameter_server) names.push_back("parameter_server");
  app.add_option("--distribution_strategy", f.distribution_strategy,
                 "off, one_device, mirrored, central_storage or multi_worker_mirrored (start that one with mpirun, "
                 "srun or under TF_CONFIG)" +
                     std::string(parameter_server ? "; parameter_server under a TF_CONFIG cluster with ps tasks" : ""))
      ->check(CLI::IsMember(names));
  app.add_option("--num_gpus", f.num_gpus, "GPUs to mirror over (-1: every GPU, or the CPU without one; 0: CPU)")
      ->check(CLI::Range(-1, 1 << 16));
  app.add_option("--cpu_replicas", f.cpu_replicas, "CPU replicas when running on the CPU")->check(kPositiveInteger);
  app.add_option("--all_reduce_alg", f.all_reduce_alg,
                 "auto, nccl, hierarchical_copy, reduction_to_one_device or shared_memory")
      ->check(CLI::IsMember({"auto", "nccl", "hierarchical_copy", "reduction_to_one_device", "shared_memory"}));
}

inline kerascpp::distribute::Strategy make_strategy(const StrategyFlags& f) {
  const int num_gpus = f.num_gpus, cpu_replicas = f.cpu_replicas;
  const std::string& alg = f.all_reduce_alg;
  namespace D = kerascpp::distribute;
  std::vector<std::string> devices;
  if (num_gpus < 0) {
    devices = D::local_devices();
    if (devices == std::vector<std::string>{"cpu:0"}) {
      std::fprintf(stderr, "%s\n", D::no_gpu_notice().c_str());
      devices.clear();
    }
  }
  for (int i = 0; i < num_gpus; ++i) devices.push_back("gpu:" + std::to_string(i));
  if (f.distribution_strategy == "off") return D::Strategy();  // the default: one replica on cpu:0
  if (f.distribution_strategy == "one_device") return D::OneDeviceStrategy(devices.empty() ? "cpu:0" : devices[0]);
  if (f.distribution_strategy == "parameter_server") {
    // TensorFlow's usual choice: shards of at least 256 KiB, at most one per ps task. On a ps task
    // the strategy serves the variables and ends the process.
    D::TFConfigClusterResolver resolver;
    const auto ps = resolver.cluster_spec().find("ps");
    const int num_ps = ps == resolver.cluster_spec().end() ? 1 : static_cast<int>(ps->second.size());
    return D::ParameterServerStrategy(resolver, D::MinSizePartitioner(256 << 10, num_ps));
  }
  if (devices.empty())
    for (int i = 0; i < cpu_replicas; ++i) devices.push_back("cpu:" + std::to_string(i));
  if (f.distribution_strategy == "central_storage") return D::CentralStorageStrategy(devices);
  if (f.distribution_strategy == "multi_worker_mirrored") {
    if (alg == "auto") return D::MultiWorkerMirroredStrategy<>(devices);
    if (alg == "shared_memory") return D::MultiWorkerMirroredStrategy<D::SharedMemoryAllReduce>(devices);
    if (alg == "nccl") return D::MultiWorkerMirroredStrategy<D::NcclAllReduce>(devices);
    throw kerascpp::ValueError(
        "--all_reduce_alg with --distribution_strategy=multi_worker_mirrored must be auto, "
        "shared_memory (CPU replicas) or nccl (GPUs)");
  }
  if (alg == "auto") return D::MirroredStrategy<>(devices);
  if (alg == "nccl") return D::MirroredStrategy<D::NcclAllReduce>(devices);
  if (alg == "hierarchical_copy") return D::MirroredStrategy<D::HierarchicalCopyAllReduce>(devices);
  if (alg == "reduction_to_one_device") return D::MirroredStrategy<D::ReductionToOneDevice>(devices);
  if (alg == "shared_memory") return D::MirroredStrategy<D::SharedMemoryAllReduce>(devices);
  throw kerascpp::ValueError(
      "--all_reduce_alg must be auto, nccl, hierarchical_copy, reduction_to_one_device or shared_memory");
}

}  // namespace examples
