// The shared-memory transpose of NVIDIA's "efficient matrix transpose" post, before the
// padding: TILE_DIM 32, BLOCK_ROWS 8, so a block is 32x8 and a warp is one row of it
// (threadIdx.y fixed, threadIdx.x = lane).
#include <cstdio>
#include <cuda_runtime.h>
#define TILE_DIM 32
#define BLOCK_ROWS 8

// Global reads and writes are both row-wise: 32 consecutive floats, 4 sectors, ideal 4.
// tile[threadIdx.y + j][threadIdx.x] (store): word (y + j) * 32 + lane, banks 0..31: 1 wavefront.
// tile[threadIdx.x][threadIdx.y + j] (load): word lane * 32 + (y + j): every lane in bank
// (y + j) % 32 at a different word: 32-way conflict, 32 wavefronts where 1 would do.
// With tile[TILE_DIM][TILE_DIM + 1] the load's words are lane * 33 + (y + j): banks
// lane + (y + j), all different: 1 wavefront; the store stays conflict-free.
__global__ void transpose_tiled(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j]; //~ CL301 wavefronts=32/1
}

int main() {
  const int n = 1024;
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *in, *out;
  if (cudaMalloc(&in, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) return 1;
  cudaMemset(in, 0, bytes);
  dim3 grid(n / TILE_DIM, n / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
  transpose_tiled<<<grid, block>>>(out, in, n, n);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  printf("tile_transpose ok\n");
  return 0;
}
