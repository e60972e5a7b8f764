#include "vm/cli/compare_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "runtime/errors.h"
#include "sampler/profile/compare_diff.h"
#include "runtime/poll_lines.h"
#include "runtime/vm.h"
#include "sampler/profile/bias_budget.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_compare.h"
#include "vm/cli/help_format.h"
#include "vm/cli/outputs.h"
#include "vm/cli/profile_signals.h"
#include "vm/cli/run_command.h"
#include "vm/cli/run_flags.h"
#include "vm/cli/source_file.h"

namespace cli {

namespace {

// run's options that compare decides itself: every sampler, and its own report.
constexpr const char* kNotForCompare[] = {"--profile",       "--profile-out",        "--format",  "--profile-stats",
                                          "--profile-lines", "--profile-dump-every", "--sampler", "--native-frames"};

std::string mode_text(Mode m) {
  switch (m) {
    case Mode::xint: return "interpreted (--xint)";
    case Mode::xcomp: return "compiled (--xcomp)";
    case Mode::tiered: break;
  }
  return "tiered (polls of the compiled code for the functions the JIT compiled)";
}

// Where the code that ran polls: each function's compiled code if it has some (and the
// run used the JIT), else the interpreter's polls; none for a function whose own code
// never ran. Under --xcomp every function was compiled before main ran, so a callee that
// compiled code inlined at each of its calls never ran its own; tiered, callers ran
// interpreted before they were compiled, so every call of their bytecode counts.
std::vector<sampler::LinePoll> polls_that_ran(Mode mode) {
  std::vector<sampler::LinePoll> out;
  runtime::VM& vm = runtime::VM::get();
  std::vector<const runtime::Method*> methods;
  for (size_t i = 0; i < vm.method_count(); i++) methods.push_back(vm.method(i));
  std::vector<bool> ran = runtime::methods_that_run(methods, vm.module().main_index,
                                                    [&](const runtime::Method& m) -> const runtime::CompiledCode* {
                                                      if (mode != Mode::xcomp) return nullptr;
                                                      return m.compiled.load(std::memory_order_acquire);
                                                    });
  for (size_t i = 0; i < methods.size(); i++) {
    if (!ran[i]) continue;
    const runtime::Method* m = methods[i];
    const runtime::CompiledCode* code = mode == Mode::xint ? nullptr : m->compiled.load(std::memory_order_acquire);
    for (const runtime::PollLine& p : runtime::poll_lines(*m, code))
      out.push_back({p.line, p.kind, p.function->name, p.function->file});
  }
  return out;
}

sampler::RunConfig run_config(const RunOptions& o) {
  sampler::RunConfig c;
  c.compiled = o.mode != Mode::xint;
  c.strip_mining_iters = o.jit.strip_mining_iters;
  c.counted_loop_polls = o.jit.counted_loop_polls;
  c.safepoint_debug_info = o.jit.safepoint_debug_info;
  c.stub_metadata = o.profiler.stub_metadata;
  c.handshake = o.profiler.handshake;
  return c;
}

std::vector<std::string> source_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The temporary .jsonl file goes whichever way the process ends (a compile error too).
std::string g_events_path;
void remove_events_file() {
  if (!g_events_path.empty()) std::remove(g_events_path.c_str());
}

std::string read_events(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// `--diff BEFORE AFTER`: reads two files --save wrote and prints (and with --html draws)
// what changed, running nothing.
[[noreturn]] void diff_command(const CompareOptions& o) {
  release_profile_signals();  // held from the start (profile_signals.h); nothing is sampled here
  sampler::SavedCompare runs[2];
  for (int i = 0; i < 2; i++) {
    std::string text, why;
    std::ifstream in(o.diff_paths[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "minivm: --diff %s: cannot be read\n", o.diff_paths[i].c_str());
      std::exit(2);
    }
    std::ostringstream s;
    s << in.rdbuf();
    runs[i].path = o.diff_paths[i];
    if (!sampler::read_saved_compare(s.str(), runs[i], why)) {
      std::fprintf(stderr, "minivm: --diff %s: %s\n", o.diff_paths[i].c_str(), why.c_str());
      std::exit(2);
    }
  }
  sampler::CompareDiff diff = sampler::diff_compares(std::move(runs[0]), std::move(runs[1]));
  sampler::write_diff_text(diff, std::cout);
  bool ok = flush_stdout();
  if (!o.html_path.empty()) {
    std::string why;
    bool written = sampler::write_output_file("--html", o.html_path, why,
                                              [&](std::ostream& out) { sampler::write_diff_html(diff, out); });
    if (!written) std::fprintf(stderr, "minivm: %s\n", why.c_str());
    ok &= written;
  }
  std::exit(ok ? 0 : 1);
}

void add_compare_flags(CLI::App& compare, CompareOptions& o) {
  add_run_flags(compare, o.run);
  compare.get_option("program")->required(false);  // not with --diff; resolve_compare_flags asks for it otherwise
  // Kept in the table (resolve_run_flags reads them) but hidden from the help, and refused.
  for (const char* name : kNotForCompare) compare.get_option(name)->group("");
  compare.add_option("--html", o.html_path,
                     wrap("also write one self-contained page to FILE: the source with a heat column per sampler "
                          "and under it a confusion matrix per sampler (its line against the oracle's for the same "
                          "interruptions), their flame graphs side by side, a timeline of samples, safepoint latency "
                          "and the time to safepoint per poll site; click a line for its stacks and where they "
                          "really came from, or the timeline for one interruption under every sampler"))
      ->type_name("FILE");
  compare.add_option("--sweep", o.sweep_text,
                     wrap("run once per value of one option and print each sampler's bias budget (its distance from "
                          "the oracle's profile) against the value, e.g. --sweep strip-mining=0,64,1024 or --sweep "
                          "interval=100us,1ms,10ms; with --html, drawn on the page"))
      ->type_name("FLAG=V1,V2,...");
  compare.add_option("--budget-out", o.budget_out, "where a run of a sweep writes its bias budgets")->group("");
  compare.add_option("--save", o.save_path,
                     wrap("also write the comparison's data (the page's, without the events) to FILE as JSON, for "
                          "--diff"))
      ->type_name("FILE");
  compare.add_option("--diff", o.diff_paths,
                     wrap("run nothing: read two files --save wrote and print, for every line and sampler, its share "
                          "before (the first) and after (the second) and the change, both runs' configurations "
                          "stamped; with --html, the same as a page"))
      ->type_name("BEFORE AFTER")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);  // every value, so that a third one is refused
  compare.add_flag("--no-classical", o.no_classical,
                   wrap("every sampler but classical: classical holds each thread it visits until it has walked it, "
                        "which on a busy machine or with more running threads than cores makes the sampler thread "
                        "miss periods, so every sampler gets fewer interruptions (the listing says when)"));
}

void resolve_compare_flags(const CLI::App& compare, CompareOptions& o) {
  if (!o.diff_paths.empty()) {
    if (o.diff_paths.size() != 2)
      throw CLI::ValidationError("--diff takes two files, BEFORE and AFTER, and runs nothing (given " +
                                 std::to_string(o.diff_paths.size()) + ")");
    if (!o.run.program.empty())
      throw CLI::ValidationError("--diff reads two files compare --save wrote and runs nothing: no program (" +
                                 o.run.program + ")");
    for (const CLI::Option* opt : compare.get_options())
      if (opt->count() > 0 && opt->get_name() != "--diff" && opt->get_name() != "--html")
        throw CLI::ValidationError(opt->get_name() + " is not for --diff: it runs nothing, and takes only --html");
    if (!o.html_path.empty()) {
      std::string why = o.html_path == "-" ? "the page needs a file name" : unwritable_reason(o.html_path);
      for (const std::string& in : o.diff_paths)
        if (same_file(in, o.html_path)) why = "it is one of the files --diff reads";
      if (!why.empty()) throw CLI::ValidationError("--html " + o.html_path + ": " + why);
    }
    return;
  }
  if (o.run.program.empty()) throw CLI::ValidationError("compare needs a program file");
  for (const char* name : kNotForCompare)
    if (compare.count(name) > 0)
      throw CLI::ValidationError(std::string(name) +
                                 " is not for compare: it runs every sampler and prints its own report (see minivm run)");
  resolve_run_flags(compare, o.run);
  if (compare.count("--sweep") > 0) {
    std::string why;
    o.sweep = parse_sweep(compare, o.sweep_text, why);
    if (!o.sweep) throw CLI::ValidationError("--sweep " + o.sweep_text + ": " + why);
    if (compare.count(o.sweep->flag) > 0)
      throw CLI::ValidationError("--sweep " + o.sweep_text + ": " + o.sweep->flag + " is given too; the sweep sets it");
    if (!o.save_path.empty())
      throw CLI::ValidationError("--save is for one run, and --sweep makes one per value: save each with compare --save");
  }
  std::vector<NamedFile> outputs;
  if (!o.html_path.empty()) outputs.push_back({"--html", o.html_path});
  if (!o.save_path.empty()) outputs.push_back({"--save", o.save_path});
  std::string clash = clashing_outputs_reason(o.run.program, outputs);
  if (!clash.empty()) throw CLI::ValidationError(clash);
  for (const NamedFile& f : outputs) {
    std::string why = unwritable_reason(f.path);
    if (f.path == "-") why = f.option == "--html" ? "the page needs a file name" : "the listing is on stdout: it needs a file name";
    if (!why.empty()) throw CLI::ValidationError(f.option + " " + f.path + ": " + why);
  }
  o.run.profile = true;
  o.run.profiler.samplers.clear();
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    if (!o.no_classical || sampler::SamplerId(i) != sampler::SamplerId::classical)
      o.run.profiler.samplers.push_back(sampler::SamplerId(i));
  o.run.profiler.text_report = false;
  // Pairing each sampler's samples with the oracle's on the same interruptions (where the
  // samples really came from), the page's timeline and its per-poll-site latencies need
  // each sample, which only the .jsonl stream keeps: the run writes it to a temporary file.
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir && *dir ? dir : "/tmp") + "/minivm-compare-XXXXXX";
  int fd = mkstemp(name.data());
  if (fd < 0) throw CLI::ValidationError("cannot create a temporary file for the run's events: " + name);
  close(fd);
  o.events_path = name;
  g_events_path = name;
  std::atexit(remove_events_file);              // a compile error exits before the VM runs
  runtime::add_exit_hook(&remove_events_file);  // every end of a run, a runtime error too
  o.run.profiler.out_path = name;
  o.run.profiler.out_format = sampler::OutputFormat::jsonl;
}

void compare_command(CompareOptions o) {
  if (!o.diff_paths.empty()) diff_command(o);
  std::string text, error;
  if (!read_source(o.run.program, text, error)) {
    std::fprintf(stderr, "minivm: %s\n", error.c_str());
    std::exit(2);
  }
  Mode mode = o.run.mode;
  sampler::RunConfig config = run_config(o.run);
  std::string program = o.run.program;
  std::string html = o.html_path, save = o.save_path, events = o.events_path, budget_out = o.budget_out;
  run_command(std::move(o.run), [&](const sampler::Profile& profile) {
    sampler::CompareReport report;
    report.profile = &profile;
    report.polls = polls_that_ran(mode);
    report.table = sampler::compare_lines(profile, report.polls);
    report.sources.push_back(source_lines(text));
    // The files the program imports, read again: the compiler kept no text.
    for (size_t f = 1; f < profile.files.size(); f++) {
      std::string imported, why;
      report.sources.push_back(read_source(profile.files[f], imported, why) ? source_lines(imported)
                                                                           : std::vector<std::string>{});
    }
    report.mode = mode_text(mode);
    report.program = program;
    report.config = config;
    std::string jsonl = read_events(events);
    if (report.table.has_oracle)
      report.confusion = sampler::confusion_matrices(sampler::read_outcomes(jsonl, profile), report.table.columns);
    report.budgets = sampler::bias_budgets(profile);
    sampler::write_compare_text(report, std::cout);
    bool ok = flush_stdout();
    if (!budget_out.empty()) {
      std::string why;
      ok &= sampler::write_output_file("--budget-out", budget_out, why, [&](std::ostream& out) {
        for (const sampler::BiasBudget& b : report.budgets)
          out << fmt::format("{} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f}\n", sampler::sampler_name(b.sampler),
                             b.lines.tvd, b.lines.low, b.lines.high, b.functions.tvd, b.functions.low, b.functions.high);
      });
    }
    if (!html.empty()) {
      std::string why;
      bool written = sampler::write_output_file(
          "--html", html, why, [&](std::ostream& out) { sampler::write_compare_html(report, jsonl, out); });
      if (!written) std::fprintf(stderr, "minivm: %s\n", why.c_str());
      ok &= written;
    }
    if (!save.empty()) {
      std::string why;
      bool written = sampler::write_output_file("--save", save, why,
                                                [&](std::ostream& out) { sampler::write_compare_data(report, out); });
      if (!written) std::fprintf(stderr, "minivm: %s\n", why.c_str());
      ok &= written;
    }
    return ok;
  });
}

}  // namespace cli
