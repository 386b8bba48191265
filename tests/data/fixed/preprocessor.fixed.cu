// Preprocessor constructs from real code (cuda-samples, rodinia, Parboil, PolyBench-ACC,
// llm.c) that cut kernels in half for the parser or hid their sizes. cudalint keeps one
// branch of each #if group and blanks the rest (byte offsets kept). Every condition here
// is one nvcc decides the same way, so the measurement checks the branch cudalint kept.
#include <cstdio>
#include <cuda_runtime.h>
#include <typeinfo>

// 1. A group that cuts a parameter list in half (rodinia-style): `#if 0` is dead, so the
//    kernel has an int stride. stride = 32 floats from the launch: each lane 128 bytes
//    apart, 32 sectors for an ideal 4.
__global__ void split_params(float* out, const float* in,
#if 0
                             long stride)
#else
                             int stride)
#endif
{
  out[threadIdx.x] = in[threadIdx.x * stride]; //~ CL201 sectors=32/4
}

// 2. A size chosen by a condition on a macro the file defines (PolyBench's datasets,
//    rodinia's RD_WG_SIZE): TILE is 32 here, so tile[threadIdx.x][0] walks a column of a
//    [32][32] float array: all 32 lanes in bank 0.
#define USE_WIDE_TILE
#ifdef USE_WIDE_TILE
#define TILE 32
#else
#define TILE 16
#endif
__global__ void tile_from_ifdef(float* out) {
  __shared__ float tile[TILE][TILE + 1];
  tile[threadIdx.x][0] = threadIdx.x; //~ CL301 wavefronts=32/1
  __syncthreads();
  out[threadIdx.x] = tile[0][threadIdx.x];
}

// 3. An architecture switch inside a kernel (cuda-samples reductions): cudalint compiles
//    for sm_90 like the GPUs we measure on, so the __ldg branch is the live one and the
//    if/else cut by the #if is whole again. Lanes read 8 bytes apart: 8 sectors, ideal 4.
__global__ void arch_switch(float* out, const float* in) {
#if __CUDA_ARCH__ >= 350
  float v = __ldg(&in[threadIdx.x * 2]); //~ CL201 sectors=8/4
#else
  float v = in[threadIdx.x];
#endif
  out[threadIdx.x] = v;
}

// 4. Statement macros written without a semicolon (Parboil's CUERR, rodinia's PERF_BEGIN)
//    and a macro between string literals (mummergpu's fNID): host code that once left
//    error regions around the launches that give the kernels their block shapes.
#define CHECK_LAUNCH                                                     \
  if (cudaGetLastError() != cudaSuccess) { printf("launch failed\n"); }
#define IDFMT "%d"

// 5. An explicit instantiation (cuda-samples MC_EstimatePi) and typeid of a type keyword.
template <typename Real>
__global__ void scaled(Real* out, const Real* in) {
  out[threadIdx.x] = in[threadIdx.x] * Real(2);
}
template __global__ void scaled<float>(float*, const float*);

int main() {
  const int n = 1 << 16;
  float *a, *b;
  if (cudaMalloc(&a, n * 32 * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b, n * sizeof(float)) != cudaSuccess)
    return 1;
  cudaMemset(a, 0, n * 32 * sizeof(float));
  split_params<<<1, 32>>>(b, a, 32);
  CHECK_LAUNCH
  tile_from_ifdef<<<1, 32>>>(b);
  CHECK_LAUNCH
  arch_switch<<<1, 32>>>(b, a);
  scaled<float><<<1, 32>>>(b, a);
  if (typeid(float) == typeid(double)) return 1;
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  printf("preprocessor ok: kernel " IDFMT "\n", 4);
  return 0;
}
