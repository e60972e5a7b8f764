// What the text report's two layouts share (report_text.cpp): per-sampler aggregation
// into function and line rows, shares with their confidence interval, and the notes
// every report ends with. One sampler gets the detailed report (report_text.cpp);
// several get the compact comparison (report_summary.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sampler/profile/report.h"

namespace sampler {

struct Row {
  std::string function;  // function_name(): native and stub frames say so
  uint32_t line = 0;
  bool with_line = false;  // a line row of a frame that has a source line
  uint64_t self = 0, total = 0;
  std::string name() const;  // "main:12", "main:?" (line unknown), "native_spin_ns (native)"
};

struct Aggregate {
  uint64_t samples = 0, execution = 0, native = 0, biased = 0;
  std::map<std::string, Row> functions;
  std::map<std::pair<std::string, uint32_t>, Row> lines;
  std::set<int> threads;
  std::vector<Row> function_rows() const;
  std::vector<Row> line_rows() const;
};

Aggregate aggregate(const Profile& p, SamplerId sampler);
// Rows by self (dropping those never on top) or by total, largest first, then by name.
std::vector<Row> sorted_rows(std::vector<Row> rows, bool by_self);

std::string pct(uint64_t part, uint64_t whole);  // "66.7%", "n/a" of nothing
std::string format_duration(uint64_t ns);          // "963 ms", "1.25 s"
// What follows the interval when each was drawn at random (--interval-jitter):
// " ± 50%", or nothing for a fixed interval.
std::string jitter_suffix(const Profile& p);

// The Wilson score interval at 95% of a share of `k` in `n` samples, in percent.
struct Interval {
  double low = 0, high = 0;
};
Interval wilson95(uint64_t k, uint64_t n);
// The interval of a share k / n of weighted samples (counts of events that stand for
// several requests, sampler/request_reservoir.h) that rests on only `kept` samples really
// taken: Wilson's with the share's proportion and kept observations. `kept` >= n is
// wilson95(k, n).
Interval share_interval(uint64_t k, uint64_t n, uint64_t kept);
std::string format_interval(Interval i);  // "59.6-73.1%"

// Below this many samples a share is rough (a 50% share is known to about ±10 points).
inline constexpr uint64_t kFewSamples = 100;
// The least --interval the command line takes (vm/cli/run_flags.cpp, kMinPeriodNs): the
// few-samples note suggests no interval below it.
inline constexpr uint64_t kLeastIntervalNs = 10'000;

// The lines every text report ends with: what "biased" means and where the reasons are
// explained; when `fewest` samples is below kFewSamples, that the shares are rough and
// how to get more; with --debug-info=safepoints, that every sampler's lines are only as
// exact as that debug info.
void closing_notes(std::string& out, const Profile& p, uint64_t fewest, const std::string& fewest_sampler);

// Several samplers: the compact comparison (report_summary.cpp).
void write_summary(std::string& out, const Profile& p, const std::vector<SamplerId>& samplers);

}  // namespace sampler
