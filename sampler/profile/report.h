// Report writers: a Profile (profile.h) as text, folded stacks, speedscope JSON, a
// self-contained HTML flame graph, or one JSON event per line (DESIGN.md, "Output").
// Writers only read the Profile. See sampler/profile/README.md for each format.
//
// What counts: a *sample* is an ExecutionSample or NativeMethodSample event (biased ones
// included). FailedSample and SafepointLatency events are accounting, not stacks.
// Self = the top frame's function (or function:line); total = every distinct function
// (or function:line) anywhere in the stack, counted once per sample even under recursion.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sampler/profile/profile.h"

namespace sampler {

struct ReportOptions {
  bool lines = false;  // --profile-lines: frames as function:line (collapsed, speedscope, HTML)
  size_t top = 15;     // rows per table in the text report
  // async-profiler's options, with its names and meanings (`minivm run --help`):
  std::string title;      // --title: the flame graph page's title ("": "minivm profile: PROGRAM")
  double min_width = 0;   // --minwidth: the flame graph leaves out frames under this % of the samples
  bool reverse = false;   // --reverse: the flame graph opens in its reverse (callers) view
  bool threads = false;   // -t: folded stacks and flame graph per thread, under a root frame naming it
  bool total = false;     // --total: folded stacks count time (samples x the mean interval, ns)
  bool annotate = false;  // -a: folded frames end in their type: _[j] compiled, _[i] inlined, _[0] interpreted
  // -I / -X: folded stacks and the flame graph keep a stack only if one of its frames
  // matches an `include` pattern (when there are any) and none matches an `exclude` one.
  // A pattern matches a frame's function name, whole; a `*` at its start or end stands
  // for any text.
  std::vector<std::string> include, exclude;
};

// The text report (what `--profile` prints on stderr): per sampler, the accounting of
// interruptions, top functions and lines by self and total, suspension and latency.
void write_text(const Profile&, std::ostream&, const ReportOptions& = {});
// FlameGraph folded stacks: "root;...;top count", one line per distinct stack. With more
// than one sampler each stack starts with the sampler's name as an extra root frame.
void write_collapsed(const Profile&, std::ostream&, const ReportOptions& = {});
// speedscope file format: one "sampled" profile per sampler, a shared frames table.
void write_speedscope(const Profile&, std::ostream&, const ReportOptions& = {});
// A self-contained interactive flame graph (inline CSS/JS, no network).
void write_html(const Profile&, std::ostream&, const ReportOptions& = {});
// One JSON object per event, in emission order, exactly DESIGN.md's schema.
void write_jsonl(const Profile&, std::ostream&);
// A JFR recording (`jfr print`, JDK Mission Control): one chunk of the profile's entries,
// each a sample event weighted by its count (report_jfr.cpp; what maps to what:
// sampler/profile/README.md). The profiler's .jfr file is written as the events come
// (sampler/jfr_stream.h) and has every event.
void write_jfr(const Profile&, std::ostream&);
// pprof's gzipped profile.proto (`go tool pprof`): one sample type per sampler, locations
// with their functions, files and lines (report_pprof.cpp; sampler/profile/profile.proto).
void write_pprof(const Profile&, std::ostream&);
// Its pieces, which the profiler's .jsonl stream uses as it records: a stack as JSON text
// (an array, made once per distinct stack), and one event's line (newline included) with
// that stack as its "stack" (ignored for an event without one) and whether the depth
// limit cut it. Every JSON writer builds nlohmann-json values (json.h); a string that is
// not UTF-8 has U+FFFD for each bad byte.
void append_stack_json(std::string& out, const StackTrace& stack);  // report_jsonl.cpp
void append_event_line(std::string& out, const Event& e, std::string_view stack_json, bool truncated);
// One collection's line: {"event":"GarbageCollection","gc":N,"young":B,"cause":C,"thread":T,
// "time_ns":N,"pause_ns":N,"time_to_safepoint_ns":N,"threads_stopped":N,"slowest_thread":T,
// "slowest_cpu_ns":N,"heap_before":N,"heap_after":N,"safepoint":N} (README: ".jsonl").
void append_gc_line(std::string& out, const GcPause& gc);  // report_jsonl.cpp

// The statistics as one JSON document (`--profile-stats FILE`): program, interval, run
// time, the sampler thread's CPU, and per sampler in report order its accounting by
// reason and its suspension and latency percentiles (schema: sampler/profile/README.md).
void write_stats_json(const Profile&, std::ostream&);  // report_stats.cpp
// write_stats_json into `path`; false with a message in `error` if it cannot be written.
bool write_stats_file(const Profile&, const std::string& path, std::string& error);  // report_stats.cpp
// Creates (or truncates) `path`, or takes standard output for "-", and lets `write` fill
// it; false with "OPTION PATH: why" in `error` when it cannot be opened or a write failed
// (a full disk). report_text.cpp.
bool write_output_file(const char* option, const std::string& path, std::string& error,
                       const std::function<void(std::ostream&)>& write);
// `path` with async-profiler's %n (or %n{MAX}: modulo MAX) made `n`, the number of the
// profile's write (each dump and the end of the run write one file of their own); other
// text as it is (report_files.cpp).
std::string with_sequence_number(const std::string& path, uint64_t n);
// The descriptor "-" writes to: standard output's (1) unless the command line moved the
// profile's standard output to another one, so that the program's own output, sent to
// stderr meanwhile, never enters a pipe that carries a profile (vm/cli/run_command.cpp).
void set_standard_output_fd(int fd);  // report_text.cpp
int standard_output_fd();

// The formats `--profile-out` writes, one writer each. kProfileFormats is the one table
// of their names: `--format NAME` takes `name` or `alias`, and so does a file's extension.
enum class OutputFormat { txt, collapsed, json, html, jsonl, jfr, pprof };
struct ProfileFormatInfo {
  OutputFormat format;
  const char* name;   // also the usual extension
  const char* alias;  // another accepted name or extension, or nullptr
  const char* what;
};
inline constexpr ProfileFormatInfo kProfileFormats[] = {
    {OutputFormat::txt, "txt", nullptr, "text report"},
    {OutputFormat::collapsed, "collapsed", "folded", "folded stacks"},
    {OutputFormat::json, "json", nullptr, "speedscope"},
    {OutputFormat::html, "html", nullptr, "flame graph"},
    {OutputFormat::jsonl, "jsonl", nullptr, "one event per line"},
    {OutputFormat::jfr, "jfr", nullptr, "JFR recording"},
    {OutputFormat::pprof, "pprof", "pb.gz", "pprof profile"},
};
// A format by name or alias, case-insensitive ("folded", "TXT"); nothing if none.
std::optional<OutputFormat> profile_format_named(std::string_view name);  // report_files.cpp
// The formats as a user chooses them: "txt (text report), collapsed or folded (folded
// stacks), ..., or jsonl (one event per line)"; with `dot`, as extensions (".txt ...").
std::string profile_format_choices(bool dot);  // report_files.cpp
// The format a file's extension names (any case); nothing, with "--profile-out PATH: why;
// use ..." in `error`, for none or another extension.
std::optional<OutputFormat> output_format(const std::string& path, std::string& error);  // report_files.cpp

// Picks the writer by the file's extension (.txt .collapsed .json .html .jsonl); returns
// false with a message in `error` for an unknown extension or a file it cannot write.
bool write_profile_file(const Profile&, const std::string& path, const ReportOptions&,
                        std::string& error);
// The same in a format given (to a path whose extension need not name it).
bool write_profile_format(const Profile&, OutputFormat format, const std::string& path, const ReportOptions&,
                          std::string& error);

// ---- Building blocks shared by the writers (and used by the tests) ----

// Samplers in report order: Profile::samplers, then (so nothing is silently left out) any
// other sampler that has stats or events, in order of first appearance.
std::vector<SamplerId> report_samplers(const Profile&);  // report_collapsed.cpp

// A sampler's counters; all zero for a sampler the profile has none for.
const SamplerStats& stats_of(const Profile&, SamplerId);  // report_collapsed.cpp

// ExecutionSample or NativeMethodSample.
inline bool is_stack_sample(const Event& e) {
  return e.type == EventType::ExecutionSample || e.type == EventType::NativeMethodSample;
}

// The event's stack; an empty trace for FailedSample or an id the repository lacks.
const StackTrace& event_stack(const Profile&, const Event&);  // report_collapsed.cpp

// One sampler's samples grouped by stack (stacks are interned, so this is how writers avoid
// walking the same trace once per sample): (stack id, samples), ids ascending. Use
// stack_of_id for the trace; an id the repository lacks is an empty trace.
std::vector<std::pair<uint32_t, uint64_t>> count_stacks(const Profile&,
                                                        SamplerId sampler);  // report_collapsed.cpp
const StackTrace& stack_of_id(const Profile&, uint32_t id);                          // report_collapsed.cpp

// A frame's name in folded stacks and flame graphs: `function`, or `function:line` with
// `lines` (`function:?` when the line is unknown, i.e. 0; a native or stub frame has no
// line: "native_spin_ns (native)"). ';' and whitespace in the function's own name become
// '_'; an empty name is "[unknown]". A sample with no frames at all is "[no_frames]".
std::string frame_label(const FrameRef&, bool lines);  // report_collapsed.cpp
inline constexpr const char* kNoFramesLabel = "[no_frames]";
// The root frame of a stack the walk's depth limit cut (StackTraceRepository::truncated)
// in folded stacks, speedscope and the HTML flame graph: it stands where the missing
// outermost callers would be, so a cut stack is never taken for a complete one.
inline constexpr const char* kTruncatedLabel = "[truncated]";
// Whether a frame has a Mini source line: native, stub and cpp frames are code outside Mini.
inline bool has_source_line(const FrameRef& f) {
  return f.kind != FrameKind::native && f.kind != FrameKind::stub && f.kind != FrameKind::cpp;
}
// A frame's function as every writer names it: "[unknown]" when it has no name; a frame
// outside Mini code says what it is ("native_spin_ns (native)", "arraycopy (stub)"), in
// place of a line it does not have.
inline std::string function_name(const FrameRef& f) {
  std::string name = f.function.empty() ? std::string("[unknown]") : f.function;
  if (!has_source_line(f)) name += std::string(" (") + frame_kind_name(f.kind) + ")";
  return name;
}

// One sampler's samples folded: "root;...;top" -> count (root first, no sampler prefix).
std::map<std::string, uint64_t> fold_stacks(const Profile&, SamplerId sampler,
                                            bool lines);  // report_collapsed.cpp
// The same under every option of `opt` that shapes stacks: -I/-X, -t, --total, -a.
std::map<std::string, uint64_t> fold_stacks(const Profile&, SamplerId sampler, const ReportOptions& opt);
// The stacks a folded or flame graph report shows, after -I and -X: each distinct
// (thread, stack) with its count; `thread` is -1 unless `opt.threads` (report_collapsed.cpp).
struct ShownStack {
  int thread;
  uint32_t stack;
  uint64_t count;
};
std::vector<ShownStack> shown_stacks(const Profile&, SamplerId sampler, const ReportOptions& opt);
// -t's root frame: "[main]", "[thread_3]".
std::string thread_label(int thread);
// A -I / -X pattern against a name: equal, or with a `*` at either end, a prefix, suffix
// or part of it.
bool pattern_matches(std::string_view pattern, std::string_view name);

// Nearest-rank percentiles: the value at rank ceil(p/100 * n) of the sorted values (as a
// Distribution keeps them: exact, or at most 0.8% above; distribution.h).
struct Percentiles {
  size_t n = 0;  // 0: no values, the report prints "n/a"
  uint64_t p50 = 0, p99 = 0, max = 0;
};
Percentiles percentiles(const Distribution& values);  // report_text.cpp
// Nanoseconds as microseconds: "0.12 µs", "4.20 µs", "42.0 µs", "420 µs", "12345 µs".
std::string format_us(uint64_t ns);  // report_text.cpp

// The rate of interruptions achieved against the rate asked for, from the sampler
// thread's schedule (Profile::Schedule). Asked: every thread running Mini code or a
// native, once per --interval (at most threads_per_period threads a period); a thread
// found blocked or in the VM is not asked for. Achieved: the interruptions that reached
// their thread. What is short has a cause: visits due in periods the sampler thread
// missed (its visits took longer than the interval, e.g. holding threads for classical,
// or it had no core when their time came),
// signals coalesced (the previous one still pending: the thread had not run since, off
// its core), and the rest (a thread gone as it was signalled; in a dump, visits under way).
struct SamplingRate {
  uint64_t asked = 0, achieved = 0;
  uint64_t missed = 0, coalesced = 0, other = 0;  // asked = achieved + missed + coalesced + other
  uint64_t periods_missed = 0;
  double asked_hz = 0;     // per running thread: one interruption per interval
  double achieved_hz = 0;  // per running thread: asked_hz scaled by achieved / asked
  // Achieved under kRateKept of asked: the reports say so and why.
  bool short_of_asked() const { return asked > 0 && double(achieved) < kRateKept * double(asked); }
  static constexpr double kRateKept = 0.9;
};
SamplingRate sampling_rate(const Profile& p);  // report_rate.cpp
// "73 of 4,940 interruptions asked for (1.5%): 29.6/s per running thread against
// 2000/s": the rate in one line, without a newline.
std::string format_rate(const SamplingRate& r);
// Why the rate fell short, one clause per cause with its numbers, largest first; empty
// when it did not.
std::vector<std::string> rate_shortfall(const Profile& p, const SamplingRate& r);
// Classical ran beside other samplers and the sampler thread missed periods: classical
// holds every thread it visits until it has walked it, so the others got fewer
// interruptions than they would alone.
bool classical_throttles(const Profile& p, const SamplingRate& r);

}  // namespace sampler
