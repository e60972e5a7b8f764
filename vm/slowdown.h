// --slowdown=FUNCTION:LINE=N: a known amount of extra work each time control enters a
// chosen source line, so that where the added time lands in each profile can be checked
// against where it was put (the "Divining" method: a profiler is actionable if it moves the
// added time to the slowed line). The front end puts a `slowdown S N` instruction first in
// every run of the line's code in every function of that name (each copy of a generic one
// too); the interpreter and the JIT count the pass (site S's counter on the thread, so that
// the time asked for is passes x N) and spend N ns there in a dependent chain of multiplies
// (runtime/slowdown.h), calibrated at start-up, and change nothing else: the JIT measures
// inlining without these bytes, and the instruction touches no value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vm {

// The most one pass may add: a slowdown is a probe, not a hang (the verifier refuses more).
inline constexpr uint32_t kMaxSlowdownNs = 1'000'000;
// The most sites one run may slow down (each thread keeps a pass counter per site).
inline constexpr size_t kMaxSlowdownSites = 256;

struct SlowdownSite {
  std::string function;  // as profiles name it: "sieve", "Vector.add", "main$fn@12"
  uint32_t line = 0;     // a line of the function's own file
  uint32_t ns = 0;       // added each time control enters the line's code
  // Filled by the front end: how many runs of code on the line got the instruction (in
  // every function of that name); 0 is an error the command line reports.
  uint32_t placed = 0;
};

// "sieve:10=100ns": how the command line takes it and reports name it.
inline std::string format_slowdown(const SlowdownSite& s) {
  return s.function + ":" + std::to_string(s.line) + "=" + std::to_string(s.ns) + "ns";
}

}  // namespace vm
