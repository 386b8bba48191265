// cp.async (LDGSTS) over partly read 128-byte lines, and with lanes switched off, measured on an
// H100 to refit the shared-side rule of tools/measure/probes/ldgsts.cu (which copied whole warps
// from evenly strided sources). Run under ncu --section SourceCounters; each instantiation is one
// kernel with one LDGSTS row: L1 Wavefronts Shared / requests (8 warps) against the rule.
// MODE: which lanes copy, and from where (byte offsets within a 64 KiB window; dst consecutive).
#include <cstdio>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

template <int BYTES, int MODE>
__device__ __forceinline__ int src_of(int l) {
  switch (MODE) {
    case 0: return l * 16;                              // 32 lanes, 4 whole lines
    case 1: return l * 16;                              // 16 lanes, 2 whole lines
    case 2: return l * 16;                              // 8 lanes, 1 whole line
    case 3: return l * 16;                              // 4 lanes, half a line
    case 4: return (l / 4) * 1024 + (l % 4) * 16;       // 8 lanes, first halves of 2 lines
    case 5: return (l / 4) * 256 + (l % 4) * 16;        // 32 lanes, first halves of 8 lines
    case 6: return (l / 2) * 128 + (l % 2) * 16;        // 32 lanes, 32 bytes of 16 lines
    case 7: return l * 32;                              // 32 lanes, every other 16 bytes
    case 8: return l * 32;                              // 16 lanes, every other 16 bytes
    case 9: return (l / 8) * 128 + (7 - l % 8) * 16;    // 32 lanes, whole lines, reversed
    case 10: return (l % 4) * 128 + (l / 4) * 16;       // 32 lanes, whole lines, interleaved
    case 11: return l * 16 + 64;                        // 8 lanes, halves of 2 lines
    case 12: return (l / 4) * 128 + (l % 4) * 16 + 64;  // 32 lanes, second halves of 8 lines
    case 13: return l * 128;                            // 4 lanes, 16 bytes of 4 lines
    case 14: return l * 16;                             // 2 lanes, 32 bytes of a line
    case 15: return (l / 8) * 256 + (l % 8) * BYTES;    // 32 lanes, halves of 4 lines (8 B)
    case 16: return l * BYTES;                          // 8 lanes, 64 (8 B) or 32 (4 B) bytes
    case 17: return (l / 2) * 128 + (l % 2) * 16;       // 16 lanes, 32 bytes of 8 lines
    default: return l * 16;
  }
}

template <int MODE>
__device__ __forceinline__ bool on(int l) {
  switch (MODE) {
    case 1: case 8: case 17: return l < 16;
    case 2: case 4: case 11: case 16: return l < 8;
    case 3: case 13: return l < 4;
    case 14: return l < 2;
    default: return true;
  }
}

template <int BYTES, int MODE>
__global__ void probe(const char* A, float* out) {
  __shared__ __align__(16) char buf[256 * 16];
  int t = threadIdx.x;
  int l = t % 32, w = t / 32;
  if (on<MODE>(l))
    __pipeline_memcpy_async(&buf[t * BYTES], &A[w * 8192 + src_of<BYTES, MODE>(l)], BYTES);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = buf[(255 - t) * BYTES];
}

int main() {
  char* A; float* out;
  cudaMalloc(&A, 1 << 20); cudaMalloc(&out, 4096);
  cudaMemset(A, 0, 1 << 20);
  probe<16, 0><<<1, 256>>>(A, out);
  probe<16, 1><<<1, 256>>>(A, out);
  probe<16, 2><<<1, 256>>>(A, out);
  probe<16, 3><<<1, 256>>>(A, out);
  probe<16, 4><<<1, 256>>>(A, out);
  probe<16, 5><<<1, 256>>>(A, out);
  probe<16, 6><<<1, 256>>>(A, out);
  probe<16, 7><<<1, 256>>>(A, out);
  probe<16, 8><<<1, 256>>>(A, out);
  probe<16, 9><<<1, 256>>>(A, out);
  probe<16, 10><<<1, 256>>>(A, out);
  probe<16, 11><<<1, 256>>>(A, out);
  probe<16, 12><<<1, 256>>>(A, out);
  probe<16, 13><<<1, 256>>>(A, out);
  probe<16, 14><<<1, 256>>>(A, out);
  probe<16, 17><<<1, 256>>>(A, out);
  probe<8, 15><<<1, 256>>>(A, out);
  probe<8, 16><<<1, 256>>>(A, out);
  probe<4, 16><<<1, 256>>>(A, out);
  cudaDeviceSynchronize();
  printf("ok\n");
}
