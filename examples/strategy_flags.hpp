// Strategy selection shared by the examples (the official models' flags):
//   --num_gpus N       N GPUs; -1: every local GPU, or the CPU (with a notice) when there is none;
//                      0: the CPU
//   --cpu_replicas R   CPU replicas when running on the CPU
//   --all_reduce_alg   auto | nccl | hierarchical_copy | reduction_to_one_device | shared_memory
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace examples {

inline kerascpp::distribute::Strategy make_strategy(int num_gpus, int cpu_replicas, const std::string& alg) {
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
  if (devices.empty())
    for (int i = 0; i < cpu_replicas; ++i) devices.push_back("cpu:" + std::to_string(i));
  if (alg == "auto") return D::MirroredStrategy<>(devices);
  if (alg == "nccl") return D::MirroredStrategy<D::NcclAllReduce>(devices);
  if (alg == "hierarchical_copy") return D::MirroredStrategy<D::HierarchicalCopyAllReduce>(devices);
  if (alg == "reduction_to_one_device") return D::MirroredStrategy<D::ReductionToOneDevice>(devices);
  if (alg == "shared_memory") return D::MirroredStrategy<D::SharedMemoryAllReduce>(devices);
  throw kerascpp::Error(
      "--all_reduce_alg must be auto, nccl, hierarchical_copy, reduction_to_one_device or shared_memory");
}

}  // namespace examples
