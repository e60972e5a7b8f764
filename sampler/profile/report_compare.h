// The two renderings of `minivm compare`'s per-line table (compare.h): the terminal
// listing (report_compare_text.cpp) and the self-contained page (report_compare_html.cpp).
#pragma once
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sampler/profile/bias_budget.h"
#include "sampler/profile/compare.h"
#include "sampler/profile/confusion.h"

namespace sampler {

// The options of the run that shape its compiled code and how it was sampled, as given on
// the command line (compare_command.cpp copies them from RunOptions), so that a listing
// or a page says what produced it. The interval, the samplers and whether compiled code
// kept debug info only at safepoints are the Profile's own facts, not repeated here.
struct RunConfig {
  bool compiled = true;               // false under --xint: the code-shape options shaped nothing
  uint32_t strip_mining_iters = 0;    // --strip-mining (0: never)
  bool counted_loop_polls = false;    // --counted-loop-polls
  bool safepoint_debug_info = false;  // --debug-info=safepoints, as asked
  bool stub_metadata = false;         // --stub-metadata
  bool handshake = false;             // --suspend=handshake, else signal
};

struct CompareReport {
  const Profile* profile = nullptr;
  CompareTable table;
  // The lines of each of the program's files (Profile::files, the program first): line 1
  // of file f is sources[f][0].
  std::vector<std::vector<std::string>> sources;
  const std::vector<std::string>& source_of(uint16_t file) const {
    static const std::vector<std::string> none;
    return file < sources.size() ? sources[file] : none;
  }
  std::vector<LinePoll> polls;      // where the code that ran polls
  std::string mode;                 // how the code ran: "interpreted (--xint)", ...
  std::string program;              // the program's path as given, for the commands suggested
  RunConfig config;
  // Where each sampler's samples really came from (confusion.h): a matrix per column
  // after the reference, from the run's .jsonl events; empty without an oracle, whose
  // lines alone are the truth to pair with.
  std::vector<Confusion> confusion;
  // Each sampler's bias budget (bias_budget.h): computed once, for the listing, the page
  // and a sweep's --budget-out; empty without an oracle.
  std::vector<BiasBudget> budgets;
};

// The run's configuration beyond the mode and the interval (which the first line of the
// listing and of the page give): the samplers and how they suspend, then the options
// that shaped the compiled code, then a line per --slowdown. Each starts with what it is
// about.
std::vector<std::string> configuration_lines(const CompareReport& report);

// What the reference column is. The oracle is exact only when the code kept complete
// debug info: under --debug-info=safepoints it too names a pc by the poll or call before
// it, so it shares the safepoint bias, and every output must say so rather than "exact".
// `brief`: the page's short label ("oracle (exact)"); else the listing's sentence.
std::string reference_label(const CompareReport& report, bool brief);

// When classical held the threads so long that the sampler thread missed periods
// (classical_throttles, report.h): what to run instead, the others apart from classical
// and classical on its own, as one sentence naming both commands; "" otherwise.
std::string classical_apart_hint(const CompareReport& report);

// The source lines that have samples or polls (with a line of context, longer gaps
// elided), a column per sampler (the oracle first), the poll kinds of each line, the
// lines furthest from the oracle marked, where each sampler's samples off the oracle's
// line really were (the confusion matrices' cells off the diagonal and failures, the
// largest first), then each sampler's samples, failed and biased counts with their
// reasons.
void write_compare_text(const CompareReport& report, std::ostream& out);

// One HTML page, no network: the source with a heat column per sampler, each sampler's
// icicle graph side by side, a timeline of samples, the safepoint-latency histogram and
// the time to safepoint per poll site; clicking a line shows its samples' stacks under
// each sampler and where they really came from, and a confusion matrix (a sampler's line
// against the oracle's) is drawn under the heat table. `events_jsonl` is the run's .jsonl stream (one event per line), of which
// the first `max_events` are embedded for the timeline and the latencies.
void write_compare_html(const CompareReport& report, std::string_view events_jsonl, std::ostream& out,
                        size_t max_events = 60000);

// The page's data alone, one JSON document without the events (`compare --save FILE`):
// what `compare --diff BEFORE AFTER` reads (compare_diff.h).
void write_compare_data(const CompareReport& report, std::ostream& out);

}  // namespace sampler
