// What a struct inherits and what it declares for its member functions (PCL's GPU modules):
// `PtrStepSz<T> : PtrStep<T> : DevPtr<T>` hands its pointer down two bases, and `ptr(y)`,
// defined in the middle one, reads it as `DevPtr<T>::data` or `this->data`; an `enum` in a
// functor's body gives its block size and array extents, a base's `enum` its derived struct's;
// a launch in a `switch` on a loop's variable passes the value its `case` tests.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
struct DevPtr {
  T* data;
};

template <typename T>
struct PtrStep : public DevPtr<T> {
  size_t step;  // bytes from one row to the next
  __device__ T* ptr(int y = 0) { return (T*)((char*)DevPtr<T>::data + y * step); }
  __device__ const T* ptr(int y = 0) const {
    return (const T*)((const char*)this->data + y * step);
  }
};

template <typename T>
struct PtrStepSz : public PtrStep<T> {
  int cols;
  int rows;
};

// a row of 2-byte depths in, a row of floats out: 2 and 4 sectors a request, as few as can be
__global__ void depth_to_float(const PtrStepSz<unsigned short> depth, PtrStep<float> out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < depth.cols && y < depth.rows) out.ptr(y)[x] = depth.ptr(y)[x] / 1000.f;
}

// down a column: each lane its own 2,048-byte row, a sector each where 2 would hold them all
__global__ void depth_column(const PtrStepSz<unsigned short> depth, float* out) {
  int y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y < depth.rows) out[blockIdx.y * depth.rows + y] = depth.ptr(y)[blockIdx.y]; //~ CL201 sectors=32/2
}

struct Estimator {
  enum { CTA_SIZE = 256, WARPS = CTA_SIZE / 32, WIDTH = 32 };
  const float* points;
  float* out;

  __device__ float fetch(int i) const { return points[i]; }

  __device__ void operator()() const {
    __shared__ float tile[WARPS][WIDTH][WIDTH + 1];
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / 32;
    int idx = blockIdx.x * CTA_SIZE + threadIdx.x;
    // a lane a row of its warp's tile: all 32 in one bank
    tile[warp][lane][0] = fetch(idx); //~ CL301 wavefronts=32/1
    __syncwarp();
    out[idx] = tile[warp][0][lane];
  }
};

__global__ void estimate(const Estimator e) { e(); }

struct KernelBase {
  enum { CTA = 128, BINS = 33 };
};

struct Histogram : public KernelBase {
  float* out;
  // a lane a 33-float histogram: 132 bytes apart, a sector each
  __device__ void operator()() const { out[(blockIdx.x * CTA + threadIdx.x) * BINS] = 1.f; } //~ CL201 sectors=32/4
};

__global__ void histogram(const Histogram h) { h(); }

#define NB 128

__global__ void pages16(float* d, int jb) {
  int per = NB / (jb * 2);  // 4 for jb = 16: 16 bytes a lane
  d[blockIdx.x * 512 + threadIdx.x * per] = 1.f; //~ CL201 sectors=16/4
}

void build_pages(float* d) {
  for (int jb = 16; jb < NB; jb *= 2) {
    switch (jb) {
      case 16:
        pages16<<<64, 32 * (jb / 16)>>>(d, jb);
        break;
      default:
        break;
    }
  }
}

int main() {
  const int rows = 256, cols = 512, pitch = 2048;
  unsigned short* depth_data;
  float *out_data, *col_out, *points, *est_out, *hist_out, *pages;
  const int n = 1 << 16;
  if (cudaMalloc(&depth_data, rows * pitch) != cudaSuccess ||
      cudaMalloc(&out_data, rows * pitch) != cudaSuccess ||
      cudaMalloc(&col_out, cols * rows * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&points, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&est_out, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&hist_out, n * KernelBase::BINS * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&pages, 64 * 512 * sizeof(float)) != cudaSuccess)
    return 1;
  cudaMemset(depth_data, 0, rows * pitch);
  cudaMemset(points, 0, n * sizeof(float));
  PtrStepSz<unsigned short> depth;
  depth.data = depth_data;
  depth.step = pitch;
  depth.cols = cols;
  depth.rows = rows;
  PtrStep<float> out;
  out.data = out_data;
  out.step = pitch;
  depth_to_float<<<dim3(cols / 256, rows), 256>>>(depth, out);
  depth_column<<<dim3(rows / 256, cols), 256>>>(depth, col_out);
  Estimator e;
  e.points = points;
  e.out = est_out;
  estimate<<<n / Estimator::CTA_SIZE, Estimator::CTA_SIZE>>>(e);
  Histogram h;
  h.out = hist_out;
  histogram<<<n / Histogram::CTA, Histogram::CTA>>>(h);
  build_pages(pages);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  printf("inherited_members ok\n");
  return 0;
}
