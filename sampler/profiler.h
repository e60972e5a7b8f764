// The profiler's entry points for the command line: start sampling, and finish it with
// the reports. How a sample passes through the files behind them: sampler/README.md.
#pragma once
#include <signal.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampler/profile/profile.h"
#include "sampler/profile_signal_set.h"
#include "sampler/profile/report.h"
#include "sampler/profile/samplers.h"

namespace sampler {

// The deepest stack a sample keeps: its top frames, the stack cut there and marked
// `[truncated]`, so that a sample's cost and memory are bounded whatever the recursion.
// async-profiler's default; JFR's stackdepth goes up to 2048.
inline constexpr uint32_t kDefaultStackDepth = 2048;
inline constexpr uint32_t kMaxStackDepth = 65536;

struct ProfilerOptions {
  uint64_t interval_ns = 1'000'000;     // --interval
  double interval_jitter = 0;           // --interval-jitter: each interval uniform in interval_ns * (1 +- this)
  std::vector<std::string> slowdowns;   // --slowdown sites, as reports name them
  std::vector<SamplerId> samplers{SamplerId::cooperative};  // --sampler, in report order
  size_t threads_per_period = 64;       // visited per wake-up, round-robin
  bool handshake = false;               // --suspend=handshake (else signal)
  bool stub_metadata = false;           // --stub-metadata: step out of intrinsic stubs
  std::string out_path;                 // --profile-out ("-": standard output)
  std::optional<OutputFormat> out_format;  // --format; else out_path's extension
  std::string stats_path;               // --profile-stats: the statistics as JSON
  bool lines = false;                   // --profile-lines
  ReportOptions report;                 // async-profiler's options that shape reports (--title, -t, -I, ...)
  uint64_t duration_ns = 0;             // -d/--duration: sampling stops after this (0: at exit); the program runs on
  uint64_t jsonl_max_bytes = 0;         // --profile-max-size: a .jsonl stops growing at this size (0: no cap)
  bool native_frames = false;           // --native-frames: mixed stacks (sampler/mixed_stack.h)
  uint32_t stack_depth = kDefaultStackDepth;  // --stack-depth: frames a sample keeps at most
  bool text_report = true;              // the text profile on stderr at exit
  uint64_t dump_every_ns = 0;           // --profile-dump-every: write the profile so far each period
  bool debug_info_at_safepoints = false;  // --debug-info=safepoints with compiled code (the report says so)
};

// Installs the handler, the poll client and the thread hook, and starts the sampler
// thread and the dump thread (dump_thread.cpp: the profile is written when SIGINT,
// SIGTERM or SIGPIPE ends the run, and on SIGUSR2 or every dump_every_ns while it runs).
// Call once, after VM::init/load and before run_main.
void start_profiler(const ProfilerOptions& options);
// Stops sampling, accounts for requests still pending, and writes the reports; runs
// from the VM's exit hook. False (with the reason on stderr) when a report could not be
// written, so that the exit status can say so; true when nothing was left to do.
bool finish_profiler();
// The profile merged by finish_profiler (tests).
const Profile& current_profile();

}  // namespace sampler
