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

std::string pci_bus_id(int device) {
  std::array<char, 32> bus{};
  if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  bus.back() = '\0';
  return bus.data();
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

  // Device properties as the cost model uses them (cudaDeviceGetAttribute; CUDA 13's
  // cudaDeviceProp no longer carries every one of them).
  const struct {
    const char* key;
    cudaDeviceAttr attr;
  } attributes[] = {
      {"sm_count", cudaDevAttrMultiProcessorCount},
      {"l2_bytes", cudaDevAttrL2CacheSize},
      {"memory_bus_width_bits", cudaDevAttrGlobalMemoryBusWidth},
      {"shared_memory_per_sm_bytes", cudaDevAttrMaxSharedMemoryPerMultiprocessor},
      {"max_threads_per_sm", cudaDevAttrMaxThreadsPerMultiProcessor},
      {"ecc_enabled", cudaDevAttrEccEnabled},
  };
  for (const auto& a : attributes) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, a.attr, device) == cudaSuccess) {
      c.properties[a.key] = std::to_string(value);
    } else {
      (void)cudaGetLastError();
    }
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && total_bytes > 0) {
    c.properties["memory_bytes"] = std::to_string(total_bytes);
  } else {
    (void)cudaGetLastError();
  }
  if (const std::string bus = pci_bus_id(device); !bus.empty()) c.properties["pci_bus_id"] = bus;

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
