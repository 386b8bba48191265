// The shared side of cp.async (LDGSTS) against its global side, measured on an H100 (README,
// Known limits): run under ncu --section SourceCounters and read each kernel's LDGSTS row
// (L1 Wavefronts Shared and L2 Theoretical Sectors Global, per request = / 8 warps).
#include <cstdio>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
// each kernel: one LDGSTS pattern; dst consecutive in shared
template <int BYTES, int STRIDE>
__global__ void probe(const char* A, float* out) {
  __shared__ __align__(16) char buf[256 * 16];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&buf[t * BYTES], &A[t * STRIDE], BYTES);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = buf[(255 - t) * BYTES];
}
int main() {
  char* A; float* out;
  cudaMalloc(&A, 1 << 20); cudaMalloc(&out, 4096);
  cudaMemset(A, 0, 1 << 20);
  probe<4, 4><<<1, 256>>>(A, out);
  probe<4, 8><<<1, 256>>>(A, out);
  probe<4, 32><<<1, 256>>>(A, out);
  probe<4, 128><<<1, 256>>>(A, out);
  probe<8, 8><<<1, 256>>>(A, out);
  probe<8, 32><<<1, 256>>>(A, out);
  probe<16, 16><<<1, 256>>>(A, out);
  probe<16, 32><<<1, 256>>>(A, out);
  probe<16, 64><<<1, 256>>>(A, out);
  probe<16, 128><<<1, 256>>>(A, out);
  cudaDeviceSynchronize();
  printf("ok\n");
}
