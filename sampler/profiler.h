// The profiler: the sampler thread, the interruption (a signal handler that records a
// SampleRequest and arms the thread's poll), the cooperative reconstruction at the poll
// (JEP 518), and the reports at exit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sampler/profile.h"

namespace sampler {

struct ProfilerOptions {
  uint64_t interval_ns = 1'000'000;     // --interval
  std::vector<std::string> samplers{"cooperative"};  // --sampler: cooperative, safepoint
  size_t threads_per_period = 64;       // visited per wake-up, round-robin
  bool handshake = false;               // --suspend=handshake (else signal)
  bool stub_metadata = false;           // --stub-metadata: step out of intrinsic stubs
  std::string out_path;                 // --profile-out
  std::string stats_path;               // --profile-stats: the statistics as JSON
  bool lines = false;                   // --profile-lines
  bool text_report = true;              // the text profile on stderr at exit
};

// Installs the handler, the poll client and the thread hook, and starts the sampler
// thread. Call once, after VM::init/load and before run_main.
void start_profiler(const ProfilerOptions& options);
// Stops sampling, accounts for requests still pending, and writes the reports; runs
// from the VM's exit hook.
void finish_profiler();
// The profile collected so far (tests).
const Profile& current_profile();

// "1ms", "250us", "2s" -> ns; false on anything else.
bool parse_interval(const std::string& text, uint64_t& ns);

}  // namespace sampler
