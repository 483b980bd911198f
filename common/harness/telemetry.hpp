// Clock, power and energy of the GPU while a measurement runs, read through NVML.
//
// The H200 runs large bf16 GEMMs at its 700 W power cap, where the SM clock moves between about
// 1.2 and 1.7 GHz (docs/machine.md, "Power and the clock"): a TFLOP/s number means little without
// the clock and power it was measured at.
// NVML (libnvidia-ml.so.1) ships with the driver, not with the toolkit, so it is loaded at run time
// with dlopen: a machine without a driver (CI) still builds and runs everything, and every number
// that needs NVML prints "no NVML" instead.
//
// A Sampler thread polls NVML every `period` while a measurement runs: SM clock
// (nvmlDeviceGetClockInfo, NVML_CLOCK_SM), instantaneous board power (field NVML_FI_DEV_POWER_INSTANT,
// falling back to nvmlDeviceGetPowerUsage), the clock event ("throttle") reasons and the total-energy
// counter (nvmlDeviceGetTotalEnergyConsumption, millijoules since the driver loaded). NVML API
// reference: "Device Queries" (clocks, power, energy) and "ClocksEventReasons".
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gemm {

/// One NVML reading. Times are seconds since the Sampler started.
struct TelemetrySample {
  double t_s = 0;
  unsigned sm_clock_mhz = 0;
  double power_w = 0;
  unsigned long long energy_mj = 0;  ///< the device's total-energy counter
  unsigned long long reasons = 0;    ///< nvmlClocksEventReason* bit mask
};

/// What happened over a window of samples.
struct TelemetrySummary {
  bool available = false;     ///< false: no NVML (then every other field is zero)
  int samples = 0;
  double seconds = 0;          ///< from the first to the last sample of the window
  double clock_mean_mhz = 0, clock_min_mhz = 0, clock_max_mhz = 0;
  double power_mean_w = 0, power_max_w = 0;
  /// Energy between the first and the last update of the total-energy counter inside the window,
  /// and the time between those updates. The driver refreshes the counter (and the power reading)
  /// about every 100 ms (seen on an H200, driver 580), so a window must span several updates; the
  /// mean power is energy_j / energy_s.
  double energy_j = 0, energy_s = 0;
  /// Mean power from the energy counter (0 when the window saw fewer than two counter updates).
  double counter_watts() const { return energy_s > 0 ? energy_j / energy_s : 0; }
  unsigned long long reasons = 0;  ///< OR of the reasons seen (idle excluded)
};

/// Names of the bits of an nvmlClocksEventReason mask, e.g. "sw_power_cap+hw_slowdown"; "none".
std::string clock_reason_names(unsigned long long reasons);

/// The NVML library, loaded once per process. All functions are safe to call without a driver.
class Nvml {
 public:
  /// The process-wide instance (loads libnvidia-ml.so.1 and finds CUDA device 0 by PCI bus id
  /// on first use).
  static Nvml& get();
  /// True when the library loaded, initialised, and the device was found.
  bool available() const { return ok_; }
  /// Why NVML is not available ("no NVML: ..."), empty when it is.
  const std::string& why_not() const { return why_not_; }
  /// One reading now; std::nullopt without NVML.
  std::optional<TelemetrySample> read(double t_s) const;
  /// Enforced power limit in watts (0 when unknown).
  double power_limit_w() const;

 private:
  Nvml();
  struct Fns;
  bool ok_ = false;
  std::string why_not_;
  void* lib_ = nullptr;
  void* device_ = nullptr;
  Fns* fns_ = nullptr;
};

/// Polls NVML on a thread from construction to destruction (or stop()).
class Sampler {
 public:
  explicit Sampler(std::chrono::microseconds period = std::chrono::microseconds(2000));
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Seconds since construction (the time base of the samples).
  double now() const;
  /// Stops polling (idempotent).
  void stop();
  /// A copy of every sample so far.
  std::vector<TelemetrySample> samples() const;
  /// Summary of the samples with t in [t0, t1] (t1 < 0: up to now).
  TelemetrySummary summary(double t0 = 0, double t1 = -1) const;

 private:
  void loop(std::chrono::microseconds period);
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  std::vector<TelemetrySample> samples_;
  bool stop_ = false;
  std::thread thread_;
};

/// Summary of `samples` restricted to [t0, t1]; energy from the counter's first and last reading.
TelemetrySummary summarize(const std::vector<TelemetrySample>& samples, double t0, double t1);

}  // namespace gemm
