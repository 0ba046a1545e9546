// KERASCPP_HOST_DEVICE marks a function that both backends compile: __host__ __device__ under nvcc
// (the CUDA kernels call it), nothing for the host compiler (the CPU loops call it). The formula
// headers beside this one use it so that one definition serves both, and both compute alike.
#pragma once

#ifdef __CUDACC__
#define KERASCPP_HOST_DEVICE __host__ __device__
#else
#define KERASCPP_HOST_DEVICE
#endif
