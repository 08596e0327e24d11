// SPDX-License-Identifier: Apache-2.0
#pragma once
// The context block of a CUDA calibration (Google Benchmark's Context, nccl-tests' device lines):
// device name, compute capability, driver/runtime/cuBLASLt/NCCL versions, peak clocks, host, date.
#include <string>

#include "capplan/calibrate/records.hpp"

namespace capplan::calib::cuda {

// Contract: `device` exists. Clocks are the device's reported maximum (cudaDevAttrClockRate,
// cudaDevAttrMemoryClockRate), not the clock at measurement time (CudaBackend::device_state reads
// that); properties are the device attributes of the cost model (sm_count, l2_bytes,
// memory_bytes, memory_bus_width_bits, ...); fields that cannot be read are left out rather than
// guessed.
Context make_cuda_context(int device, const std::string& nccl_version);

std::string utc_now_iso8601();

// cudaDeviceGetPCIBusId's "0000:65:00.0" (the key NVML finds the same GPU by), or empty.
std::string pci_bus_id(int device);

}  // namespace capplan::calib::cuda
