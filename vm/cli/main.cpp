// The `minivm` command line: the one place that wires the front end, the runtime, the
// interpreter, the JIT and the sampler together.
#include <algorithm>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "interp/template_interpreter.h"
#include "jit/baseline_compiler.h"
#include "jit/intrinsic_stubs.h"
#include "jit/stress_unload.h"
#include "jit/tiered.h"
#include "jit/perf_map.h"
#include "jit/code_registration.h"
#include "runtime/errors.h"
#include "runtime/gc.h"
#include "sampler/profiler.h"
#include "sampler/reasons.h"
#include "sampler/samplers.h"
#include "runtime/vm.h"
#include "vm/disasm.h"
#include "vm/frontend.h"

#include <fmt/format.h>

namespace {

constexpr const char* kVersion = "minivm 0.1.0";

// The usage text; the list of samplers comes from their table (sampler/samplers.def).
constexpr const char* kUsageHead = R"(usage: minivm run [options] PROGRAM.mini
       minivm disasm [--templates] [--jit] [PROGRAM.mini]
       minivm help reasons | samplers
       minivm --help | --version

Commands:
  run             compile PROGRAM.mini and run it; its exit status is main's int result
  disasm          print PROGRAM.mini's bytecode, javap -c style, with source lines
                  --templates: print the interpreter's generated machine code per bytecode
                  --jit: print each function's baseline-compiled machine code with bci/line
                  markers, poll sites and the debug-info table
  help reasons    what each failed, biased and dropped reason in a profile means
  help samplers   every sampler, in report order, with where it takes the stack

Options for run:
  (default)       tiered: interpret, compile hot functions on a background thread
                  (after --compile-threshold calls or --backedge-threshold loop
                  back-edges), enter compiled loops by on-stack replacement
  --xint          run in the template interpreter only
  --xcomp         compile every function with the baseline JIT before running
  --compile-threshold=N   calls before a function is compiled (default 1000)
  --backedge-threshold=N  loop back-edges in a function before it is compiled and its
                  running loops move to compiled code by OSR (default 10000)
  --jit-sync      tiered, but compile on the thread that asks (deterministic OSR)
  --print-compilation    one line on stderr per compiled function and per OSR
  --debug-no-polls       compiled code without safepoint polls (only to measure their
                  cost: such code cannot be sampled or stopped)
  --counted-loop-polls   compiled counted loops poll at their header too
  --strip-mining=N       otherwise a compiled counted loop polls once every N iterations
                  (default 1048576; 0: never), so a long one still serves sample requests
  --stress-unload[=T]    every T (default 2ms) recompile every compiled function and
                  free the replaced code once no thread can be in it (tiered, --xcomp)
  --debug-info=all|safepoints
                  compiled-code debug info for every pc (default) or only at polls and calls
  --heap=SIZE     largest live heap, e.g. 64m, 4g (default 4g); the collector keeps
                  memory near twice the live arrays, at least 8m
  --gc-log        one line per collection on stderr: cause, pause, time to safepoint and
                  the last thread to stop (function and line), heap before and after
  --gc-verify     check every root of every collection against a walk of the heap
                  (slower; a root that is not an array is an internal error)
  --stack=SIZE    stack of each Mini thread, e.g. 16m (default 16m)
  --perf-map      write /tmp/perf-PID.map and jit-PID.dump ($MINIVM_JITDUMP_DIR, else
                  a new ~/.debug/jit/minivm-jit-DATE.* as perf's JIT agent does)
                  naming the interpreter, stubs and compiled code for `perf`
                  (jit/README.md, "Profiling JIT code with perf")

Profiling:
  --profile       sample the program and print a profile on stderr at exit
  --profile-out=FILE     also write it to FILE: .txt, .collapsed, .json (speedscope),
                  .html (flame graph) or .jsonl (one event per line)
  --profile-stats=FILE   also write the statistics as JSON to FILE: per sampler the
                  accounting by reason, suspension and latency percentiles, and the
                  sampler thread's CPU (schema: sampler/README.md)
  --profile-lines        folded stacks name frames function:line
  --interval=T    time between samples: 250us, 1ms (default), 2s
  --sampler=LIST  comma-separated, each reported separately on the same interruptions,
                  or all (every one of them):
)";

constexpr const char* kUsageTail = R"(  --stub-metadata give the intrinsic stubs (arraycopy, crc32) a frame description, so a
                  sample inside one is its compiled caller with a stub frame on top
  --suspend=signal|handshake
                  signal (default): the interrupted thread's signal handler builds the
                  request itself; handshake (JEP 518): the handler publishes its context
                  and waits while the sampler thread builds the request

Exit status: the program's, 1 on a Mini runtime error, 2 on a compile error or bad usage.
)";

