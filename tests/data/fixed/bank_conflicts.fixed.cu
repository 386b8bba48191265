// Shared-memory bank conflicts: 32 banks of 4 bytes; a request costs, per phase,
// the largest number of distinct 4-byte words any one bank must deliver (lanes
// reading the same word share it). 4-byte accesses: one phase (ideal 1); 8-byte:
// two half-warp phases (ideal 2); 16-byte: four quarter-warp phases of 8 lanes
// (ideal 4). The cost is the sum of the phases' maxima.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(err_), __LINE__); return 1; } } while (0)

// 1D block of 256: t = threadIdx.x = 32w + lane, word s[t*S] is in bank
// (S*lane) % 32 (the 32w*S part is a multiple of 32 words for every S here).
//   S = 1:  banks 0..31, once each: 1.
//   S = 2:  lanes 0..3 -> banks 0, 2, 4, 6; lane 16 wraps to bank 0 (word 32): 2.
//   S = 3:  3 is odd, 3*lane % 32 is a permutation of the banks: 1.
//   S = 4:  banks 0, 4, .., 28, each used by 4 lanes (words 0, 32, 64, 96): 4.
//   S = 8:  banks 0, 8, 16, 24, 8 lanes each: 8.
//   S = 16: banks 0 and 16, 16 lanes each: 16.
//   S = 32: all lanes in bank 0, 32 distinct words: 32.
//   S = 33: bank (33*lane) % 32 = lane: 1.
//   s[0], s[t / 32]: one word for the whole warp: broadcast, 1.
//   s[t % 16]: lanes l and l+16 read the same word, 16 distinct banks: 1.
// The compound assignment is a load and a store of s[t*4]: two findings of 4.
__global__ void smem_stride(float* out) {
  __shared__ float s[256 * 33];
  const int t = threadIdx.x;
  for (int k = t; k < 256 * 33; k += blockDim.x) s[k] = (float)k;
  __syncthreads();
  float v = 0.0f;
  v += s[t];
  v += s[t * 2]; //~ CL301 wavefronts=2/1
  v += s[t * 3];
  v += s[t * 4]; //~ CL301 wavefronts=4/1
  v += s[t * 8]; //~ CL301 wavefronts=8/1
  v += s[t * 16]; //~ CL301 wavefronts=16/1
  v += s[t * 32]; //~ CL301 wavefronts=32/1
  v += s[t * 33];
  v += s[0];
  v += s[t / 32];
  v += s[t % 16];
  __syncthreads();
  s[t * 2] = v; //~ CL301 wavefronts=2/1
  __syncthreads();
  s[t * 4] += 1.0f; //~ CL301 wavefronts=4/1 //~ CL301 wavefronts=4/1
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[t * 33];
}

// 2D block 32x32: a warp is one row of the block, threadIdx.y uniform,
// threadIdx.x = lane.
//   tile[ty][tx]:         words 32ty + lane: 32 consecutive words: 1.
//   tile[tx][ty]:         words 32*lane + ty: all in bank ty, 32 distinct words: 32.
//   tile_padded[ty][tx]:  words 33ty + lane: 32 consecutive words: 1.
//   tile_padded[tx][ty]:  words 33*lane + ty, bank (lane + ty) % 32: all distinct: 1.
__global__ void smem_tile_column(float* out) {
  __shared__ float tile[32][33];
  __shared__ float tile_padded[32][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  tile[ty][tx] = (float)(ty * 32 + tx);
  tile_padded[ty][tx] = (float)(ty * 32 + tx);
  __syncthreads();
  float v = tile[tx][ty]; //~ CL301 wavefronts=32/1
  v += tile_padded[tx][ty];
  __syncthreads();
  tile[tx][ty] = v; //~ CL301 wavefronts=32/1
  tile_padded[tx][ty] = v;
  __syncthreads();
  out[blockIdx.x * 1024 + ty * 32 + tx] = tile[ty][tx] + tile_padded[ty][tx];
}

// 8-byte elements, 1D block of 256, two half-warp phases (ideal 2).
//   sd[t]:     a half-warp reads 16 doubles = 128 consecutive bytes, every bank
//              once: 1 + 1 = 2, the ideal.
//   sd[t * 2]: lane l reads words 4l, 4l+1; in lanes 0..15 lanes l and l+8 share
//              banks (words 0 and 32 in bank 0): 2 per phase: 2 + 2 = 4, ideal 2.
//   sd[0]:     one double for every lane: at most 1 per phase, never above the
//              ideal (ncu reads 1: the broadcast is served in one wavefront).
__global__ void smem_double(double* out) {
  __shared__ double sd[512];
  const int t = threadIdx.x;
  sd[t] = (double)t;
  sd[t + 256] = (double)-t;
  __syncthreads();
  double v = sd[t];
  v += sd[t * 2]; //~ CL301 wavefronts=4/2
  v += sd[0];
  out[blockIdx.x * blockDim.x + t] = v;
}

// 16-byte elements, 1D block of 256, four quarter-warp phases of 8 lanes (ideal 4).
//   s4[t]:     8 lanes x 16 bytes = 128 consecutive bytes per phase: 1 each: 4.
//   s4[t * 2]: lane l reads words 8l .. 8l+3; lanes 0..3 cover banks 0-3, 8-11,
//              16-19, 24-27 and lanes 4..7 the same banks again (words 32..59):
//              2 per phase: 8, ideal 4.
// All four components are used so the compiler keeps 16-byte loads.
__global__ void smem_float4(float* out) {
  __shared__ float4 s4[512];
  const int t = threadIdx.x;
  s4[t] = make_float4(t, t + 1, t + 2, t + 3);
  s4[t + 256] = make_float4(-t, -t - 1, -t - 2, -t - 3);
  __syncthreads();
  const float4 a = s4[t];
  const float4 b = s4[t * 2]; //~ CL301 wavefronts=8/4
  out[blockIdx.x * blockDim.x + t] = (a.x + a.y + a.z + a.w) * (b.x + b.y + b.z + b.w);
}

int main() {
  const int G = 64;
  float *out, *out2d; double* outd;
  CK(cudaMalloc(&out, (size_t)G * 256 * sizeof(float)));
  CK(cudaMalloc(&out2d, (size_t)G * 1024 * sizeof(float)));
  CK(cudaMalloc(&outd, (size_t)G * 256 * sizeof(double)));
  smem_stride<<<G, 256>>>(out);
  dim3 b32(32, 32);
  smem_tile_column<<<G, b32>>>(out2d);
  smem_double<<<G, 256>>>(outd);
  smem_float4<<<G, 256>>>(out);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  printf("bank_conflicts ok\n");
  return 0;
}
