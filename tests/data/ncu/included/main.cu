// A kernel file compiled as part of another (cuda-samples' bitonicSort.cu defines
// LOCAL_SIZE_LIMIT, then includes bitonicSort_kernels.cu): the profile names only
// kernels.cu, whose kernel needs this file's macro and launch to be priced.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 512U
#include "kernels.cu"

int main() {
  const unsigned n = 64 * TILE;
  unsigned *src, *dst;
  if (cudaMalloc(&src, n * sizeof(unsigned)) != cudaSuccess ||
      cudaMalloc(&dst, n * sizeof(unsigned)) != cudaSuccess)
    return 1;
  cudaMemset(src, 0, n * sizeof(unsigned));
  halves<<<n / TILE, TILE / 2>>>(dst, src);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
