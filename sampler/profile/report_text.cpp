// The text report (`--profile`, on stderr at exit; `--profile-out FILE.txt`), percentiles,
// and write_profile_file, which picks a writer by the file's extension.
//
// One sampler: the detailed report. The accounting of interruptions (samples, of which
// biased, failed and dropped, by reason, with a line showing that they add up), the time
// the thread was stopped and the safepoint latency as nearest-rank p50/p99/max, the top
// three lines' shares with their 95% intervals, then the top functions and lines by self and by
// total. Shares are of that sampler's samples and always come with their counts.
// Several samplers: the compact comparison of report_summary.cpp. Both end with the
// closing notes (what "biased" means, too few samples, debug info only at safepoints).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "sampler/profile/report_text.h"

namespace sampler {

Percentiles percentiles(const Distribution& values) {
  Percentiles r;
  r.n = values.size();
  if (values.empty()) return r;
  auto rank = [&](uint64_t p) {  // nearest rank: ceil(p/100 * n), at least 1
    uint64_t k = (p * values.size() + 99) / 100;
    return values.at_rank(std::max<uint64_t>(k, 1));
  };
  r.p50 = rank(50);
  r.p99 = rank(99);
  r.max = values.max();
  return r;
}

std::string format_us(uint64_t ns) {
  double us = static_cast<double>(ns) / 1000.0;
  if (us < 10) return fmt::format("{:.2f} µs", us);
  if (us < 100) return fmt::format("{:.1f} µs", us);
  return fmt::format("{:.0f} µs", us);
}

std::string format_duration(uint64_t ns) {
  double v = static_cast<double>(ns);
  const char* unit = "ns";
  if (ns >= 1000000000ull) v /= 1e9, unit = "s";
  else if (ns >= 1000000ull) v /= 1e6, unit = "ms";
  else if (ns >= 1000ull) v /= 1e3, unit = "µs";
  if (v >= 100) return fmt::format("{:.0f} {}", v, unit);
  return fmt::format("{:.3g} {}", v, unit);
}

std::string jitter_suffix(const Profile& p) {
  return p.interval_jitter > 0 ? fmt::format(" ± {:.3g}%", 100 * p.interval_jitter) : "";
}

std::string pct(uint64_t part, uint64_t whole) {
  if (whole == 0) return "n/a";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

namespace {
Interval wilson95_of(double p, double nn) {
  const double z = 1.959963984540054;
  double denom = 1 + z * z / nn;
  double centre = (p + z * z / (2 * nn)) / denom;
  double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {100 * std::max(0.0, centre - half), 100 * std::min(1.0, centre + half)};
}
}  // namespace

Interval wilson95(uint64_t k, uint64_t n) {
  if (n == 0) return {0, 100};
  return wilson95_of(static_cast<double>(k) / static_cast<double>(n), static_cast<double>(n));
}

Interval share_interval(uint64_t k, uint64_t n, uint64_t kept) {
  if (kept >= n || kept == 0) return wilson95(k, n);
  return wilson95_of(static_cast<double>(k) / static_cast<double>(n), static_cast<double>(kept));
}

std::string format_interval(Interval i) { return fmt::format("{:.1f}-{:.1f}%", i.low, i.high); }

std::string Row::name() const {
  if (!with_line) return function;
  return function + ":" + (line ? std::to_string(line) : std::string("?"));
}

std::vector<Row> Aggregate::function_rows() const {
  std::vector<Row> rows;
  for (const auto& [k, r] : functions) rows.push_back(r);
  return rows;
}

std::vector<Row> Aggregate::line_rows() const {
  std::vector<Row> rows;
  for (const auto& [k, r] : lines) rows.push_back(r);
  return rows;
}

Aggregate aggregate(const Profile& p, SamplerId sampler) {
  Aggregate a;
  for (const Event& e : p.events) {
    if (!is_stack_sample(e) || e.sampler != sampler) continue;
    a.samples += e.count;
    (e.type == EventType::NativeMethodSample ? a.native : a.execution) += e.count;
    if (e.biased) a.biased += e.count;
    a.threads.insert(e.thread);
  }
  std::vector<std::string> seen_f;
  std::vector<std::pair<std::string, uint32_t>> seen_l;
  for (const auto& [id, n] : count_stacks(p, sampler)) {  // each distinct stack once
    const StackTrace& st = stack_of_id(p, id);
    if (st.empty()) {
      Row& r = a.functions[kNoFramesLabel];
      r.function = kNoFramesLabel;
      r.self += n, r.total += n;
      Row& l = a.lines[{kNoFramesLabel, 0}];
      l.function = kNoFramesLabel;
      l.self += n, l.total += n;
      continue;
    }
    seen_f.clear();
    seen_l.clear();
    for (size_t i = 0; i < st.size(); ++i) {
      std::string fn = function_name(st[i]);
      bool with_line = has_source_line(st[i]);
      std::pair<std::string, uint32_t> lk{fn, with_line ? st[i].line : 0};
      Row& r = a.functions[fn];
      Row& l = a.lines[lk];
      r.function = fn;
      l.function = fn, l.line = lk.second, l.with_line = with_line;
      if (i == 0) r.self += n, l.self += n;
      // Total: once per sample, however often the function recurses in this stack.
      if (std::find(seen_f.begin(), seen_f.end(), fn) == seen_f.end()) {
        seen_f.push_back(fn);
        r.total += n;
      }
      if (std::find(seen_l.begin(), seen_l.end(), lk) == seen_l.end()) {
        seen_l.push_back(lk);
        l.total += n;
      }
    }
  }
  return a;
}

namespace {

bool row_less_name(const Row& a, const Row& b) {
  if (a.function != b.function) return a.function < b.function;
  return a.line < b.line;
}

}  // namespace

std::vector<Row> sorted_rows(std::vector<Row> rows, bool by_self) {
  if (by_self) {
    std::erase_if(rows, [](const Row& r) { return r.self == 0; });
  }
  std::sort(rows.begin(), rows.end(), [by_self](const Row& a, const Row& b) {
    uint64_t ka = by_self ? a.self : a.total, kb = by_self ? b.self : b.total;
    uint64_t sa = by_self ? a.total : a.self, sb = by_self ? b.total : b.self;
    if (ka != kb) return ka > kb;
    if (sa != sb) return sa > sb;
    return row_less_name(a, b);
  });
  return rows;
}

namespace {

void table(std::string& out, const std::vector<Row>& all, bool by_self, const char* what,
           uint64_t samples, size_t top) {
  std::vector<Row> rows = sorted_rows(all, by_self);
  size_t w = std::max<size_t>(5, std::to_string(samples).size());
  bool lines = std::string_view(what) == "lines";
  out += fmt::format("\n  {} by {} (samples with it {} the stack), {}:\n",
                     lines ? "Lines" : "Functions", by_self ? "self" : "total",
                     by_self ? "on top of" : "anywhere in",
                     rows.size() <= top ? fmt::format("all {}", rows.size())
                                        : fmt::format("top {} of {}", top, rows.size()));
  const char* a = by_self ? "self" : "total";
  const char* b = by_self ? "total" : "self";
  out += fmt::format("    {:>{}} {:>6}   {:>{}} {:>6}   {}\n", a, w, std::string(a) + "%", b, w,
                     std::string(b) + "%", lines ? "function:line" : "function");
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const Row& r = rows[i];
    uint64_t first = by_self ? r.self : r.total, second = by_self ? r.total : r.self;
    out += fmt::format("    {:>{}} {:>6}   {:>{}} {:>6}   {}\n", first, w, pct(first, samples),
                       second, w, pct(second, samples), r.name());
  }
  if (rows.size() > top) {
    uint64_t rest = 0;
    for (size_t i = top; i < rows.size(); ++i) rest += rows[i].self;
    if (by_self)
      out += fmt::format("    ... {} more {} with {} self samples ({})\n", rows.size() - top,
                         what, rest, pct(rest, samples));
    else
      out += fmt::format("    ... {} more {}\n", rows.size() - top, what);
  }
}

void accounting(std::string& out, const SamplerStats& st, const Aggregate& a) {
  struct Line {
    std::string label;
    uint64_t count;
    std::string note;
  };
  std::vector<Line> lines;
  uint64_t failed = total(st.failed), biased = total(st.biased), dropped = total(st.dropped);
  lines.push_back({"samples", st.samples,
                   fmt::format("({} execution, {} native)", a.execution, a.native)});
  lines.push_back({"  of which biased", biased, "(top frame not where the signal landed: see the reasons)"});
  for (const auto& [reason, n] : st.biased) lines.push_back({std::string("    ") + reason_name(reason), n, ""});
  if (st.truncated > 0)
    lines.push_back({"  of which truncated", st.truncated, "(stack cut at the walk's depth limit)"});
  lines.push_back({"failed", failed, ""});
  for (const auto& [reason, n] : st.failed) lines.push_back({std::string("  ") + reason_name(reason), n, ""});
  lines.push_back({"dropped", dropped, ""});
  for (const auto& [reason, n] : st.dropped) lines.push_back({std::string("  ") + reason_name(reason), n, ""});
  if (st.in_flight > 0)
    lines.push_back({"in flight", st.in_flight, "(sent, not yet ended when this profile was dumped)"});
  for (Line& l : lines)
    if (st.represented > 0 && l.label == std::string("  ") + reason_name(Reason::ring_full))
      l.note = "(left out of stretches too long to keep whole; the samples kept stand for them)";

  size_t lw = std::string("interruptions").size();
  for (const auto& l : lines) lw = std::max(lw, l.label.size());
  size_t cw = std::to_string(st.interruptions).size();
  for (const auto& l : lines) cw = std::max(cw, std::to_string(l.count).size());

  out += "\n  Interruptions (each ends as a sample, a failure or a drop; % of interruptions):\n";
  out += fmt::format("    {:<{}}  {:>{}}\n", "interruptions", lw, st.interruptions, cw);
  for (const auto& l : lines) {
    std::string row = fmt::format("    {:<{}}  {:>{}}  {:>6}", l.label, lw, l.count, cw,
                                  pct(l.count, st.interruptions));
    if (!l.note.empty()) row += "  " + l.note;
    out += row + "\n";
  }
  uint64_t accounted = ended(st) + st.in_flight;
  std::string eq = fmt::format("{} samples + {} failed + {} dropped{} = {}", st.samples, failed, dropped,
                               st.in_flight ? fmt::format(" + {} in flight", st.in_flight) : "", accounted);
  if (accounted == st.interruptions)
    out += fmt::format("    {} = interruptions: all accounted for\n", eq);
  else if (accounted < st.interruptions)
    out += fmt::format("    {}, but {} interruptions: {} NOT accounted for\n", eq,
                       st.interruptions, st.interruptions - accounted);
  else
    out += fmt::format("    {}, more than the {} interruptions counted (by {})\n", eq,
                       st.interruptions, accounted - st.interruptions);
  if (biased > st.samples)
    out += fmt::format("    note: {} biased exceed the {} samples they are part of\n", biased,
                       st.samples);
  if (st.represented > 0)
    out += fmt::format("    weighted: the {} samples stand for {} requests (each kept from a stretch without a poll "
                       "counts for its share of the stretch), and the tables count them so\n",
                       st.samples, st.samples + st.represented);
  if (a.samples != st.samples + st.represented)
    out += fmt::format("    note: {} sample events recorded, but the counters say {} samples; "
                       "the tables below use the {} events\n",
                       a.samples, st.samples + st.represented, a.samples);
}

void timing(std::string& out, const SamplerStats& st, SamplerId sampler) {
  auto line = [&](const char* label, const Distribution& v) {
    Percentiles q = percentiles(v);
    if (q.n == 0) return fmt::format("    {:<52}  none recorded\n", label);
    return fmt::format("    {:<52}  p50 {}  p99 {}  max {}  (n={})\n", label, format_us(q.p50),
                       format_us(q.p99), format_us(q.max), q.n);
  };
  out += "\n  Timing (nearest-rank percentiles):\n";
  out += line("thread stopped (in the handler or held), per sample", st.suspension_ns);
  if (stack_taken(sampler) == StackTaken::at_poll) {
    out += line("safepoint latency (signal -> its next poll)", st.latency_ns);
    out += line("  of which the thread was on a CPU", st.latency_cpu_ns);
  } else
    out += fmt::format("    {:<52}  not applicable: {} takes the stack without waiting for a poll\n",
                       "safepoint latency", sampler_name(sampler));
}

constexpr size_t kTopWithInterval = 3;  // top lines whose share the detailed report gives an interval

void section(std::string& out, const Profile& p, SamplerId sampler,
             const ReportOptions& opt) {
  const SamplerStats& st = stats_of(p, sampler);
  Aggregate a = aggregate(p, sampler);

  out += fmt::format("\n== sampler: {} ==\n", sampler_name(sampler));
  if (a.threads.size() > 1) {
    std::string ts;
    for (int t : a.threads) ts += (ts.empty() ? "" : ", ") + std::to_string(t);
    out += fmt::format("  threads sampled: {}\n", ts);
  }
  accounting(out, st, a);
  timing(out, st, sampler);

  if (a.samples == 0) {
    out += "\n  No samples: ";
    if (st.interruptions == 0) {
      out += "the program was never interrupted";
      if (p.interval_ns && p.duration_ns && p.duration_ns < p.interval_ns)
        out += fmt::format(" (it ran for {}, less than one sampling interval of {})",
                           format_duration(p.duration_ns), format_duration(p.interval_ns));
      out += ".\n";
    } else {
      out += fmt::format("none of the {} interruptions produced a stack (see above).\n",
                         st.interruptions);
    }
    return;
  }

  std::vector<Row> fns = a.function_rows(), lns = a.line_rows();
  if (st.represented > 0)
    out += fmt::format("\n  Shares are of this sampler's {} samples, weighted ({} taken).\n", a.samples, st.samples);
  else
    out += fmt::format("\n  Shares are of this sampler's {} samples.\n", a.samples);
  std::vector<Row> top_lines = sorted_rows(lns, true);
  out += "  Top lines by self, each share with its 95% confidence interval (Wilson):\n";
  size_t nw = 0;
  for (size_t i = 0; i < top_lines.size() && i < kTopWithInterval; ++i) nw = std::max(nw, top_lines[i].name().size());
  for (size_t i = 0; i < top_lines.size() && i < kTopWithInterval; ++i)
    out += fmt::format("    {:<{}}  {:>6}  {:>12}\n", top_lines[i].name(), nw, pct(top_lines[i].self, a.samples),
                       format_interval(share_interval(top_lines[i].self, a.samples, st.samples)));
  table(out, fns, true, "functions", a.samples, opt.top);
  table(out, fns, false, "functions", a.samples, opt.top);
  table(out, lns, true, "lines", a.samples, opt.top);
  table(out, lns, false, "lines", a.samples, opt.top);
}

// The interruption rate against the one asked for and, when it fell short, why; with
// classical beside other samplers behind it, how to give the others their own rate.
void rate_lines(std::string& out, const Profile& p) {
  SamplingRate r = sampling_rate(p);
  if (r.asked == 0) return;
  out += "  rate: " + format_rate(r) + "\n";
  std::vector<std::string> causes = rate_shortfall(p, r);
  for (size_t i = 0; i < causes.size(); i++) out += (i == 0 ? "    short by: " : "              ") + causes[i] + "\n";
  if (classical_throttles(p, r))
    out += "    classical held the threads the others would have interrupted: run it on its own "
           "(--sampler=classical) and the others without it (e.g. --sampler=cooperative,safepoint,oracle)\n";
}

// How to sample more often than `p` did: an --interval of half its own, in a form the
// flag takes. Nothing when the run was already at the flag's least value (or its interval
// is unknown), and a word of why not when it got under half the interruptions it asked
// for: a shorter interval asks for more of what the run could not get.
std::string more_often(const Profile& p) {
  SamplingRate r = sampling_rate(p);
  if (r.asked > 0 && 2 * r.achieved < r.asked)
    return fmt::format("; a shorter --interval would not help, the run got only {:.1f}% of the interruptions "
                       "it asked for (the rate line says why)",
                       100.0 * double(r.achieved) / double(r.asked));
  if (p.interval_ns <= kLeastIntervalNs) return "";
  uint64_t half_us = std::max<uint64_t>(p.interval_ns / 2 / 1000, kLeastIntervalNs / 1000);
  std::string half = half_us % 1000 == 0 ? fmt::format("{}ms", half_us / 1000) : fmt::format("{}us", half_us);
  return fmt::format(" or sample more often (--interval={}, half of this run's)", half);
}

// What stopped every thread besides the samplers: the collections (their pauses, times to
// safepoint and the threads last to stop) and code unloading's totals; nothing when
// neither happened.
void vm_pause_lines(std::string& out, const Profile& p) {
  const Collections& c = p.collections;
  if (c.count > 0) {
    Percentiles pause = percentiles(c.pause_ns), ttsp = percentiles(c.time_to_safepoint_ns);
    std::string last;
    for (const auto& [thread, n] : c.last_to_stop)
      last += fmt::format("{}{} ({})", last.empty() ? "" : ", ", thread == 0 ? "main" : "thread " + std::to_string(thread), n);
    out += fmt::format("  collections: {} ({} young, {} full), paused {} in all; pause p50 {}  p99 {}  max {}; "
                       "time to safepoint p50 {}  p99 {}  max {}; last to stop: {}\n",
                       c.count, c.young, c.full, format_duration(c.pause_total_ns), format_us(pause.p50),
                       format_us(pause.p99), format_us(pause.max), format_us(ttsp.p50), format_us(ttsp.p99),
                       format_us(ttsp.max), last.empty() ? "no thread was waited for" : last);
  }
  const CodeUnloading& u = p.unloading;
  if (u.retired > 0)
    out += fmt::format("  code unloading: {} compiled codes replaced, {} freed in {} rounds; {} kept while a pc lay "
                       "in them, {} rounds with a stack not walkable\n",
                       u.retired, u.freed, u.rounds, u.kept_in_use, u.unwalkable_rounds);
}

}  // namespace

void closing_notes(std::string& out, const Profile& p, uint64_t fewest, const std::string& fewest_sampler) {
  out += fmt::format("\nbiased: {}. Every reason named above is explained by `minivm help reasons`.\n",
                     kBiasedMeaning);
  if (fewest > 0 && fewest < kFewSamples) {
    Interval half = wilson95(fewest / 2, fewest);
    out += fmt::format("Few samples: {} has only {}, so a share of 50% is anywhere in {}. For more, run "
                       "longer (the programs of examples/, not those of its lessons/, take -D ROUNDS=N){}.\n",
                       fewest_sampler, fewest, format_interval(half), more_often(p));
  }
  if (p.debug_info_at_safepoints) out += fmt::format("{}\n", kDebugInfoAtSafepointsNote);
}

void write_text(const Profile& p, std::ostream& os, const ReportOptions& opt) {
  std::string out;
  std::vector<SamplerId> samplers = report_samplers(p);
  out += fmt::format("minivm profile: {}\n", p.program.empty() ? "(unnamed program)" : p.program);
  std::vector<std::string> facts;
  if (p.interval_ns) facts.push_back("interval " + format_duration(p.interval_ns) + jitter_suffix(p));
  if (p.duration_ns) facts.push_back("run time " + format_duration(p.duration_ns));
  for (size_t i = 0; i < p.slowdowns.size(); i++)
    facts.push_back("--slowdown=" + p.slowdowns[i] +
                    (i < p.slowdown_passes.size() ? fmt::format(" ({} passes)", p.slowdown_passes[i]) : ""));
  if (samplers.size() == 1) facts.push_back(std::string("sampler ") + sampler_name(samplers[0]));
  if (samplers.size() > 1) {
    std::string list;
    for (SamplerId s : samplers) list += (list.empty() ? "" : ", ") + std::string(sampler_name(s));
    facts.push_back(fmt::format("samplers {}, all on the same interruptions", list));
  }
  if (!facts.empty()) {
    std::string joined;
    for (const auto& f : facts) joined += (joined.empty() ? "" : ", ") + f;
    out += "  " + joined + "\n";
  }
  if (!p.sampler_cpu_ns.empty()) {
    Percentiles q = percentiles(p.sampler_cpu_ns);
    out += fmt::format("  sampler thread's own CPU time {}; per thread it interrupted p50 {}  p99 {}  max {}  "
                       "(n={})\n",
                       format_duration(p.sampler_thread_cpu_ns), format_us(q.p50), format_us(q.p99),
                       format_us(q.max), q.n);
  }
  rate_lines(out, p);
  if (p.poll_walks.polls > 0) {
    const Profile::PollWalks& w = p.poll_walks;
    Percentiles q = percentiles(w.time_ns);
    out += fmt::format("  at the polls: {:.1f} frames walked and {:.1f} taken from the stack watermark per poll; "
                       "time per poll p50 {}  p99 {}  (n={})\n",
                       double(w.frames_walked) / double(w.polls), double(w.frames_cached) / double(w.polls),
                       format_us(q.p50), format_us(q.p99), w.polls);
  }
  vm_pause_lines(out, p);
  if (samplers.empty()) {
    out += "\nNo samples: no sampler ran, so nothing was recorded.\n";
    os << out;
    return;
  }
  if (samplers.size() > 1) {
    write_summary(out, p, samplers);
  } else {
    section(out, p, samplers[0], opt);
    closing_notes(out, p, aggregate(p, samplers[0]).samples, sampler_name(samplers[0]));
  }
  os << out;
}

bool write_profile_file(const Profile& p, const std::string& path, const ReportOptions& opt,
                        std::string& error) {
  std::optional<OutputFormat> kind = output_format(path, error);
  return kind && write_profile_format(p, *kind, path, opt, error);
}

bool write_profile_format(const Profile& p, OutputFormat kind, const std::string& path, const ReportOptions& opt,
                          std::string& error) {
  return write_output_file("--profile-out", path, error, [&](std::ostream& f) {
    switch (kind) {
      case OutputFormat::txt: write_text(p, f, opt); break;
      case OutputFormat::collapsed: write_collapsed(p, f, opt); break;
      case OutputFormat::json: write_speedscope(p, f, opt); break;
      case OutputFormat::html: write_html(p, f, opt); break;
      case OutputFormat::jsonl: write_jsonl(p, f); break;
      case OutputFormat::jfr: write_jfr(p, f); break;
      case OutputFormat::pprof: write_pprof(p, f); break;
    }
  });
}

namespace {
int g_standard_output_fd = STDOUT_FILENO;
}  // namespace

void set_standard_output_fd(int fd) { g_standard_output_fd = fd; }
int standard_output_fd() { return g_standard_output_fd; }

bool write_output_file(const char* option, const std::string& path, std::string& error,
                       const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    std::ostringstream text;
    write(text);
    std::string_view rest = text.view();
    if (g_standard_output_fd == STDOUT_FILENO) {  // after what went there through stdio
      std::cout.flush();
      std::fflush(stdout);
    }
    int write_errno = 0;
    while (!rest.empty() && write_errno == 0) {
      ssize_t n = ::write(g_standard_output_fd, rest.data(), rest.size());
      if (n > 0)
        rest.remove_prefix(size_t(n));
      else if (n == 0)
        write_errno = EIO;
      else if (errno != EINTR)
        write_errno = errno;
    }
    if (write_errno != 0) {
      error = fmt::format("{} -: error while writing standard output: {}", option, std::strerror(write_errno));
      return false;
    }
    return true;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = fmt::format("{} {}: cannot write: {}", option, path, std::strerror(errno));
    return false;
  }
  write(f);
  f.flush();
  if (!f) {
    error = fmt::format("{} {}: error while writing: {}", option, path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace sampler
