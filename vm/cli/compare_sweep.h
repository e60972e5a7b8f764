// `minivm compare --sweep FLAG=V1,V2,...`: the same comparison once per value of one option,
// each run in a process of its own (the VM runs one program per process), and each
// sampler's bias budget (sampler/profile/bias_budget.h) set against the value: how the
// distance from the oracle moves with --strip-mining, --interval, --suspend... Printed as a
// table on stdout and, with --html FILE, drawn on a page.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cli {

struct Sweep {
  std::string flag;                 // "--strip-mining"
  std::vector<std::string> values;  // at least two
};

// "strip-mining=0,64,1024" or "--strip-mining=0,64,1024", checked against compare's own
// options (one that takes a value, and not one compare decides itself); else `why`.
std::optional<Sweep> parse_sweep(const CLI::App& compare, const std::string& text, std::string& why);

// compare's arguments as given, without --sweep and --html (and their values): what each
// run of the sweep is given, with the swept flag's value after them.
std::vector<std::string> arguments_for_each_run(const std::vector<std::string>& args);

// Runs `minivm compare ARGS --FLAG=V --budget-out=FILE` per value, then prints the table
// and writes the page. Exit status 0, 2 if a value is refused (its run says why), 1 if a
// run ended without its budget.
[[noreturn]] void compare_sweep(const Sweep& sweep, const std::vector<std::string>& args, const std::string& html);

}  // namespace cli
