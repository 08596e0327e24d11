// SPDX-License-Identifier: Apache-2.0
#include "cuda_context.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <array>
#include <ctime>

#ifndef CAPPLAN_VERSION_STRING
#define CAPPLAN_VERSION_STRING "unknown"
#endif

namespace capplan::calib::cuda {
namespace {

// CUDA encodes versions as 1000*major + 10*minor (13000 -> "13.0").
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf.data(), n);
}

Context make_cuda_context(int device, const std::string& nccl_version) {
  Context c;
  c.backend = "cuda";
  c.capplan_version = CAPPLAN_VERSION_STRING;
  c.date_utc = utc_now_iso8601();
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) c.host = host.data();

  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    c.device = prop.name;
    c.versions["compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  }
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) c.versions["cuda_driver"] = cuda_version_text(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) c.versions["cuda_runtime"] = cuda_version_text(v);
  // cuBLASLt: major*10000 + minor*100 + patch.
  const std::size_t lt = cublasLtGetVersion();
  c.versions["cublaslt"] = std::to_string(lt / 10000) + "." + std::to_string((lt / 100) % 100) + "." +
                           std::to_string(lt % 100);
  if (!nccl_version.empty()) c.versions["nccl"] = nccl_version;

  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess && khz > 0) {
    c.clocks["sm_max_mhz"] = std::to_string(khz / 1000);
  }
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess && khz > 0) {
    c.clocks["mem_max_mhz"] = std::to_string(khz / 1000);
  }
  return c;
}

}  // namespace capplan::calib::cuda
