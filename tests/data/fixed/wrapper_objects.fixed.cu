// Objects that wrap memory (alicevision/popsift's SIFT kernels, GROMACS's AMD buffers,
// xgboost's LDGIterator): a `__device__` struct at file scope read member by member, a
// `__constant__` one that is not global memory, a `__device__ static const` scalar nvcc folds
// into the instruction, objects built by a one-argument constructor, a temporary whose
// constructor does the work (`Scan<R, W>(r, w);`, calling its own member function), classes
// behind a namespace, `operator[]` on a local or temporary object, and a member read twice
// through one data-dependent pointer (nvcc loads it once).
#include <cstdio>
#include <cuda_runtime.h>

struct Buffers {
  float* val;
  int* idx;
  int n;
  float pad[13];
};
struct Consts {
  int stride;
  float table[16][4];
};
__device__ Buffers d_bufs;
__device__ __constant__ Consts d_consts;
__device__ static const float SCALE = 0.5f;

// each member read is its own load, 8 bytes for a pointer, not a copy of the 80-byte struct;
// the constant struct's members come through the constant cache; SCALE is an immediate
__global__ void globals(float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const float* val = d_bufs.val;
  float c = d_consts.table[threadIdx.x % 16][d_consts.stride];
  out[t] = val[2 * t] * SCALE + c + d_bufs.n; //~ CL201 sectors=8/4
}

class Reader {
  const float* const p_;

 public:
  __device__ explicit Reader(const float* p) : p_(p) {}
  __device__ float get(int n) const { return p_[n]; }
};

class Writer {
  float* p_;
  int max_;

 public:
  __device__ Writer(float* p, int max) : p_(p), max_(max) {}
  __device__ void set(int n, float v) {
    if (n < max_) p_[n] = v;
  }
};

// built as a temporary: its constructor runs the transpose through a tile
template <class R, class W>
class Transpose32 {
  const R& r_;
  W& w_;

 public:
  __device__ Transpose32(const R& r, W& w) : r_(r), w_(w) { run(); }

 private:
  __device__ void run() {
    __shared__ float tile[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    int base = blockIdx.x * 1024;
    tile[y][x] = r_.get(base + y * 32 + x);
    __syncthreads();
    // a column of the tile: all 32 lanes in one bank
    w_.set(base + y * 32 + x, tile[x][y]); //~ CL301 wavefronts=32/1
  }
};

__global__ void constructed(const float* in, float* out, int n) {
  Reader r(in);
  Writer w(out, n);
  Transpose32<Reader, Writer>(r, w);
}

template <typename T>
class FastBuffer {
  T* b_;

 public:
  __device__ FastBuffer(T* b) : b_(b) {}
  __device__ T& operator[](int i) const { return b_[i]; }
};

template <typename T>
struct LdgIt {
  const T* p_;
  __device__ explicit LdgIt(const T* p) : p_(p) {}
  // a lane every 16 bytes
  __device__ T operator[](int i) const { return __ldg(p_ + 4 * i); } //~ CL201 sectors=16/4
};

__global__ void subscripts(const float* in, float* out) {
  FastBuffer<const float> b{in};
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = b[t] + LdgIt<float>(in)[t];
}

namespace sorting {
template <class T>
class Warp {
  T* a_;

 public:
  __device__ Warp(T* a) : a_(a) {}
  // lanes two words apart: 2-way conflicts
  __device__ T at(int i) { return a_[2 * i]; } //~ CL301 wavefronts=2/1
};
}  // namespace sorting

struct Point {
  float x, y, sigma;
  int id;
};

__global__ void qualified(const Point* pts, const int* map, float* out) {
  __shared__ float vals[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  vals[threadIdx.x] = t;
  vals[threadIdx.x + 32] = -t;
  __syncthreads();
  sorting::Warp<float> w(vals);
  float v = w.at(threadIdx.x);
  const Point* p = pts + map[t];
  if (p->sigma == 0) return; //~ CL204 //~ ncu-differs: map is the identity in this run, a lane every 16 bytes (16 sectors); cudalint prices the gather at its worst case
  // the same member through the same pointer: held in a register, not loaded again
  out[t] = v * fabsf(p->sigma);
}

int main() {
  const int n = 1 << 16;
  float *in, *out;
  Point* pts;
  int* map;
  if (cudaMalloc(&in, 4 * n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&pts, n * sizeof(Point)) != cudaSuccess ||
      cudaMalloc(&map, n * sizeof(int)) != cudaSuccess)
    return 1;
  cudaMemset(in, 0, 4 * n * sizeof(float));
  int* h = new int[n];
  for (int i = 0; i < n; i++) h[i] = i;
  cudaMemcpy(map, h, n * sizeof(int), cudaMemcpyHostToDevice);
  Point* hp = new Point[n];
  for (int i = 0; i < n; i++) hp[i] = Point{0.f, 0.f, 1.f, i};
  cudaMemcpy(pts, hp, n * sizeof(Point), cudaMemcpyHostToDevice);
  Buffers hb{};
  hb.val = in;
  hb.n = n;
  cudaMemcpyToSymbol(d_bufs, &hb, sizeof(hb));
  Consts hc{};
  hc.stride = 1;
  cudaMemcpyToSymbol(d_consts, &hc, sizeof(hc));
  globals<<<n / 2 / 256, 256>>>(out);
  constructed<<<n / 1024, dim3(32, 32)>>>(in, out, n);
  subscripts<<<n / 4 / 256, 256>>>(in, out);
  qualified<<<n / 32, 32>>>(pts, map, out);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  printf("wrapper_objects ok\n");
  return 0;
}
