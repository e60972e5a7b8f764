#include "vm/cli/run_flags.h"

#include <algorithm>

#include <fmt/format.h>

#include "jit/stress_unload.h"
#include "sampler/profile/samplers.h"
#include "vm/cli/help_format.h"
#include "vm/cli/outputs.h"
#include "vm/cli/values.h"
#include "vm/text.h"

namespace cli {

namespace {

// Every option of these groups implies --profile (README, "Using it"). The groups after the
// first are async-profiler's, by the outputs an option applies to (its docs' tables).
constexpr const char* kProfiling = "Profiling (any of these implies --profile)";
constexpr const char* kFlameGraph = "Profiling, flame graph (.html) only";
constexpr const char* kStacks = "Profiling, folded stacks (.collapsed) and flame graph (.html) only";
constexpr const char* kJsonl = "Profiling, .jsonl only";
bool is_profiling_group(const std::string& group) {
  for (const char* g : {kProfiling, kFlameGraph, kStacks, kJsonl})
    if (group == g) return true;
  return false;
}
constexpr const char* kExecution = "Execution";
constexpr const char* kCompiled = "Compiled code";
constexpr const char* kMemory = "Memory and collection";

constexpr uint64_t kMiB = uint64_t(1) << 20;
// Sampling intervals and --stress-unload periods: from 10 us to 10 s.
constexpr uint64_t kMinPeriodNs = 10'000;
constexpr uint64_t kMaxPeriodNs = 10'000'000'000ull;

[[noreturn]] void bad(const std::string& noun, const std::string& option, const std::string& text,
                      const std::string& why) {
  throw CLI::ValidationError(fmt::format("bad {} '{}' for {}: {}", noun, vm::shortened(text), option, why));
}

// What an option's value is: its name in the help ("SIZE"), what it accepts (appended to
// the help, so that the limits and the default are written only where they are checked
// or stored), and how a text becomes the value; `set` gets the option's name for its
// messages.
struct Value {
  std::string type;
  std::string accepts;
  std::function<void(const std::string& option, const std::string& text)> set;
};

// The option's long name ("-o,--profile-out" -> "--profile-out").
std::string long_name(const std::string& names) { return names.substr(names.find_last_of(',') + 1); }

// The help, and the message for a bad value, end with what the option accepts.
CLI::Option* option(CLI::App& app, const std::string& names, const char* group, const std::string& help, Value v) {
  std::string accepts = v.accepts.empty() ? "" : " (" + v.accepts + ")";
  std::string text = help + accepts;
  auto set = [set = std::move(v.set), name = long_name(names), accepts](const std::string& t) {
    try {
      set(name, t);
    } catch (const CLI::ValidationError& e) {
      throw CLI::ValidationError(e.what() + accepts);
    }
  };
  return app.add_option_function<std::string>(names, set, wrap(text))->type_name(v.type)->group(group);
}

CLI::Option* flag(CLI::App& app, const std::string& name, const char* group, const std::string& help,
                  std::function<void()> set) {
  return app.add_flag_callback(name, std::move(set), wrap(help))->group(group);
}

template <typename T>
Value size_value(const char* noun, uint64_t min, uint64_t max, T& out) {
  return {"SIZE", fmt::format("from {} to {}; default {}", format_size(min), format_size(max), format_size(out)),
          [=, &out](const std::string& option, const std::string& text) {
            std::string why;
            auto v = parse_size(text, min, max, why);
            if (!v) bad(noun, option, text, why);
            out = T(*v);
          }};
}

Value count_value(uint32_t& out) {
  return {"N", fmt::format("from 1 to {}; default {}", UINT32_MAX - 1, out), [&out](const std::string& option, const std::string& text) {
            std::string why;
            auto v = parse_whole(text, 1, UINT32_MAX - 1, why);
            if (!v) bad("count", option, text, why);
            out = uint32_t(*v);
          }};
}

// A duration; with `optional`, the option may be given without one and means `fallback`.
template <typename T>
Value duration_value(const char* noun, uint64_t min_ns, uint64_t max_ns, uint64_t fallback, T& out,
                     bool optional = false, bool bare_ns = false) {
  return {optional ? "[T]" : "T",
          fmt::format("from {} to {}; default {}", format_duration(min_ns), format_duration(max_ns),
                      format_duration(fallback)),
          [=, &out](const std::string& option, const std::string& text) {
            if (optional && text.empty()) {
              out = fallback;
              return;
            }
            std::string why;
            auto v = parse_duration(text, min_ns, max_ns, why, bare_ns);
            if (!v) bad(noun, option, text, why);
            out = *v;
          }};
}

// One of `names`; `pick` gets its index. `current` is the default's.
Value choice_value(std::vector<std::string> names, size_t current, std::function<void(size_t)> pick) {
  std::string type;
  for (const std::string& n : names) type += (type.empty() ? "" : "|") + n;
  return {type, "default " + names[current], [=](const std::string& option, const std::string& text) {
            auto it = std::find(names.begin(), names.end(), text);
            if (it == names.end()) bad("value", option, text, "use " + one_of(names));
            pick(size_t(it - names.begin()));
          }};
}

void append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

Value path_value(std::string& out) {
  return {"FILE", "", [&out](const std::string& option, const std::string& path) {
            if (path.empty()) bad("file name", option, path, "it needs a file name, or - for stdout");
            out = path;
          }};
}

// "cooperative,safepoint" or "all" -> the samplers, each once, in the order given.
Value samplers_value(std::vector<sampler::SamplerId>& out) {
  std::vector<std::string> accepted;
  for (size_t i = 0; i < sampler::kSamplerCount; i++) accepted.emplace_back(sampler::kSamplerNames[i]);
  accepted.push_back("all");
  return {"LIST", "", [accepted, &out](const std::string& option, const std::string& list) {
            out.clear();
            size_t start = 0;
            for (;;) {
              size_t comma = list.find(',', start);
              std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
              std::vector<sampler::SamplerId> ids;
              if (name == "all") {
                for (size_t i = 0; i < sampler::kSamplerCount; i++) ids.push_back(sampler::SamplerId(i));
              } else if (auto id = sampler::sampler_named(name)) {
                ids.push_back(*id);
              } else {
                throw CLI::ValidationError(fmt::format("unknown sampler '{}' for {}: use {}, or a comma-separated list",
                                                       name, option, one_of(accepted)));
              }
              for (sampler::SamplerId id : ids)
                if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
              if (comma == std::string::npos) break;
              start = comma + 1;
            }
          }};
}

std::string sampler_help() {
  std::string text = "comma-separated, each reported separately on the same interruptions, or all (every one of them):";
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    text += "\n" + wrap(fmt::format("  {:<12} {}", sampler::kSamplerNames[i], sampler::kSamplerHelp[i]), kHelpWidth,
                       /*hang=*/13);
  return text;
}

}  // namespace

void add_code_shape_flags(CLI::App& app, jit::JitOptions& o) {
  flag(app, "--counted-loop-polls", kCompiled, "compiled counted loops poll at their header too",
       [&] { o.counted_loop_polls = true; });
  option(app, "--strip-mining", kCompiled,
         "otherwise a compiled counted loop polls once every N iterations, so a long one still serves sample "
         "requests",
         Value{"N", fmt::format("a power of two up to 2^30, or 0 for never; default {}", o.strip_mining_iters),
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto n = parse_whole(text, 0, uint64_t(1) << 30, why);
                 if (n && (*n & (*n - 1)) != 0) why = "it is not a power of two";
                 if (!why.empty()) bad("value", option, text, why);
                 o.strip_mining_iters = uint32_t(*n);
               }});
  option(app, "--debug-info", kCompiled, "compiled-code debug info for every pc, or only at polls and calls",
         choice_value({"all", "safepoints"}, o.safepoint_debug_info, [&](size_t i) { o.safepoint_debug_info = i == 1; }));
}

