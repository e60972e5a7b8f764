// The profiler's entry points (profiler.h): start installs the signal handler
// (interruption.cpp), the thread hook (event_buffers.cpp) and the poll client
// (poll_client.cpp) and starts the sampler thread (sampler_thread.cpp); finish stops it,
// merges the buffers (merge.cpp) and writes the reports.
#include "sampler/profiler.h"

#include <signal.h>
#include <time.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "runtime/errors.h"
#include "runtime/gc.h"
#include "runtime/poll.h"
#include "runtime/vm.h"
#include "sampler/profiler_state.h"
#include "sampler/profile/report.h"

namespace sampler {

ProfilerState g_state;

namespace {

void exit_hook() { finish_profiler(); }

// Writes `path` with `write`: at exit in place; in a dump through a temporary file renamed
// over it, so that a program reading the file while the run goes on never sees half of
// one.
bool write_whole(const std::string& path, bool final, std::string& error,
                 const std::function<bool(const std::string&, std::string&)>& write) {
  if (final || path == "-") return write(path, error);  // standard output cannot be replaced
  std::string tmp = path + ".part";
  if (!write(tmp, error)) return false;
  if (std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  error = path + ": cannot replace it: " + std::strerror(errno);
  std::remove(tmp.c_str());
  return false;
}

// The format of --profile-out: --format's, else the file's extension's.
std::optional<OutputFormat> out_format(const ProfilerOptions& o, std::string& error) {
  return o.out_format ? o.out_format : output_format(o.out_path, error);
}

}  // namespace

void start_profiler(const ProfilerOptions& options) {
  SamplingPlan& plan = g_state.plan_;
  plan.options = options;
  plan.hold = options.handshake;
  for (SamplerId s : options.samplers) {
    plan.want[size_t(s)] = true;
    plan.want_request |= stack_taken(s) == StackTaken::at_poll;
    plan.want_handler_walks |= stack_taken(s) == StackTaken::in_handler;
    plan.hold |= stack_taken(s) == StackTaken::by_sampler_thread;  // it walks a held thread
  }
  Profile& profile = g_state.profile;
  profile.samplers = options.samplers;
  profile.interval_ns = options.interval_ns;
  profile.interval_jitter = options.interval_jitter;
  profile.slowdowns = options.slowdowns;
  profile.debug_info_at_safepoints = options.debug_info_at_safepoints;
  const vm::Module& module = runtime::VM::get().module();
  profile.program = module.program_file();
  profile.files = module.files;
  for (const auto& fn : module.functions)
    if (fn->file != 0) profile.function_files.emplace(fn->name, fn->file);
  for (SamplerId s : options.samplers) profile.stats[s];
  struct sigaction sa = {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  runtime::VM::get().set_thread_hook(&on_thread);
  runtime::register_poll_client(&poll_client());
  runtime::register_code_root_client(&code_root_client());
  runtime::set_gc_observer(&on_collection);
  runtime::add_exit_hook(&exit_hook);
  // A .jsonl or .jfr profile is written as the events come (event_stream.h, jfr_stream.h),
  // on standard output too; a file that cannot be created is reported with the other
  // reports at exit.
  std::string ignored;
  std::optional<OutputFormat> streamed;
  if (!options.out_path.empty()) streamed = out_format(options, ignored);
  plan.start_ns = now_ns();
  if (const char* spin = std::getenv("MINIVM_TEST_HANDLER_SPIN_US"))
    plan.test_handler_spin_ns = std::strtoull(spin, nullptr, 10) * 1000;
  if (streamed == OutputFormat::jsonl) {
    g_state.jsonl.open(with_sequence_number(options.out_path, 0), g_state.jsonl_error);
    g_state.jsonl.set_max_bytes(options.jsonl_max_bytes);
  }
  if (streamed == OutputFormat::jfr)
    g_state.jfr.open(with_sequence_number(options.out_path, 0), profile, options.samplers.front(), plan.start_ns,
                     g_state.jfr_error);
  g_state.signals.running.store(true, std::memory_order_release);
  g_state.sampler.thread = std::thread(sampler_loop);
  start_dump_thread();
}

bool finish_profiler() {
  {
    std::lock_guard<std::mutex> lock(g_state.sampler.wake_mutex);  // not between its check and its wait
    if (!g_state.signals.running.exchange(false)) return true;
  }
  g_state.sampler.wake.notify_all();
  g_state.sampler.thread.join();
  stop_dump_thread();  // a dump under way ends first
  g_state.signals.closed.store(true, std::memory_order_release);
  settle_handlers();
  // Then record what the handlers' walks left for the sampler thread.
  drain_all_walks();
  g_state.profile = snapshot_profile(/*final=*/true);
  return write_reports(g_state.profile, /*final=*/true);
}

bool write_reports(const Profile& profile, bool final) {
  const ProfilerOptions& o = g_state.plan().options;
  // %n in a name: each write (dumps, then the end) its own file, numbered from 0.
  static std::atomic<uint64_t> writes{0};
  uint64_t n = writes.fetch_add(1);
  std::string out_path = with_sequence_number(o.out_path, n), stats_path = with_sequence_number(o.stats_path, n);
  ReportOptions ro = o.report;
  ro.lines = o.lines;
  bool written = true;
  auto report = [&written](bool ok, const std::string& error) {
    if (!ok) std::fprintf(stderr, "minivm: %s\n", error.c_str());
    written &= ok;
  };
  // A dump goes where the options say; with no file named, the text report on stderr.
  bool to_files = !o.out_path.empty() || !o.stats_path.empty();
  if (final ? o.text_report : !to_files) {
    write_text(profile, std::cerr, ro);
    std::cerr.flush();
  }
  std::string error;
  if (!g_state.jsonl_error.empty() || !g_state.jfr_error.empty()) {
    if (final) report(false, g_state.jsonl_error + g_state.jfr_error);
  } else if (g_state.jsonl.is_open()) {
    flush_streams();
    if (final) {
      report(g_state.jsonl.close(error), error);
      std::string cap = g_state.jsonl.cap_note();
      if (!cap.empty()) std::fprintf(stderr, "minivm: %s\n", cap.c_str());
    }
  } else if (g_state.jfr.is_open()) {
    // A dump ends the chunk under way, so the file holds every event so far, readable.
    flush_streams();
    if (final)
      report(g_state.jfr.close(error), error);
    else
      g_state.jfr.end_chunk();
  } else if (!o.out_path.empty()) {
    std::optional<OutputFormat> format = out_format(o, error);
    if (!format)
      report(!final, error);  // said once, at exit
    else
      report(write_whole(out_path, final, error, [&](const std::string& path, std::string& e) {
               return write_profile_format(profile, *format, path, ro, e);
             }),
             error);
  }
  if (!o.stats_path.empty())
    report(write_whole(stats_path, final, error,
                       [&](const std::string& path, std::string& e) { return write_stats_file(profile, path, e); }),
           error);
  return written;
}

const Profile& current_profile() { return g_state.profile; }

}  // namespace sampler
