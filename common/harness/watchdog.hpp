// A watchdog for host code that waits on the GPU: a kernel that deadlocks (an mbarrier phase that
// never completes) cannot be interrupted from the host, so a check that overruns its limit ends the
// process with a message naming it, instead of hanging a test run or the fuzzer.
// Shared by build/bin/tests (tests/support.hpp) and build/bin/fuzz.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gemm {

/// Calls `on_timeout(what)` from a helper thread if the object is still alive after `limit`.
class Watchdog {
 public:
  using Handler = std::function<void(const std::string&)>;
  /// Prints "WATCHDOG: <message>" to stderr and ends the process with status 3.
  [[noreturn]] static void exit_with(const std::string& message) {
    std::fprintf(stderr, "\nWATCHDOG: %s\n", message.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(3);
  }
  /// The default handler: "WATCHDOG: <what> did not finish in time ...", exit status 3.
  static void abort_run(const std::string& what) {
    exit_with(what + " did not finish in time (deadlocked kernel?); failing the test run");
  }
  Watchdog(std::string what, std::chrono::milliseconds limit, Handler on_timeout = &Watchdog::abort_run)
      : what_(std::move(what)), thread_([this, limit, on_timeout] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) on_timeout(what_);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: started after the other members exist
};

}  // namespace gemm
