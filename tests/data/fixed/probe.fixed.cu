// Ground-truth probe: one access pattern per kernel, measured with ncu.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t err_=(x); if(err_!=cudaSuccess){printf("CUDA %s at %d\n", cudaGetErrorString(err_), __LINE__); return 1;}}while(0)

struct P3 { float x, y, z; };

__global__ void g_unit(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t]; }
__global__ void g_offset1(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t + 1]; } //~ CL203 sectors=5/4
__global__ void g_stride2(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t*2]; } //~ CL201 sectors=8/4
__global__ void g_stride4(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t*4]; } //~ CL201 sectors=16/4
__global__ void g_stride8(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t*8]; } //~ CL201 sectors=32/4
__global__ void g_stride32(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t*32]; } //~ CL201 sectors=32/4
__global__ void g_broadcast(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[blockIdx.x]; }
__global__ void g_gather(const float* in, const int* idx, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[idx[t]]; } //~ CL204 sectors=32/4
__global__ void g_double(const double* in, double* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t]; }
__global__ void g_float4(const float4* in, float4* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t]; }
__global__ void g_aos(const P3* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t].x; } //~ CL202 sectors=12/4
__global__ void g_char(const char* in, char* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t]; }
__global__ void g_reverse(const float* in, float* out, int n) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[n - 1 - t]; }
__global__ void g_permute(const float* in, float* out) { int t = blockIdx.x*blockDim.x + threadIdx.x; out[t] = in[t ^ 1]; }

// 2D block 16x16: column-major read (the seed's col*Width+k), row-major write
__global__ void g2d_colmajor(const float* in, float* out, int W) {
  int r = blockIdx.y*blockDim.y + threadIdx.y; int c = blockIdx.x*blockDim.x + threadIdx.x;
  out[r*W + c] = in[c*W + r]; //~ CL201 sectors=16/4
}
// seed 004 / siboehm kernel 1: x = row from threadIdx.x
__global__ void sgemm_naive(int M, int N, int K, const float* A, const float* B, float* C) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < M && y < N) { float tmp = 0.0f;
    for (int i = 0; i < K; ++i) tmp += A[x * K + i] * B[i * N + y]; //~ CL201 sectors=32/4
    C[x * N + y] = tmp; } //~ CL201 sectors=32/4
}
// siboehm kernel 2: 1D block of 1024, row/col from threadIdx.x / % 32
__global__ void sgemm_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  const int cRow = blockIdx.x * 32 + (threadIdx.x / 32);
  const int cCol = blockIdx.y * 32 + (threadIdx.x % 32);
  if (cRow < M && cCol < N) { float tmp = 0.0f;
    for (int i = 0; i < K; ++i) tmp += A[cRow * K + i] * B[i * N + cCol];
    C[cRow * N + cCol] = tmp; }
}
// seed 002 exercise (PMPP 6.1)
__global__ void pmpp_foo(float* a, float* b, float* c, float* d, float* e) {
  unsigned int i = blockIdx.x*blockDim.x + threadIdx.x;
  __shared__ float a_s[256];
  __shared__ float bc_s[4*256];
  a_s[threadIdx.x] = a[i];
  for (unsigned int j = 0; j < 4; ++j) {
    bc_s[j*256 + threadIdx.x] = b[j*blockDim.x*gridDim.x + i] + c[i*4 + j]; //~ CL201 sectors=16/4
  }
  __syncthreads();
  d[i + 8] = a_s[threadIdx.x];
  e[i*8] = bc_s[threadIdx.x*4]; //~ CL201 sectors=32/4 //~ CL301 wavefronts=4/1
}
#define TD 32
__global__ void transpose_naive(float* odata, const float* idata, int width, int height) {
  unsigned xIndex = blockDim.x * blockIdx.x + threadIdx.x;
  unsigned yIndex = blockDim.y * blockIdx.y + threadIdx.y;
  if (xIndex < width && yIndex < height) {
    unsigned index_in = xIndex + width * yIndex;
    unsigned index_out = yIndex + height * xIndex;
    odata[index_out] = idata[index_in]; //~ CL201 sectors=16/4
  }
}
__global__ void transpose_smem(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[TD][TD + 1];
  int x = blockIdx.x * TD + threadIdx.x; int y = blockIdx.y * TD + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = idata[y * width + x];
  __syncthreads();
  x = blockIdx.y * TD + threadIdx.x; y = blockIdx.x * TD + threadIdx.y;
  odata[y * height + x] = tile[threadIdx.x][threadIdx.y]; //~ CL301 wavefronts=32/1
}
__global__ void transpose_padded(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[TD][TD + 1];
  int x = blockIdx.x * TD + threadIdx.x; int y = blockIdx.y * TD + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = idata[y * width + x];
  __syncthreads();
  x = blockIdx.y * TD + threadIdx.x; y = blockIdx.x * TD + threadIdx.y;
  odata[y * height + x] = tile[threadIdx.x][threadIdx.y];
}
// shared-memory bank patterns, 1D block of 256
__global__ void s_stride(float* out, int which) {
  __shared__ float s[256 * 33];
  __shared__ double sd[256];
  int t = threadIdx.x;
  for (int k = t; k < 256 * 33; k += blockDim.x) s[k] = k;
  sd[t] = t;
  __syncthreads();
  float v;
  if (which == 1) v = s[t];
  else if (which == 2) v = s[t * 2]; //~ CL301 wavefronts=2/1
  else if (which == 4) v = s[t * 4]; //~ CL301 wavefronts=4/1
  else if (which == 32) v = s[t * 32]; //~ CL301 wavefronts=32/1
  else if (which == 33) v = s[t * 33];
  else if (which == 0) v = s[0];
  else v = (float)sd[t];
  out[blockIdx.x * blockDim.x + t] = v;
}