void add_slowdown_flag(CLI::App& app, std::vector<vm::SlowdownSite>& sites) {
  app.add_option_function<std::vector<std::string>>(
         "--slowdown",
         [&](const std::vector<std::string>& texts) {
           for (const std::string& text : texts) {
             size_t eq = text.rfind('='), colon = eq == std::string::npos ? eq : text.rfind(':', eq);
             if (colon == std::string::npos || colon == 0)
               bad("slowdown", "--slowdown", text, "write FUNCTION:LINE=T, e.g. sieve:10=100ns");
             vm::SlowdownSite s;
             s.function = text.substr(0, colon);
             std::string why, line = text.substr(colon + 1, eq - colon - 1), amount = text.substr(eq + 1);
             auto l = parse_whole(line, 1, UINT32_MAX, why);
             if (!l) bad("line", "--slowdown", line, why);
             s.line = uint32_t(*l);
             // Nanoseconds as well as the durations every option takes: a pass adds little.
             bool ns = amount.size() > 2 && amount.compare(amount.size() - 2, 2, "ns") == 0;
             auto n = ns ? parse_whole(amount.substr(0, amount.size() - 2), 0, vm::kMaxSlowdownNs, why)
                         : parse_duration(amount, 0, vm::kMaxSlowdownNs, why);
             if (!n) bad("amount", "--slowdown", amount, why + " (T a pass: 100ns, 2us, at most 1ms)");
             s.ns = uint32_t(*n);
             if (sites.size() == vm::kMaxSlowdownSites)
               bad("slowdown", "--slowdown", text, fmt::format("at most {} sites in one run", vm::kMaxSlowdownSites));
             sites.push_back(s);
           }
         },
         wrap("each time control enters source line LINE of FUNCTION (every function of that name, as profiles "
              "name it: sieve, Vector.add), spend T more in a calibrated chain of multiplies, and change nothing "
              "else: to check where each profiler puts known added time; repeatable"))
      ->type_name("FUNCTION:LINE=T")
      ->allow_extra_args(false)
      ->group(kExecution);
}

