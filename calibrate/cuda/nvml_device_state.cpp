// SPDX-License-Identifier: Apache-2.0
#include "nvml_device_state.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <utility>

namespace capplan::calib::cuda {
namespace {

// The few NVML declarations used here (nvml.h; the header is not needed to build): return codes
// are an int enum with NVML_SUCCESS = 0; enum arguments are passed as int.
using NvmlReturn = int;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;        // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

// nvml.h's nvmlClocksEventReason* bits, in bit order.
constexpr std::pair<unsigned long long, const char*> kReasons[] = {
    {0x1ULL, "gpu_idle"},
    {0x2ULL, "applications_clocks_setting"},
    {0x4ULL, "sw_power_cap"},
    {0x8ULL, "hw_slowdown"},
    {0x10ULL, "sync_boost"},
    {0x20ULL, "sw_thermal_slowdown"},
    {0x40ULL, "hw_thermal_slowdown"},
    {0x80ULL, "hw_power_brake_slowdown"},
    {0x100ULL, "display_clock_setting"},
};

// A symbol of `lib` as a function pointer of type F, or nullptr.
template <class F>
F symbol(void* lib, const char* name) {
  static_assert(sizeof(F) == sizeof(void*));
  void* p = dlsym(lib, name);
  F f = nullptr;
  std::memcpy(&f, &p, sizeof f);
  return f;
}

std::string fixed1(double v) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f", v);
  return buf.data();
}

}  // namespace

std::string throttle_reasons_text(unsigned long long reasons) {
  if (reasons == 0) return "none";
  std::string out;
  unsigned long long known = 0;
  for (const auto& [bit, name] : kReasons) {
    known |= bit;
    if ((reasons & bit) != 0) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  if (const unsigned long long rest = reasons & ~known; rest != 0) {
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "0x%llx", rest);
    out += (out.empty() ? "" : ", ") + std::string(buf.data());
  }
  return out;
}

struct NvmlDeviceState::Api {
  void* lib = nullptr;
  bool initialised = false;
  NvmlDevice device = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;

  ~Api() {
    if (initialised && shutdown != nullptr) (void)shutdown();
    if (lib != nullptr) (void)dlclose(lib);
  }
};

NvmlDeviceState::NvmlDeviceState(const std::string& pci_bus_id) {
  auto api = std::make_unique<Api>();
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->lib == nullptr) {
    const char* e = dlerror();
    why_ = std::string("libnvidia-ml.so.1 not loaded (") + (e != nullptr ? e : "dlopen failed") + ")";
    return;
  }
  const auto init = symbol<NvmlReturn (*)()>(api->lib, "nvmlInit_v2");
  const auto by_bus_id = symbol<NvmlReturn (*)(const char*, NvmlDevice*)>(api->lib, "nvmlDeviceGetHandleByPciBusId_v2");
  api->shutdown = symbol<NvmlReturn (*)()>(api->lib, "nvmlShutdown");
  if (init == nullptr || by_bus_id == nullptr || api->shutdown == nullptr) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2";
    return;
  }
  if (const NvmlReturn r = init(); r != kNvmlSuccess) {
    why_ = "nvmlInit_v2 returned " + std::to_string(r);
    return;
  }
  api->initialised = true;
  if (const NvmlReturn r = by_bus_id(pci_bus_id.c_str(), &api->device); r != kNvmlSuccess) {
    why_ = "NVML does not know the device at PCI bus id " + pci_bus_id + " (" + std::to_string(r) + ")";
    api->device = nullptr;
    return;
  }
  api->clock_info = symbol<decltype(api->clock_info)>(api->lib, "nvmlDeviceGetClockInfo");
  api->power_usage = symbol<decltype(api->power_usage)>(api->lib, "nvmlDeviceGetPowerUsage");
  api->power_limit = symbol<decltype(api->power_limit)>(api->lib, "nvmlDeviceGetEnforcedPowerLimit");
  api->temperature = symbol<decltype(api->temperature)>(api->lib, "nvmlDeviceGetTemperature");
  // NVML 12.2 renamed the throttle reasons "clocks event reasons"; older drivers have the old name.
  api->reasons = symbol<decltype(api->reasons)>(api->lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api->reasons == nullptr) {
    api->reasons = symbol<decltype(api->reasons)>(api->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  api->driver_version = symbol<decltype(api->driver_version)>(api->lib, "nvmlSystemGetDriverVersion");
  api_ = std::move(api);
}

NvmlDeviceState::~NvmlDeviceState() = default;

bool NvmlDeviceState::available() const { return api_ != nullptr && api_->device != nullptr; }

std::string NvmlDeviceState::driver_version() const {
  if (!available() || api_->driver_version == nullptr) return {};
  std::array<char, 96> buf{};
  if (api_->driver_version(buf.data(), static_cast<unsigned>(buf.size())) != kNvmlSuccess) return {};
  buf.back() = '\0';
  return buf.data();
}

std::map<std::string, std::string> NvmlDeviceState::read() const {
  std::map<std::string, std::string> out;
  if (!available()) return out;
  const Api& a = *api_;
  unsigned v = 0;
  if (a.clock_info != nullptr && a.clock_info(a.device, kNvmlClockSm, &v) == kNvmlSuccess) {
    out["sm_mhz"] = std::to_string(v);
  }
  if (a.clock_info != nullptr && a.clock_info(a.device, kNvmlClockMem, &v) == kNvmlSuccess) {
    out["mem_mhz"] = std::to_string(v);
  }
  if (a.power_usage != nullptr && a.power_usage(a.device, &v) == kNvmlSuccess) out["power_w"] = fixed1(v / 1000.0);
  if (a.power_limit != nullptr && a.power_limit(a.device, &v) == kNvmlSuccess) {
    out["power_limit_w"] = fixed1(v / 1000.0);
  }
  if (a.temperature != nullptr && a.temperature(a.device, kNvmlTemperatureGpu, &v) == kNvmlSuccess) {
    out["temperature_c"] = std::to_string(v);
  }
  unsigned long long reasons = 0;
  if (a.reasons != nullptr && a.reasons(a.device, &reasons) == kNvmlSuccess) {
    out["throttle_reasons"] = throttle_reasons_text(reasons);
  }
  return out;
}

}  // namespace capplan::calib::cuda
