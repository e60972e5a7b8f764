// `minivm compare` in the terminal: sized to fit about one screen for the examples.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sampler/profile/report.h"
#include "sampler/profile/report_compare.h"
#include "sampler/profile/report_text.h"

namespace sampler {

namespace {

constexpr size_t kContext = 1;        // source lines shown around a line with samples or polls
constexpr size_t kMarked = 3;         // lines marked as the worst disagreements
constexpr double kMarkMinPp = 5.0;    // smaller differences are noise at these sample counts

std::string polls_of(const CompareRow& r) {
  std::string s;
  for (PollKind k : r.polls) s += base::poll_kind_mark(k);
  return s;
}

std::string share(const CompareRow& r, size_t c) {
  if (r.counts[c] == 0) return ".";
  return fmt::format("{:.1f}", r.percent[c]);
}

std::string reasons(const std::map<Reason, uint64_t>& by_reason) {
  std::string s;
  for (const auto& [reason, n] : by_reason)
    if (n) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", reason_name(reason), n);
  return s;
}

// The samplers as far from the reference on `r` as the furthest one (often several).
std::string furthest(const CompareTable& t, const CompareRow& r) {
  std::string names;
  for (size_t c = 1; c < t.columns.size(); c++)
    if (t.samples[c] && std::abs(r.percent[c] - r.percent[0]) >= r.worst_pp - 0.05)
      names += (names.empty() ? "" : ", ") + std::string(sampler_name(t.columns[c]));
  return names;
}

// Where a sampler's samples off the oracle's line really were: its lines with the most
// samples the oracle put elsewhere, each with the oracle's lines for them, and its
// failures by reason with the oracle's lines for those.
constexpr size_t kReallyRows = 3;    // of a sampler's lines, and of its failure reasons
constexpr size_t kReallyTruths = 4;  // the oracle's lines named for each

std::string line_label(const Profile& p, SourceLine l) {
  if (l.line == 0) return "no line";
  if (l.file == 0) return fmt::format("line {}", l.line);
  return fmt::format("{}:{}", p.file_name(l.file), l.line);
}

std::string truths(const Profile& p, const std::vector<std::pair<SourceLine, uint64_t>>& by_line) {
  std::string s;
  for (size_t i = 0; i < by_line.size() && i < kReallyTruths; i++)
    s += fmt::format("{}{} x{}", i ? ", " : "", line_label(p, by_line[i].first), by_line[i].second);
  if (by_line.size() > kReallyTruths) s += fmt::format(", {} more lines", by_line.size() - kReallyTruths);
  return s;
}

void write_really(const CompareReport& rep, std::ostream& out) {
  const Profile& p = *rep.profile;
  out << "\nWhere the samples really were: each sampler's line against the oracle's for the same interruption.\n";
  for (const Confusion& m : rep.confusion) {
    out << fmt::format("{:<12} on the oracle's line for {} of {} interruptions\n", sampler_name(m.sampler), m.agreed(),
                       m.paired);
    // Its lines by how many of their samples the oracle put on another line.
    std::map<SourceLine, std::pair<uint64_t, uint64_t>> mine;  // line -> (samples, off the oracle's line)
    for (const auto& [cell, n] : m.lines) {
      mine[cell.first].first += n;
      if (cell.first != cell.second) mine[cell.first].second += n;
    }
    std::vector<std::pair<SourceLine, std::pair<uint64_t, uint64_t>>> off(mine.begin(), mine.end());
    off.erase(std::remove_if(off.begin(), off.end(), [](const auto& e) { return e.second.second == 0; }), off.end());
    std::stable_sort(off.begin(), off.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
    for (size_t i = 0; i < off.size() && i < kReallyRows; i++)
      out << fmt::format("  {}: {} samples, really {}\n", line_label(p, off[i].first), off[i].second.first,
                         truths(p, m.really(off[i].first)));
    std::map<Reason, std::map<SourceLine, uint64_t>> failed;
    for (const auto& [cell, n] : m.failed) failed[cell.first][cell.second] += n;
    std::vector<std::pair<Reason, std::vector<std::pair<SourceLine, uint64_t>>>> reasons;
    for (const auto& [reason, by_line] : failed) {
      std::vector<std::pair<SourceLine, uint64_t>> v(by_line.begin(), by_line.end());
      std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      reasons.push_back({reason, std::move(v)});
    }
    auto sum = [](const auto& v) {
      uint64_t n = 0;
      for (const auto& e : v) n += e.second;
      return n;
    };
    std::stable_sort(reasons.begin(), reasons.end(), [&](const auto& a, const auto& b) { return sum(a.second) > sum(b.second); });
    for (size_t i = 0; i < reasons.size() && i < kReallyRows; i++)
      out << fmt::format("  failed {} {}: really {}\n", reason_name(reasons[i].first), sum(reasons[i].second),
                         truths(p, reasons[i].second));
  }
}

std::string interval(uint64_t ns) {
  if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{} us", ns / 1'000);
  return fmt::format("{} ns", ns);
}

}  // namespace

std::vector<std::string> configuration_lines(const CompareReport& rep) {
  const RunConfig& c = rep.config;
  std::string samplers;
  for (SamplerId s : rep.table.columns) samplers += (samplers.empty() ? "" : ", ") + std::string(sampler_name(s));
  auto on = [](bool b) { return b ? "on" : "off"; };
  std::string code = fmt::format("compiled code: --strip-mining={}{}, --counted-loop-polls {}, --debug-info={}",
                                 c.strip_mining_iters, c.strip_mining_iters ? "" : " (never)",
                                 on(c.counted_loop_polls), c.safepoint_debug_info ? "safepoints" : "all");
  if (!c.compiled) code += " (unused: --xint compiles nothing)";
  std::vector<std::string> lines{fmt::format("samplers: {}; --suspend={}, --stub-metadata {}", samplers,
                                             c.handshake ? "handshake" : "signal", on(c.stub_metadata)),
                                 code};
  for (const std::string& s : rep.profile->slowdowns)
    lines.push_back(fmt::format("--slowdown={}: time added on purpose, each time control enters that line", s));
  return lines;
}

std::string reference_label(const CompareReport& rep, bool brief) {
  if (!rep.table.has_oracle) return sampler_name(rep.table.columns[0]);
  if (!rep.profile->debug_info_at_safepoints)
    return brief ? "oracle (exact)" : "the oracle (exact, from complete metadata)";
  return brief ? "oracle (safepoint debug info)"
               : "the oracle (safepoint debug info: it knows only the lines of polls and calls, so it shares the "
                 "safepoint bias)";
}

std::string classical_apart_hint(const CompareReport& rep) {
  const Profile& p = *rep.profile;
  SamplingRate r = sampling_rate(p);
  if (!classical_throttles(p, r)) return "";
  std::string prog = rep.program.empty() ? p.program : rep.program;
  return fmt::format("classical held every thread it visited until it had walked it, so the sampler thread missed "
                     "{} periods and every sampler got fewer interruptions. For the others at their own rate: "
                     "minivm compare --no-classical [the same options] {}; for classical on its own interruptions: "
                     "minivm run --profile --sampler=classical [the same options] {}",
                     r.periods_missed, prog, prog);
}

void write_compare_text(const CompareReport& rep, std::ostream& out) {
  const CompareTable& t = rep.table;
  const Profile& p = *rep.profile;
  size_t n = t.columns.size();
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; c++) width[c] = std::max<size_t>(6, std::string(sampler_name(t.columns[c])).size());

