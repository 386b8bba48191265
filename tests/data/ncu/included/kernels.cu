// Each block copies a tile through shared memory, two elements a thread half a tile apart,
// through pointers moved to the thread's first element; `TILE` is its includer's.
__global__ void halves(unsigned *__restrict__ dst, const unsigned *__restrict__ src) {
  __shared__ unsigned tile[TILE];
  src += blockIdx.x * TILE + threadIdx.x;
  dst += blockIdx.x * TILE + threadIdx.x;
  tile[threadIdx.x] = src[0];
  tile[threadIdx.x + TILE / 2] = src[TILE / 2];
  __syncthreads();
  dst[0] = tile[TILE - 1 - threadIdx.x];
  dst[TILE / 2] = tile[TILE / 2 - 1 - threadIdx.x];
}
