// `minivm compare`: one run of a program under every sampler on the same interruptions,
// then its source with a column per sampler (the oracle first), the lines that hold
// polls, and each sampler's failures and biased samples; --html FILE writes the page.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "vm/cli/compare_sweep.h"
#include "vm/cli/run_options.h"

namespace cli {

struct CompareOptions {
  RunOptions run;
  std::string html_path;  // --html
  std::string events_path;  // the run's .jsonl stream, a temporary file: the pairing by interruption, the page
  // --no-classical: every sampler but classical, which holds each thread it visits until
  // walked and so lowers the rate the others get.
  bool no_classical = false;
  // --sweep FLAG=V1,V2,...: one run per value (compare_sweep.h); `args` are compare's
  // arguments as given, which each run is given again.
  std::string sweep_text;
  std::optional<Sweep> sweep;
  std::vector<std::string> args;
  // Where a run of a sweep writes its bias budgets, a line per sampler (hidden option).
  std::string budget_out;
  std::string save_path;                // --save: the comparison's data as JSON, for --diff
  std::vector<std::string> diff_paths;  // --diff BEFORE AFTER: two saved runs set side by side, nothing run
};

// run's option table (run_flags.cpp) without the options that choose samplers or
// outputs, and --html.
void add_compare_flags(CLI::App& compare, CompareOptions& options);
// resolve_run_flags, then every sampler on, no text report, the page's path checked; with
// --diff, only the two files and --html, and no run.
void resolve_compare_flags(const CLI::App& compare, CompareOptions& options);
// Never returns: the process ends with main's status, as `run` does.
[[noreturn]] void compare_command(CompareOptions options);

}  // namespace cli