std::string usage() {
  std::string text = kUsageHead;
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    text += fmt::format("                    {:<12} {}\n", sampler::kSamplerNames[i], sampler::kSamplerHelp[i]);
  return text + kUsageTail;
}

// `minivm help reasons`: the reasons table, name and meaning.
void print_reasons() {
  std::cout << "Why an interruption ends as a failed, biased or dropped sample (the names the\n"
               "profile's text report, .jsonl events and the bench print):\n";
  for (size_t i = 0; i < sampler::kReasonCount; i++)
    std::cout << fmt::format("  {:<26} {}\n", sampler::kReasonNames[i], sampler::kReasonMeanings[i]);
}

// `minivm help samplers`: the samplers table, one per line in report order (the bench
// and the tests read the names from here).
void print_samplers() {
  auto where = [](sampler::StackTaken w) {
    switch (w) {
      case sampler::StackTaken::at_poll: return "at the next poll";
      case sampler::StackTaken::in_handler: return "in the signal handler";
      case sampler::StackTaken::by_sampler_thread: return "by the sampler thread";
    }
    return "";
  };
  std::cout << "The samplers, in report order (--sampler=NAME,... or all):\n";
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    std::cout << fmt::format("  {:<12} {:<22} {}\n", sampler::kSamplerNames[i],
                             where(sampler::kSamplerStackTaken[i]), sampler::kSamplerHelp[i]);
}

// "cooperative, classical, async, safepoint, oracle"
std::string sampler_list() {
  std::string list;
  for (size_t i = 0; i < sampler::kSamplerCount; i++) list += (i ? ", " : "") + std::string(sampler::kSamplerNames[i]);
  return list;
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "minivm: %s\nTry 'minivm --help'.\n", message.c_str());
  std::exit(2);
}

std::optional<size_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return std::nullopt;
  std::string suffix(end);
  size_t mult = 1;
  if (suffix == "k" || suffix == "K") mult = size_t(1) << 10;
  else if (suffix == "m" || suffix == "M") mult = size_t(1) << 20;
  else if (suffix == "g" || suffix == "G") mult = size_t(1) << 30;
  else if (!suffix.empty()) return std::nullopt;
  return size_t(v) * mult;
}

bool read_file(const std::string& path, std::string& out) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "minivm: cannot read '%s': is a directory\n", path.c_str());
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "minivm: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    std::fprintf(stderr, "minivm: cannot read '%s'\n", path.c_str());
    return false;
  }
  out = ss.str();
  return true;
}

std::unique_ptr<vm::Module> compile_or_exit(const std::string& path) {
  std::string source;
  if (!read_file(path, source)) std::exit(2);
  vm::CompileError error;
  auto module = vm::compile_source(path, source, error);
  if (!module) {
    std::fprintf(stderr, "%s\n", error.format().c_str());
    std::exit(2);
  }
  return module;
}

enum class Mode { xint, xcomp, tiered };

std::optional<uint32_t> parse_count(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || v < 1 || v >= UINT32_MAX) return std::nullopt;
  return uint32_t(v);
}

