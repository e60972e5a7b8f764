// Everything `minivm run` is told on its command line, as run_flags.cpp parses it and
// run_command.cpp uses it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jit/baseline_compiler.h"
#include "jit/tiered.h"
#include "runtime/vm.h"
#include "sampler/profiler.h"
#include "vm/cli/defines.h"
#include "vm/slowdown.h"

namespace cli {

enum class Mode { tiered, xint, xcomp };

struct RunOptions {
  std::string program;
  std::vector<Define> defines;  // --define NAME=VALUE, in command-line order
  std::vector<vm::SlowdownSite> slowdowns;  // --slowdown, in command-line order
  Mode mode = Mode::tiered;
  runtime::VMOptions vm;
  bool gc_log = false;     // --gc-log
  bool gc_verify = false;  // --gc-verify
  bool gc_a_lot = false;   // --gc-a-lot
  bool gc_full = false;    // --gc=full
  jit::JitOptions jit;
  jit::TieredOptions tiered;  // its `jit` is filled from `jit` when the run starts
  bool perf_map = false;
  bool gdb_jit = false;
  std::optional<uint64_t> stress_unload_ns;  // --stress-unload's period
  bool profile = false;  // --profile, or any option of the profiling group
  sampler::ProfilerOptions profiler;
};

}  // namespace cli
