// The profiler's entry points (profiler.h): start installs the signal handler
// (interruption.cpp), the thread hook (event_buffers.cpp) and the poll client
// (poll_client.cpp) and starts the sampler thread (sampler_thread.cpp); finish stops it,
// merges the buffers (merge.cpp) and writes the reports.
#include "sampler/profiler.h"

#include <signal.h>
#include <time.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "runtime/errors.h"
#include "runtime/poll.h"
#include "runtime/vm.h"
#include "sampler/profiler_state.h"
#include "sampler/report.h"

namespace sampler {

ProfilerState g_state;

namespace {
void exit_hook() { finish_profiler(); }
}  // namespace

bool parse_interval(const std::string& text, uint64_t& ns) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) i++;
  if (i == 0) return false;
  double v = std::strtod(text.substr(0, i).c_str(), nullptr);
  std::string unit = text.substr(i);
  double mult = unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 0;
  if (mult == 0 || v <= 0) return false;
  ns = uint64_t(v * mult);
  return ns >= 10'000 && ns <= 10'000'000'000ull;  // 10 us .. 10 s
}

void start_profiler(const ProfilerOptions& options) {
  g_state.options = options;
  g_state.hold = options.handshake;
  for (SamplerId s : options.samplers) {
    g_state.want[size_t(s)] = true;
    g_state.want_request |= stack_taken(s) == StackTaken::at_poll;
    g_state.want_handler_walks |= stack_taken(s) == StackTaken::in_handler;
    g_state.hold |= stack_taken(s) == StackTaken::by_sampler_thread;  // it walks a held thread
  }
  Profile& profile = g_state.profile;
  profile.samplers = options.samplers;
  profile.interval_ns = options.interval_ns;
  profile.program = runtime::VM::get().module().file;
  for (SamplerId s : options.samplers) profile.stats[s];
  struct sigaction sa = {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  runtime::VM::get().set_thread_hook(&on_thread);
  runtime::register_poll_client(&poll_client());
  runtime::register_code_root_client(&code_root_client());
  runtime::add_exit_hook(&exit_hook);
  profile.duration_ns = now_ns();  // the start; merge_profile makes it the duration
  g_state.running.store(true, std::memory_order_release);
  g_state.sampler_thread = std::thread(sampler_loop);
}

void finish_profiler() {
  if (!g_state.running.exchange(false)) return;
  g_state.sampler_thread.join();
  // A handler that was already running finishes within microseconds; then record what
  // the handlers' walks left for the sampler thread.
  timespec settle{0, 2'000'000};
  nanosleep(&settle, nullptr);
  drain_all_walks();
  merge_profile();
  ReportOptions ro;
  ro.lines = g_state.options.lines;
  if (g_state.options.text_report) write_text(g_state.profile, std::cerr, ro);
  if (!g_state.options.out_path.empty()) {
    std::string error;
    if (!write_profile_file(g_state.profile, g_state.options.out_path, ro, error))
      std::fprintf(stderr, "minivm: %s\n", error.c_str());
  }
  if (!g_state.options.stats_path.empty()) {
    std::string error;
    if (!write_stats_file(g_state.profile, g_state.options.stats_path, error)) std::fprintf(stderr, "minivm: %s\n", error.c_str());
  }
  std::cerr.flush();
}

const Profile& current_profile() { return g_state.profile; }

}  // namespace sampler
