#include "telemetry.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>

#ifndef GEMM_NO_NVML_HEADER
#include <nvml.h>  // types and prototypes only: the library itself is dlopen'ed
#endif

namespace gemm {

std::string clock_reason_names(unsigned long long reasons) {
  static const std::pair<unsigned long long, const char*> names[] = {
      {0x1, "gpu_idle"},           {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},         {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},        {0x80, "hw_power_brake"},     {0x100, "display_clocks"},
      {0x200, "board_limit"},      {0x400, "reliability"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (reasons & bit) out += (out.empty() ? "" : "+") + std::string(name);
  return out.empty() ? "none" : out;
}

#ifdef GEMM_NO_NVML_HEADER

struct Nvml::Fns {};
Nvml::Nvml() { why_not_ = "no NVML (built without nvml.h: scripts/deps.sh installs it)"; }
std::optional<TelemetrySample> Nvml::read(double) const { return std::nullopt; }
double Nvml::power_limit_w() const { return 0; }

#else

struct Nvml::Fns {
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_pci = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetFieldValues) fields = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) reasons = nullptr;
  decltype(&nvmlDeviceGetEnforcedPowerLimit) limit = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
};

Nvml::Nvml() : fns_(new Fns) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_not_ = "no NVML (libnvidia-ml.so.1 not found: no NVIDIA driver here)";
    return;
  }
  auto sym = [this](const char* name) { return dlsym(lib_, name); };
  fns_->init = reinterpret_cast<decltype(fns_->init)>(sym("nvmlInit_v2"));
  fns_->by_pci = reinterpret_cast<decltype(fns_->by_pci)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  fns_->clock = reinterpret_cast<decltype(fns_->clock)>(sym("nvmlDeviceGetClockInfo"));
  fns_->power = reinterpret_cast<decltype(fns_->power)>(sym("nvmlDeviceGetPowerUsage"));
  fns_->fields = reinterpret_cast<decltype(fns_->fields)>(sym("nvmlDeviceGetFieldValues"));
  fns_->energy = reinterpret_cast<decltype(fns_->energy)>(sym("nvmlDeviceGetTotalEnergyConsumption"));
  // The newer name first; drivers before 535 only have the "throttle" spelling (same signature).
  void* r = sym("nvmlDeviceGetCurrentClocksEventReasons");
  if (!r) r = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
  fns_->reasons = reinterpret_cast<decltype(fns_->reasons)>(r);
  fns_->limit = reinterpret_cast<decltype(fns_->limit)>(sym("nvmlDeviceGetEnforcedPowerLimit"));
  fns_->error_string = reinterpret_cast<decltype(fns_->error_string)>(sym("nvmlErrorString"));
  if (!fns_->init || !fns_->by_pci || !fns_->clock || !fns_->power || !fns_->energy) {
    why_not_ = "no NVML (libnvidia-ml.so.1 lacks a needed entry point)";
    return;
  }
  if (nvmlReturn_t s = fns_->init(); s != NVML_SUCCESS) {
    why_not_ = fmt::format("no NVML (nvmlInit failed: {})", fns_->error_string ? fns_->error_string(s) : "?");
    return;
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    why_not_ = "no NVML (no CUDA device 0 to match)";
    return;
  }
  nvmlDevice_t dev{};
  if (nvmlReturn_t s = fns_->by_pci(bus, &dev); s != NVML_SUCCESS) {
    why_not_ = fmt::format("no NVML (device {} not found: {})", bus, fns_->error_string ? fns_->error_string(s) : "?");
    return;
  }
  device_ = dev;
  ok_ = true;
}