void add_run_flags(CLI::App& run, RunOptions& o) {
  // Required, so that an option whose value is optional (--stress-unload) never takes it.
  run.add_option("program", o.program, "the Mini program to compile and run")->type_name("PROGRAM.mini")->required();

  CLI::Option* xint = flag(run, "--xint", kExecution, "run in the template interpreter only (not with --xcomp)",
                           [&] { o.mode = Mode::xint; });
  CLI::Option* xcomp =
      flag(run, "--xcomp", kExecution, "compile every function with the baseline JIT before running (not with --xint)",
           [&] { o.mode = Mode::xcomp; });
  xint->excludes(xcomp);
  xcomp->excludes(xint);
  option(run, "--compile-threshold", kExecution,
         "tiered (the default: interpret, compile hot functions on a background thread, enter running loops by "
         "OSR): calls before a function is compiled",
         count_value(o.tiered.invocation_threshold));
  option(run, "--backedge-threshold", kExecution,
         "loop back-edges in a function before it is compiled and its running loops move to compiled code by OSR",
         count_value(o.tiered.backedge_threshold));
  flag(run, "--jit-sync", kExecution, "tiered, but compile on the thread that asks (deterministic OSR)",
       [&] { o.tiered.synchronous = true; });
  run.add_option_function<std::vector<std::string>>(
         "-D,--define",
         [&](const std::vector<std::string>& texts) {
           for (const std::string& text : texts) {
             Define d;
             std::string why;
             if (!parse_define(text, d, why)) bad("definition", "--define", text, why);
             o.defines.push_back(d);
           }
         },
         wrap("start the program with global NAME set to VALUE instead of its initialiser (a literal of the "
              "global's type: int, float or bool), e.g. -D ROUNDS=5000; repeatable; the language is unchanged"))
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->group(kExecution);
  add_slowdown_flag(run, o.slowdowns);
  flag(run, "--print-compilation", kExecution, "one line on stderr per compiled function and per OSR",
       [&] { o.tiered.print_compilation = true; });

  flag(run, "--debug-no-polls", kCompiled,
       "compiled code without safepoint polls (only to measure their cost: such code cannot be sampled or stopped)",
       [&] { o.jit.emit_polls = false; });
  add_code_shape_flags(run, o.jit);
  option(run, "--stress-unload", kCompiled,
         "every T recompile every compiled function and free the replaced code once no thread can be in it; "
         "tiered or --xcomp only",
         duration_value("period", kMinPeriodNs, kMaxPeriodNs, jit::StressUnloadOptions{}.period_ns,
                        o.stress_unload_ns, /*optional=*/true))
      ->expected(0, 1);
  flag(run, "--perf-map", kCompiled,
       "write /tmp/perf-PID.map and jit-PID.dump ($MINIVM_JITDUMP_DIR, else a new ~/.debug/jit/minivm-jit-DATE.* as "
       "perf's JIT agent does) naming the interpreter, stubs and compiled code for `perf` (jit/README.md, "
       "\"Profiling JIT code with perf\")",
       [&] { o.perf_map = true; });
  flag(run, "--gdb-jit", kCompiled,
       "describe the interpreter, stubs and compiled code to gdb through its JIT interface (symbols, source lines "
       "and unwind info, so `bt` walks through Mini frames; README.md, \"Debugging compiled code with gdb\")",
       [&] { o.gdb_jit = true; });

  option(run, "--heap", kMemory,
         "largest live heap, e.g. 64m, 4g; the collector keeps memory near twice the live values and 8m",
         size_value("heap size", kMiB, uint64_t(1) << 40, o.vm.heap_bytes));
  flag(run, "--gc-log", kMemory,
       "one line per collection on stderr: young or full, cause, pause, time to safepoint and the last thread to "
       "stop (function and line), heap before and after",
       [&] { o.gc_log = true; });
  flag(run, "--gc-verify", kMemory,
       "check every root of every collection against a walk of the heap, and after a young mark a full one (slower; "
       "a root that is not an array, or a value stored without the write barrier, is an internal error)",
       [&] { o.gc_verify = true; });
  flag(run, "--gc-a-lot", kMemory,
       "collect, young and full in turn, each time a thread returns from the runtime to Mini code (a test mode, with --gc-verify: a stack "
       "map that is wrong where a collection can stop a thread shows at once)",
       [&] { o.gc_a_lot = true; });
  option(run, "--gc", kMemory,
         "generational: young collections (the values allocated since the last collection) and a full one when "
         "the old generation has doubled; full: every collection traces the whole heap",
         choice_value({"generational", "full"}, o.gc_full ? 1 : 0, [&](size_t i) { o.gc_full = i == 1; }));
  option(run, "--stack", kMemory, "stack of each Mini thread, e.g. 16m",
         size_value("stack size", kMiB, uint64_t(1) << 30, o.vm.thread_stack_bytes));

  flag(run, "--profile", kProfiling, "sample the program and print a profile on stderr at exit",
       [&] { o.profile = true; });
  option(run, "-o,--profile-out", kProfiling,
         "also write the profile to FILE (- for stdout, in exactly the file's format, .jsonl and .jfr streamed as "
         "to a file, and the program's own output then on stderr), in the format its extension names:\n" + sampler::profile_format_choices(/*dot=*/true),
         path_value(o.profiler.out_path));
  option(run, "--format", kProfiling,
         "the format of --profile-out, whatever its name:\n" + sampler::profile_format_choices(false),
         Value{"FORMAT", "", [&](const std::string& option, const std::string& name) {
                 auto format = sampler::profile_format_named(name);
                 if (!format) bad("format", option, name, "use " + sampler::profile_format_choices(false));
                 o.profiler.out_format = *format;
               }});
  option(run, "--profile-stats", kProfiling,
         "also write the statistics as JSON to FILE (- for stdout, the program's own output then on stderr): per sampler the accounting by reason, suspension "
         "and latency percentiles, and the sampler thread's CPU (schema: sampler/profile/README.md)",
         path_value(o.profiler.stats_path));
  flag(run, "--profile-lines", kProfiling, "folded stacks name frames function:line", [&] { o.profiler.lines = true; });
  flag(run, "--native-frames", kProfiling,
       "mixed stacks: each sample also holds the C/C++ frames (kind cpp) above and below its Mini frames, walked "
       "with LLVM libunwind (cooperative, safepoint, oracle, async and native samples; classical stays Mini-only)",
       [&] { o.profiler.native_frames = true; });
  option(run, "--profile-dump-every", kProfiling,
         "write the profile so far every T while the program runs, as SIGUSR2 does; SIGINT, SIGTERM and SIGPIPE "
         "write it and end",
         Value{"T", "from 1ms to 24h, e.g. 10s, 5m; by default only on SIGUSR2",
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto ns = parse_duration(text, 1'000'000, 86'400'000'000'000ull, why);
                 if (!ns) bad("period", option, text, why);
                 o.profiler.dump_every_ns = *ns;
               }});
  option(run, "-i,--interval", kProfiling, "time between samples: 250us, 1ms, 2s; a bare number is nanoseconds, as "
         "async-profiler's (100000 is 100us)",
         duration_value("interval", kMinPeriodNs, kMaxPeriodNs, o.profiler.interval_ns, o.profiler.interval_ns,
                        /*optional=*/false, /*bare_ns=*/true));
  option(run, "-d,--duration", kProfiling,
         "stop sampling after T (async-profiler's -d); the program runs on to its end, and the profile is "
         "written then",
         Value{"T", "from 1ms to 24h; by default sampling lasts the whole run",
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto ns = parse_duration(text, 1'000'000, 86'400'000'000'000ull, why);
                 if (!ns) bad("duration", option, text, why);
                 o.profiler.duration_ns = *ns;
               }});
  run.add_option_function<std::vector<std::string>>(
         "-I,--include",
         [&](const std::vector<std::string>& v) { append(o.profiler.report.include, v); },
         wrap("keep only the stacks with a frame whose function matches PATTERN, whole, a * at its start or end "
              "standing for any text (Vector.*, *sort); repeatable: any one of them"))
      ->type_name("PATTERN")->allow_extra_args(false)->group(kStacks);
  run.add_option_function<std::vector<std::string>>(
         "-X,--exclude",
         [&](const std::vector<std::string>& v) { append(o.profiler.report.exclude, v); },
         wrap("leave out the stacks with a frame whose function matches PATTERN (as for -I); repeatable"))
      ->type_name("PATTERN")->allow_extra_args(false)->group(kStacks);
  flag(run, "-t,--threads", kStacks, "each thread's stacks apart, under a root frame naming it ([main], [thread_3]); in "
       "the flame graph too", [&] { o.profiler.report.threads = true; });
  flag(run, "--total", kStacks, "folded stacks count time, not samples: each sample weighs the mean interval, in "
       "nanoseconds",
       [&] { o.profiler.report.total = true; });
  flag(run, "-a,--ann", kStacks, "folded stacks end each frame's name with its type: _[j] compiled, _[i] inlined, _[0] interpreted "
       "(flamegraph.pl --color=java colours them)", [&] { o.profiler.report.annotate = true; });
  option(run, "--title", kFlameGraph, "the page's title, instead of minivm profile: PROGRAM",
         Value{"TITLE", "", [&](const std::string&, const std::string& text) { o.profiler.report.title = text; }});
  option(run, "--minwidth", kFlameGraph, "leave out frames narrower than this percentage of the samples (and their callees)",
         Value{"PERCENT", "from 0 to 100; default 0: every frame",
               [&](const std::string& option, const std::string& text) {
                 char* end = nullptr;
                 double v = std::strtod(text.c_str(), &end);
                 if (text.empty() || end != text.c_str() + text.size() || !(v >= 0 && v <= 100))
                   bad("width", option, text, "it is not a percentage from 0 to 100");
                 o.profiler.report.min_width = v;
               }});
  flag(run, "--reverse", kFlameGraph, "open the flame graph in its reverse view: the frames samples were taken in first, "
       "their callers below", [&] { o.profiler.report.reverse = true; });
  option(run, "--profile-max-size", kJsonl,
         "the .jsonl stops growing at SIZE (as JFR's maxsize caps a recording), at a whole line; the events after it "
         "are counted on stderr, not written",
         Value{"SIZE", "from 4k to 1t, e.g. 100m; by default no cap",
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto v = parse_size(text, 4096, uint64_t(1) << 40, why);
                 if (!v) bad("size", option, text, why);
                 o.profiler.jsonl_max_bytes = *v;
               }});
  option(run, "--interval-jitter", kProfiling,
         "draw each interval uniformly from --interval * (1 +- F), so that a program whose own rhythm is near the "
         "interval is not always sampled at the same phase of it; the mean interval stays --interval",
         Value{"F", "a fraction below 1, e.g. 0.5 or 50%; default 0: every interval is T",
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto f = parse_fraction(text, 1, why);
                 if (!f) bad("jitter", option, text, why);
                 o.profiler.interval_jitter = *f;
               }});
  option(run, "--sampler", kProfiling, sampler_help(), samplers_value(o.profiler.samplers));
  option(run, "-j,--stack-depth", kProfiling,
         "the most frames a sample keeps: a deeper stack is cut to its top N frames and marked [truncated] "
         "(classical and async stop at 64 frames already, as JFR's default)",
         Value{"N", fmt::format("from 1 to {}; default {}", sampler::kMaxStackDepth, sampler::kDefaultStackDepth),
               [&](const std::string& option, const std::string& text) {
                 std::string why;
                 auto v = parse_whole(text, 1, sampler::kMaxStackDepth, why);
                 if (!v) bad("depth", option, text, why);
                 o.profiler.stack_depth = uint32_t(*v);
               }});
  flag(run, "--stub-metadata", kProfiling,
       "give the intrinsic stubs (arraycopy, crc32) a frame description, so a sample inside one is its compiled "
       "caller with a stub frame on top",
       [&] { o.profiler.stub_metadata = true; });
  option(run, "--suspend", kProfiling,
         "signal: the interrupted thread's signal handler builds the request itself; handshake (JEP 518): the "
         "handler publishes its context and waits while the sampler thread builds the request",
         choice_value({"signal", "handshake"}, o.profiler.handshake, [&](size_t i) { o.profiler.handshake = i == 1; }));
}