  uint64_t interruptions = 0;
  for (const auto& [s, st] : p.stats) interruptions = std::max(interruptions, st.interruptions);
  out << fmt::format("{}: {} samplers on the same {} interruptions, every {}{} for {:.2f} s; code {}\n", p.program, n,
                     interruptions, interval(p.interval_ns), jitter_suffix(p), double(p.duration_ns) / 1e9, rep.mode);
  for (const std::string& line : configuration_lines(rep)) out << line << "\n";
  SamplingRate rate = sampling_rate(p);
  if (rate.asked) out << "rate: " << format_rate(rate) << "\n";
  for (const std::string& cause : rate_shortfall(p, rate)) out << "  short by: " << cause << "\n";
  if (std::string hint = classical_apart_hint(rep); !hint.empty()) out << hint << "\n";
  out << fmt::format("% of each sampler's samples whose top frame is on the line; {} is the reference.\n",
                     reference_label(rep, false));
  if (std::all_of(t.samples.begin(), t.samples.end(), [](uint64_t k) { return k == 0; }))
    out << "No samples: the run ended before the first interruption; make it run longer or give a smaller "
           "--interval.\n";
  std::string legend;
  std::set<PollKind> kinds;
  for (const CompareRow& r : t.rows) kinds.insert(r.polls.begin(), r.polls.end());
  for (PollKind k : kinds)
    legend += fmt::format("{}{} = {}", legend.empty() ? "" : "\n      ", base::poll_kind_mark(k),
                          base::poll_kind_meaning(k));
  if (!legend.empty()) out << "poll: " << legend << "\n";

