// The options of `minivm run`: one table (add_run_flags) that CLI11 parses and prints as
// `minivm run --help`, then the rules between options (resolve_run_flags).
#pragma once
#include <CLI/CLI.hpp>

#include "vm/cli/run_options.h"

namespace cli {

// Declares every option of `run` on `run`, each with its help, the value it takes and
// where it stores it in `options`. A bad value throws CLI::ValidationError naming the
// option, the value and what it accepts.
void add_run_flags(CLI::App& run, RunOptions& options);

// The options that change where compiled code polls and what debug info it keeps
// (--counted-loop-polls, --strip-mining, --debug-info), shared by `run` and `disasm --jit`.
void add_code_shape_flags(CLI::App& app, jit::JitOptions& options);

// --slowdown=FUNCTION:LINE=T (vm/slowdown.h), repeatable, shared by `run` and `disasm`.
void add_slowdown_flag(CLI::App& app, std::vector<vm::SlowdownSite>& sites);

// After parsing: an option of the profiling group turns profiling on; the profile's
// format comes from --format or the file's extension; every output path is checked
// before the program starts. Throws CLI::ValidationError on a problem.
void resolve_run_flags(const CLI::App& run, RunOptions& options);

}  // namespace cli