int cmd_run(const std::vector<std::string>& args) {
  runtime::VMOptions options;
  sampler::ProfilerOptions profiler;
  bool profile = false;
  jit::JitOptions jit_options;
  jit::TieredOptions tiered;
  Mode mode = Mode::tiered;
  bool perf_map = false;
  std::optional<uint64_t> stress_unload_ns;  // --stress-unload's period
  std::string program;
  for (const std::string& arg : args) {
    if (arg == "--perf-map") {
      perf_map = true;
    } else if (arg == "--xint") {
      mode = Mode::xint;
    } else if (arg == "--xcomp") {
      mode = Mode::xcomp;
    } else if (arg.rfind("--compile-threshold=", 0) == 0 || arg.rfind("--backedge-threshold=", 0) == 0) {
      auto v = parse_count(arg.substr(arg.find('=') + 1));
      if (!v) usage_error("bad count in '" + arg + "' (a whole number from 1)");
      (arg[2] == 'c' ? tiered.invocation_threshold : tiered.backedge_threshold) = *v;
    } else if (arg == "--profile") {
      profile = true;
    } else if (arg.rfind("--profile-out=", 0) == 0) {
      profile = true;
      profiler.out_path = arg.substr(14);
      if (profiler.out_path.empty()) usage_error("--profile-out needs a file name");
    } else if (arg.rfind("--profile-stats=", 0) == 0) {
      profile = true;
      profiler.stats_path = arg.substr(16);
      if (profiler.stats_path.empty()) usage_error("--profile-stats needs a file name");
    } else if (arg == "--stub-metadata") {
      profiler.stub_metadata = true;
    } else if (arg == "--suspend=signal" || arg == "--suspend=handshake") {
      profiler.handshake = arg == "--suspend=handshake";
    } else if (arg == "--profile-lines") {
      profiler.lines = true;
    } else if (arg.rfind("--interval=", 0) == 0) {
      if (!sampler::parse_interval(arg.substr(11), profiler.interval_ns))
        usage_error("bad interval in '" + arg + "' (e.g. 250us, 1ms, 2s; from 10us to 10s)");
    } else if (arg.rfind("--sampler=", 0) == 0) {
      profiler.samplers.clear();
      std::string list = arg.substr(10);
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        std::vector<sampler::SamplerId> ids;
        if (name == "all") {
          for (size_t i = 0; i < sampler::kSamplerCount; i++) ids.push_back(sampler::SamplerId(i));
        } else if (auto id = sampler::sampler_named(name)) {
          ids.push_back(*id);
        } else {
          usage_error("unknown sampler '" + name + "' (" + sampler_list() + " or all)");
        }
        for (sampler::SamplerId id : ids)
          if (std::find(profiler.samplers.begin(), profiler.samplers.end(), id) == profiler.samplers.end())
            profiler.samplers.push_back(id);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg == "--debug-no-polls") {
      jit_options.emit_polls = false;
    } else if (arg == "--print-compilation") {
      tiered.print_compilation = true;
      jit::set_print_compilation(true);
    } else if (arg == "--jit-sync") {
      tiered.synchronous = true;
    } else if (arg == "--counted-loop-polls") {
      jit_options.counted_loop_polls = true;
    } else if (arg.rfind("--strip-mining=", 0) == 0) {
      char* end = nullptr;
      unsigned long n = std::strtoul(arg.c_str() + 15, &end, 10);
      if (arg.size() == 15 || *end != '\0' || (n & (n - 1)) != 0 || n > (1ul << 30))
        usage_error("bad value in '" + arg + "' (a power of two up to 2^30, or 0 for never)");
      jit_options.strip_mining_iters = uint32_t(n);
    } else if (arg == "--stress-unload" || arg.rfind("--stress-unload=", 0) == 0) {
      uint64_t period = jit::StressUnloadOptions{}.period_ns;
      if (arg.size() > 15 && !sampler::parse_interval(arg.substr(16), period))
        usage_error("bad period in '" + arg + "' (e.g. 500us, 2ms; from 10us to 10s)");
      stress_unload_ns = period;
    } else if (arg == "--debug-info=all" || arg == "--debug-info=safepoints") {
      jit_options.safepoint_debug_info = arg == "--debug-info=safepoints";
    } else if (arg.rfind("--heap=", 0) == 0) {
      auto v = parse_size(arg.substr(7));
      if (!v || *v < (size_t(1) << 20)) usage_error("bad heap size in '" + arg + "' (at least 1m)");
      options.heap_bytes = *v;
    } else if (arg == "--gc-log") {
      runtime::set_gc_log(true);
    } else if (arg == "--gc-verify") {
      runtime::set_gc_verify(true);
    } else if (arg.rfind("--stack=", 0) == 0) {
      auto v = parse_size(arg.substr(8));
      if (!v || *v < (size_t(1) << 20)) usage_error("bad stack size in '" + arg + "' (at least 1m)");
      options.thread_stack_bytes = *v;
    } else if (arg.size() > 1 && arg[0] == '-') {
      usage_error("unknown option '" + arg + "' for run");
    } else if (program.empty()) {
      program = arg;
    } else {
      usage_error("run takes one program, got '" + program + "' and '" + arg + "'");
    }
  }
  if (program.empty()) usage_error("run needs a program file");
  if (stress_unload_ns && mode == Mode::xint) usage_error("--stress-unload needs the JIT (not with --xint)");
  auto module = compile_or_exit(program);

  runtime::VM& vm = runtime::VM::get();
  vm.init(options);
  vm.load(std::move(module));
  if (mode == Mode::tiered) {
    tiered.jit = jit_options;
    jit::enable_tiering(tiered);  // before the interpreter is generated: it bakes in the thresholds
  }
  if (perf_map) jit::perf_support_enable();
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  // The intrinsic stubs exist before anything is registered with the tools, so that a
  // perf map names them too (they are otherwise generated at the first compilation).
  if (mode != Mode::xint) jit::intrinsic_stubs();
  {  // unwind info for the interpreter and stubs (perf records too with --perf-map)
    std::vector<jit::CodeRange> templates;
    for (auto& t : interp::TemplateInterpreter::get().templates()) templates.push_back({t.name, t.offset, t.size});
    jit::register_runtime_blobs_with_tools(templates);
  }
  if (mode == Mode::xcomp) {
    for (size_t i = 0; i < vm.method_count(); i++) jit::compile_and_install(vm.method(i), jit_options);
  }
  if (stress_unload_ns) jit::start_stress_unload(jit::StressUnloadOptions{jit_options, *stress_unload_ns});
  if (profile) sampler::start_profiler(profiler);
  int status = vm.run_main();
  runtime::exit_vm(status);
}

