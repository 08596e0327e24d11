// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GPU's state at a moment (current SM and memory clocks, power draw and limit, temperature,
// the reasons its clocks are held below their maximum), read through NVML. NVML is loaded at run
// time with dlopen("libnvidia-ml.so.1"), never linked, so capplan starts on machines without it;
// there every read is simply empty.
// METHOD: read only. No NVML setter (clocks, power limits, persistence, application clocks) is
// ever resolved: calibration measures the GPU as the machine's owner configured it.
#include <map>
#include <memory>
#include <string>

namespace capplan::calib::cuda {

// NVML's clocks-event (throttle) reason bits (nvml.h, nvmlClocksEventReason*), as a readable
// comma-separated list in bit order: "none" for 0; bits NVML may add later as "0x<hex>".
std::string throttle_reasons_text(unsigned long long reasons);

class NvmlDeviceState {
 public:
  // The device with this PCI bus id ("0000:65:00.0", cudaDeviceGetPCIBusId's form). Never fails:
  // without libnvidia-ml.so.1, a working nvmlInit or a device NVML knows, available() is false and
  // why() says which.
  explicit NvmlDeviceState(const std::string& pci_bus_id);
  ~NvmlDeviceState();
  NvmlDeviceState(const NvmlDeviceState&) = delete;
  NvmlDeviceState& operator=(const NvmlDeviceState&) = delete;

  bool available() const;
  const std::string& why() const { return why_; }
  std::string driver_version() const;  // "550.54.15", empty when unavailable

  // Keys (each only where NVML answers): sm_mhz, mem_mhz, power_w, power_limit_w, temperature_c,
  // throttle_reasons (throttle_reasons_text).
  std::map<std::string, std::string> read() const;

  struct Api;

 private:
  std::unique_ptr<Api> api_;
  std::string why_;
};

}  // namespace capplan::calib::cuda