int main() {
  const int N = 1 << 20, B = 256, G = N / B;
  float *in, *out, *a, *b, *c, *d, *e; int* idx; double *din, *dout; float4 *f4i, *f4o; P3* p3; char *ci, *co;
  size_t big = (size_t)N * 40 * sizeof(float);
  CK(cudaMalloc(&in, big)); CK(cudaMalloc(&out, big)); CK(cudaMalloc(&idx, N * sizeof(int)));
  CK(cudaMalloc(&a, big)); CK(cudaMalloc(&b, big)); CK(cudaMalloc(&c, big)); CK(cudaMalloc(&d, big)); CK(cudaMalloc(&e, big));
  CK(cudaMalloc(&din, N * 8)); CK(cudaMalloc(&dout, N * 8)); CK(cudaMalloc(&f4i, N * 16)); CK(cudaMalloc(&f4o, N * 16));
  CK(cudaMalloc(&p3, N * 12)); CK(cudaMalloc(&ci, N)); CK(cudaMalloc(&co, N));
  int* hidx = new int[N]; unsigned s = 12345; for (int i = 0; i < N; ++i) { s = s * 1103515245u + 12345u; hidx[i] = s % N; }
  CK(cudaMemcpy(idx, hidx, N * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(in, 0, big));
  g_unit<<<G, B>>>(in, out); g_offset1<<<G, B>>>(in, out); g_stride2<<<G, B>>>(in, out); g_stride4<<<G, B>>>(in, out);
  g_stride8<<<G, B>>>(in, out); g_stride32<<<G, B>>>(in, out); g_broadcast<<<G, B>>>(in, out); g_gather<<<G, B>>>(in, idx, out);
  g_double<<<G, B>>>(din, dout); g_float4<<<G, B>>>(f4i, f4o); g_aos<<<G, B>>>(p3, out); g_char<<<G, B>>>(ci, co);
  g_reverse<<<G, B>>>(in, out, N); g_permute<<<G, B>>>(in, out);
  const int W = 1024; dim3 b16(16, 16), gW(W / 16, W / 16);
  g2d_colmajor<<<gW, b16>>>(in, out, W);
  dim3 b32(32, 32), g32(W / 32, W / 32);
  sgemm_naive<<<g32, b32>>>(W, W, 256, a, b, c);
  sgemm_coalesced<<<g32, 1024>>>(W, W, 256, a, b, c);
  pmpp_foo<<<G / 8, B>>>(a, b, c, d, e);
  transpose_naive<<<gW, b16>>>(out, in, W, W);
  dim3 bt(TD, TD), gt(W / TD, W / TD);
  transpose_smem<<<gt, bt>>>(out, in, W, W); transpose_padded<<<gt, bt>>>(out, in, W, W);
  int ws[] = {1, 2, 4, 32, 33, 0, 8};
  for (int w : ws) s_stride<<<64, 256>>>(out, w);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  printf("probe ok\n");
  return 0;
}