void print_jit(std::unique_ptr<vm::Module> module) {
  runtime::VM& vm = runtime::VM::get();
  vm.init(runtime::VMOptions{size_t(1) << 20, size_t(1) << 20});
  vm.load(std::move(module));
  vm.set_engine(interp::TemplateInterpreter::get().engine());
  for (size_t i = 0; i < vm.method_count(); i++) {
    runtime::Method* m = vm.method(i);
    std::string listing;
    runtime::CompiledCode* code = jit::compile_method(m, jit::JitOptions{}, &listing);
    std::cout << fmt::format("compiled fn {} ({} bytes, frame complete at +{:#x}, {} poll sites)\n", m->function->name,
                             code->end - code->begin, code->frame_complete_offset, code->polls.size());
    std::cout << listing;
    std::cout << "  poll sites:";
    for (auto& p : code->polls) std::cout << fmt::format(" +{:#x}", p.pc - code->begin);
    std::cout << "\n  debug info (pc -> scopes, innermost first; * = poll or call site):\n";
    for (auto& d : code->pc_descs) {
      std::cout << fmt::format("    +{:#06x}{}", d.pc_offset, d.safepoint ? " *" : "  ");
      runtime::ScopeChain scopes = code->scope_chain(d);
      for (uint32_t k = 0; k < scopes.count; k++) {
        const runtime::Scope& sc = scopes[k];
        std::cout << fmt::format(" {}@{} (line {})", sc.method->function->name, sc.bci,
                                 sc.method->function->line_at(uint32_t(sc.bci)));
      }
      std::cout << "\n";
    }
    std::cout << "\n";
  }
}

int cmd_disasm(const std::vector<std::string>& args) {
  bool templates = false, jit_listing = false;
  std::string program;
  for (const std::string& arg : args) {
    if (arg == "--templates") templates = true;
    else if (arg == "--jit") jit_listing = true;
    else if (arg.size() > 1 && arg[0] == '-') usage_error("unknown option '" + arg + "' for disasm");
    else if (program.empty()) program = arg;
    else usage_error("disasm takes one program, got '" + program + "' and '" + arg + "'");
  }
  if (!templates && program.empty()) usage_error("disasm needs a program file (or --templates)");
  if (jit_listing && program.empty()) usage_error("disasm --jit needs a program file");
  if (!program.empty()) {
    auto module = compile_or_exit(program);
    if (jit_listing) print_jit(std::move(module));
    else vm::disassemble(*module, std::cout);
  }
  if (templates) {
    runtime::VM::get().init(runtime::VMOptions{size_t(1) << 20, size_t(1) << 20});
    if (!program.empty()) std::cout << "\n";
    interp::TemplateInterpreter::get(/*listing=*/true).print_templates(std::cout);
  }
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(usage().c_str(), stderr);
    return 2;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "help" && rest.size() == 1 && rest[0] == "reasons") {
    print_reasons();
    return 0;
  }
  if (cmd == "help" && rest.size() == 1 && rest[0] == "samplers") {
    print_samplers();
    return 0;
  }
  if (cmd == "help" && !rest.empty()) usage_error("unknown help topic '" + rest[0] + "' (reasons, samplers)");
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::puts(kVersion);
    return 0;
  }
  if (cmd == "run") return cmd_run(rest);
  if (cmd == "disasm") return cmd_disasm(rest);
  usage_error("unknown command '" + cmd + "'");
}
