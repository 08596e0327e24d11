// SPDX-License-Identifier: Apache-2.0
// NCCL on one GPU: a one-rank communicator (ncclCommInitAll over device 0) runs an all-reduce and
// the backend's all-to-all on a small buffer, and the results are checked. A one-rank sum and a
// one-rank exchange return their input exactly, so any difference is a broken build or library
// (headers and libnccl.so.2 of different versions, a missing symbol), which is what this exercises
// on a GPU machine. Label "gpu"; without a device every test skips.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "nccl_alltoall.hpp"

namespace capplan::calib::cuda {
namespace {

constexpr std::size_t kCount = 1024;

// Device 0 with a one-rank communicator, a stream and two float buffers of kCount; every call's
// return code is kept in `error` (empty when all succeeded).
struct OneRank {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  std::string error;

  OneRank() {
    int device = 0;
    if (!cuda_ok(cudaSetDevice(device), "cudaSetDevice")) return;
    if (!nccl_ok(ncclCommInitAll(&comm, 1, &device), "ncclCommInitAll")) return;
    if (!cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return;
    if (!cuda_ok(cudaMalloc(reinterpret_cast<void**>(&send), kCount * sizeof(float)), "cudaMalloc")) return;
    (void)cuda_ok(cudaMalloc(reinterpret_cast<void**>(&recv), kCount * sizeof(float)), "cudaMalloc");
  }
  ~OneRank() {
    if (recv != nullptr) (void)cudaFree(recv);
    if (send != nullptr) (void)cudaFree(send);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
    if (comm != nullptr) (void)ncclCommDestroy(comm);
  }
  OneRank(const OneRank&) = delete;
  OneRank& operator=(const OneRank&) = delete;

  bool cuda_ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    if (error.empty()) error = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
  }
  bool nccl_ok(ncclResult_t r, const char* what) {
    if (r == ncclSuccess) return true;
    if (error.empty()) error = std::string(what) + ": " + ncclGetErrorString(r);
    return false;
  }

  // send = 0.5 * i + 1 (exact in float), recv poisoned with -7; returns the input.
  std::vector<float> load() {
    std::vector<float> in(kCount), poison(kCount, -7.0f);
    for (std::size_t i = 0; i < kCount; ++i) in[i] = 0.5f * static_cast<float>(i) + 1.0f;
    (void)cuda_ok(cudaMemcpy(send, in.data(), kCount * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    (void)cuda_ok(cudaMemcpy(recv, poison.data(), kCount * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    return in;
  }
  std::vector<float> result() {
    std::vector<float> out(kCount, 0.0f);
    if (!cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return out;
    (void)cuda_ok(cudaMemcpy(out.data(), recv, kCount * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }
};

#define CAPPLAN_SKIP_WITHOUT_CUDA_DEVICE()                                                         \
  do {                                                                                             \
    int devices = 0;                                                                               \
    if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices < 1) {     \
      (void)cudaGetLastError();                                                                    \
      GTEST_SKIP() << "skipped: no CUDA device found ("                                            \
                   << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") << ")";             \
    }                                                                                              \
  } while (false)

TEST(NcclOnGpu, OneRankAllReduceReturnsItsInput) {
  CAPPLAN_SKIP_WITHOUT_CUDA_DEVICE();
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  ASSERT_GT(version, 0);
  OneRank r;
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::vector<float> in = r.load();
  ASSERT_TRUE(r.nccl_ok(ncclAllReduce(r.send, r.recv, kCount, ncclFloat, ncclSum, r.comm, r.stream), "ncclAllReduce"))
      << r.error;
  const std::vector<float> out = r.result();
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(out, in) << "NCCL " << version;
}

// The path the backend runs (native ncclAlltoAll where the library has it, else grouped send/recv)
// and the grouped fallback, which runs with every NCCL, both return the input on one rank.
TEST(NcclOnGpu, OneRankAllToAllReturnsItsInputOnEveryPath) {
  CAPPLAN_SKIP_WITHOUT_CUDA_DEVICE();
  OneRank r;
  ASSERT_TRUE(r.error.empty()) << r.error;
  for (const AlltoallPath path : {alltoall_path(), AlltoallPath::grouped_send_recv}) {
    const std::vector<float> in = r.load();
    ASSERT_TRUE(r.nccl_ok(all_to_all(r.send, r.recv, kCount, ncclFloat, r.comm, r.stream, path), to_string(path)))
        << r.error;
    const std::vector<float> out = r.result();
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(out, in) << to_string(path);
  }
}

}  // namespace
}  // namespace capplan::calib::cuda