void resolve_run_flags(const CLI::App& run, RunOptions& o) {
  if (o.program.empty()) throw CLI::ValidationError("run needs a program file");
  if (o.stress_unload_ns && o.mode == Mode::xint)
    throw CLI::ValidationError("--stress-unload needs the JIT (not with --xint)");
  for (const CLI::Option* opt : run.get_options())
    if (is_profiling_group(opt->get_group()) && opt->count() > 0) o.profile = true;

  sampler::ProfilerOptions& p = o.profiler;
  p.out_path = expand_output_name(p.out_path);
  p.stats_path = expand_output_name(p.stats_path);
  p.debug_info_at_safepoints = o.jit.safepoint_debug_info && o.mode != Mode::xint;
  bool format_given = run.count("--format") > 0;
  if (format_given && p.out_path.empty())
    throw CLI::ValidationError("--format is the format of --profile-out, which is missing");
  if (!p.out_path.empty() && !format_given) {
    if (p.out_path == "-") {
      p.out_format = sampler::OutputFormat::txt;
    } else {
      std::string error;
      auto format = sampler::output_format(p.out_path, error);
      if (!format) throw CLI::ValidationError(error + ", or name one with --format");
      p.out_format = *format;
    }
  }
  // The text report goes to stderr, unless it is going to stdout already.
  if (p.out_path == "-" && p.out_format == sampler::OutputFormat::txt) p.text_report = false;
  std::vector<NamedFile> outputs;
  for (auto [name, path] : {std::pair{"--profile-out", &p.out_path}, std::pair{"--profile-stats", &p.stats_path}})
    if (!path->empty()) outputs.push_back({name, *path});
  std::string clash = clashing_outputs_reason(o.program, outputs);
  if (!clash.empty()) throw CLI::ValidationError(clash);
  for (const NamedFile& out : outputs) {
    std::string why = unwritable_reason(out.path);
    if (!why.empty()) throw CLI::ValidationError(fmt::format("{} {}: {}", out.option, out.path, why));
  }
}

}  // namespace cli