std::optional<TelemetrySample> Nvml::read(double t_s) const {
  if (!ok_) return std::nullopt;
  nvmlDevice_t dev = static_cast<nvmlDevice_t>(device_);
  TelemetrySample s;
  s.t_s = t_s;
  fns_->clock(dev, NVML_CLOCK_SM, &s.sm_clock_mhz);
  bool have_power = false;
  if (fns_->fields) {  // instantaneous power; nvmlDeviceGetPowerUsage averages over a second on recent GPUs
    nvmlFieldValue_t f{};
    f.fieldId = NVML_FI_DEV_POWER_INSTANT;
    if (fns_->fields(dev, 1, &f) == NVML_SUCCESS && f.nvmlReturn == NVML_SUCCESS) {
      s.power_w = f.value.uiVal / 1000.0;
      have_power = true;
    }
  }
  unsigned mw = 0;
  if (!have_power && fns_->power(dev, &mw) == NVML_SUCCESS) s.power_w = mw / 1000.0;
  fns_->energy(dev, &s.energy_mj);
  if (fns_->reasons) fns_->reasons(dev, &s.reasons);
  return s;
}

double Nvml::power_limit_w() const {
  unsigned mw = 0;
  if (!ok_ || !fns_->limit || fns_->limit(static_cast<nvmlDevice_t>(device_), &mw) != NVML_SUCCESS) return 0;
  return mw / 1000.0;
}

#endif

Nvml& Nvml::get() {
  static Nvml instance;  // never unloaded: samplers may outlive other statics during exit
  return instance;
}

Sampler::Sampler(std::chrono::microseconds period) : start_(std::chrono::steady_clock::now()) {
  if (Nvml::get().available()) thread_ = std::thread([this, period] { loop(period); });
}

Sampler::~Sampler() { stop(); }

double Sampler::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Sampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Sampler::loop(std::chrono::microseconds period) {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    if (auto s = Nvml::get().read(now())) {
      std::lock_guard<std::mutex> lock(mu_);
      samples_.push_back(*s);
    }
    next += period;
    std::this_thread::sleep_until(next);
  }
}

std::vector<TelemetrySample> Sampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

TelemetrySummary Sampler::summary(double t0, double t1) const {
  return summarize(samples(), t0, t1 < 0 ? now() : t1);
}

TelemetrySummary summarize(const std::vector<TelemetrySample>& samples, double t0, double t1) {
  TelemetrySummary out;
  const TelemetrySample* first = nullptr;
  const TelemetrySample* last = nullptr;
  const TelemetrySample* first_update = nullptr;  // first and last samples that saw a new counter value
  const TelemetrySample* last_update = nullptr;
  const TelemetrySample* prev = nullptr;
  double clock_sum = 0, power_sum = 0;
  for (const TelemetrySample& s : samples) {
    const TelemetrySample* before = prev;
    prev = &s;
    if (s.t_s < t0 || s.t_s > t1) continue;
    if (before && s.energy_mj != before->energy_mj) {
      if (!first_update) first_update = &s;
      last_update = &s;
    }
    if (!first) {
      first = &s;
      out.clock_min_mhz = out.clock_max_mhz = s.sm_clock_mhz;
    }
    last = &s;
    ++out.samples;
    clock_sum += s.sm_clock_mhz;
    power_sum += s.power_w;
    out.clock_min_mhz = std::min<double>(out.clock_min_mhz, s.sm_clock_mhz);
    out.clock_max_mhz = std::max<double>(out.clock_max_mhz, s.sm_clock_mhz);
    out.power_max_w = std::max(out.power_max_w, s.power_w);
    out.reasons |= s.reasons & ~1ULL;  // "idle" between launches says nothing about the kernels
  }
  if (!first) return out;
  out.available = true;
  out.seconds = last->t_s - first->t_s;
  out.clock_mean_mhz = clock_sum / out.samples;
  out.power_mean_w = power_sum / out.samples;
  if (first_update && last_update != first_update) {
    out.energy_j = (last_update->energy_mj - first_update->energy_mj) / 1000.0;
    out.energy_s = last_update->t_s - first_update->t_s;
  }
  return out;
}

}  // namespace gemm
