// Not yet measured (no GPU was lent when it was written): repeated 8- and 16-byte shared reads,
// to decide how the hardware serves half- and quarter-warp phases that ask for the same
// addresses. cost.rs merges identical phases (a double broadcast is 1 wavefront, measured);
// HeCBench's adv measured 2 wavefronts for two half-warps reading the same 8 doubles with half
// their lanes off. Each line is its own LDS.64/LDS.128 (nvdisasm). Measure with
// tools/measure/ncu-fixtures.sh, then turn it into a fixture with the measured figures.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void wide_repeats(double* out, float* out4) {
  __shared__ double sd[512];
  __shared__ float4 s4[512];
  const int t = threadIdx.x;
  sd[t] = (double)t;
  sd[t + 256] = (double)-t;
  s4[t] = make_float4(t, t + 1, t + 2, t + 3);
  s4[t + 256] = make_float4(-t, -t - 1, -t - 2, -t - 3);
  __syncthreads();
  double v = 0.0;
  v += sd[t % 16];
  v += sd[64 + t % 8];
  v += sd[128 + (t / 16) % 2];
  v += sd[192 + ((t / 16) % 2) * 16];
  if (t % 16 < 8) v += sd[256 + t % 16];
  if (t % 16 < 8) v += sd[320 + t % 8 + (t / 16) % 2 * 8];
  const float4 a = s4[t % 8];
  const float4 b = s4[64];
  const float4 c = s4[128 + t % 2];
  const float4 d = s4[192 + t % 16];
  out[blockIdx.x * blockDim.x + t] = v;
  out4[blockIdx.x * blockDim.x + t] = (a.x + a.y + a.z + a.w) * (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) * (d.x + d.y + d.z + d.w);
}

int main() {
  double* o; float* o4;
  cudaMalloc(&o, 64 * 256 * sizeof(double));
  cudaMalloc(&o4, 64 * 256 * sizeof(float));
  wide_repeats<<<64, 256>>>(o, o4);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