  std::vector<size_t> worst = most_disagreeing(t, kMarked, kMarkMinPp);
  std::string header = fmt::format("\n{:>5} {:<4}", "line", "poll");
  std::string counts = fmt::format("{:>5} {:<4}", "", "");
  for (size_t c = 0; c < n; c++) {
    header += fmt::format(" {:>{}}", sampler_name(t.columns[c]), width[c]);
    counts += fmt::format(" {:>{}}", fmt::format("n={}", t.samples[c]), width[c]);
  }
  out << header << "   source\n" << counts << "\n";

  // Which source lines to show, file by file (the program first): every row's line and
  // its context; line 0 is printed last.
  std::set<std::pair<uint16_t, uint32_t>> shown;
  for (const CompareRow& r : t.rows) {
    if (r.line == 0) continue;
    for (size_t d = 0; d <= 2 * kContext; d++) {
      int64_t l = int64_t(r.line) - int64_t(kContext) + int64_t(d);
      if (l >= 1 && size_t(l) <= rep.source_of(r.file).size()) shown.insert({r.file, uint32_t(l)});
    }
  }
  bool several_files = std::any_of(shown.begin(), shown.end(), [](auto& fl) { return fl.first != 0; });
  auto row_at = [&](uint16_t file, uint32_t line) -> const CompareRow* {
    for (const CompareRow& r : t.rows)
      if (r.line == line && (line == 0 || r.file == file)) return &r;
    return nullptr;
  };
  auto print_row = [&](const CompareRow* r, uint32_t line, const std::string& text) {
    std::string s = line ? fmt::format("{:>5} {:<4}", line, r ? polls_of(*r) : "") : fmt::format("{:>5} {:<4}", "-", "");
    for (size_t c = 0; c < n; c++) s += fmt::format(" {:>{}}", r && r->sampled() ? share(*r, c) : "", width[c]);
    s += "   " + text;
    if (r) {
      auto it = std::find_if(worst.begin(), worst.end(), [&](size_t i) { return &t.rows[i] == r; });
      if (it != worst.end()) s += fmt::format("   <== {} off by {:.1f} pt", furthest(t, *r), r->worst_pp);
    }
    out << s << "\n";
  };
  uint32_t last = 0;
  int32_t last_file = -1;
  for (auto [file, line] : shown) {
    if (int32_t(file) != last_file) {
      // The lines of a program of several files are listed under each file's name.
      if (several_files) out << fmt::format("{:>5} {:<4}   {}\n", "", "", "== " + p.file_name(file) + " ==");
      last_file = file;
      last = 0;
    }
    if (last && line > last + 1) out << fmt::format("{:>5}\n", "...");
    last = line;
    std::string text = rep.source_of(file)[line - 1];
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
    print_row(row_at(file, line), line, text);
  }
  if (const CompareRow* none = row_at(0, 0)) {
    std::string fns;
    for (const std::string& f : none->functions) fns += (fns.empty() ? "" : ", ") + f;
    print_row(none, 0, "(no source line: " + fns + ")");
  }

  if (!rep.confusion.empty()) write_really(rep, out);

  out << fmt::format("\n{:<12} {:>8} {:>8} {:>8} {:>8}   reasons\n", "sampler", "samples", "failed", "biased",
                     "dropped");
  for (SamplerId s : t.columns) {
    const SamplerStats& st = stats_of(p, s);
    std::string why;
    if (!st.failed.empty() && total(st.failed)) why += "failed: " + reasons(st.failed);
    if (!st.biased.empty() && total(st.biased)) why += (why.empty() ? "" : "; ") + std::string("biased: ") + reasons(st.biased);
    if (!st.dropped.empty() && total(st.dropped))
      why += (why.empty() ? "" : "; ") + std::string("dropped: ") + reasons(st.dropped);
    out << fmt::format("{:<12} {:>8} {:>8} {:>8} {:>8}   {}\n", sampler_name(s), st.samples, total(st.failed),
                       total(st.biased), total(st.dropped), why.empty() ? "-" : why);
  }
  out << "Reasons: minivm help reasons. A share of n samples is uncertain by up to about +-100/sqrt(n) points "
         "(95%).\n";
  if (std::string budget = bias_budget_text(rep.budgets); !budget.empty()) out << "\n" << budget;
  if (p.debug_info_at_safepoints) out << kDebugInfoAtSafepointsNote << "\n";
}

}  // namespace sampler
