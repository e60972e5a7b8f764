// `minivm compare --html FILE`: one self-contained page (pages/compare.html, its CSS and
// JS inlined at build time; no network) that puts every sampler of one run side by side
// for a student: the source with a heat column per sampler and its poll marks, each
// sampler's icicle graph, a timeline of samples, the safepoint-latency histogram and the
// time to safepoint per poll site. Clicking a line (in the source or in a graph) shows
// that line's samples' stacks under each sampler and, from the confusion matrices under
// the heat table, where they really came from.
//
// Embedded data (id="compare-data"): {"program","mode","interval_ns","interval_jitter","duration_ns",
// "config":[the run's configuration, a line each (configuration_lines)],"reference": the
// reference column's label (reference_label),"oracleHow": what the oracle knows, for the
// page's introduction,"banner": why the oracle is not exact, or "" when it is,"budget":
// [{"sampler","lines":[tvd,low,high],"functions":[...]}, each sampler's bias budget (bias_budget.h)],
// "columns":[sampler names, the reference first],"oracle":bool,"samples":[per column],
// "source":[lines],"imported":[{"path","source":[lines]}, one per file the program imports],
// "fnFile":{function: file} for the functions of imported files,"rows":[{"line","c":[counts],"p":[percent],"w":worst pp,"ws":whose or
// null,"polls":[marks],"f":[functions]}],"pollKinds":[{"mark","name","meaning"}],
// "polls":[{"line","mark","function"}],"stats":[{"name","interruptions","samples",
// "failed":{reason:n},"biased":{...},"dropped":{...}}],"reasons":{name:meaning},
// "names":[functions],"kinds":[frame kinds],"stacks":[[[name,line,kind],...top first]],
// "agg":[[column,stack,count,biased]],"events":[the first .jsonl events],"eventsTotal":N,
// "rate": the interruption rate against the one asked for ("" when nothing was asked),
// "rateShort":[why it fell short, each cause with its numbers],"apart": the commands that
// run classical apart when it throttled the others, or "","confusion":[per column after
// the reference, paired with it by interruption (confusion.h; empty without an oracle):
// {"sampler","paired","agreed","refFailed","cells":[[its line, the reference's line, n]],
// "failed":[[reason, the reference's line, n]]}]}.
// Timestamps and latencies of single samples exist only in the .jsonl stream (a Profile
// aggregates by stack), so the timeline and the per-poll-site times are built from the
// first `max_events` of its events (and every GarbageCollection, the timeline's bands); the
// page says when it kept fewer than all.
//
// Every line the data names (rows, polls, stacks) is a key: its number in the program's
// own file, and k * kFileStride + its number in the k-th file it imports (the .jsonl
// events name lines by number, and the page keys them through "fnFile").
#include <algorithm>
#include <map>
#include <ostream>
#include <unordered_map>

#include <fmt/format.h>

#include "sampler/profile/pages.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_compare.h"

namespace sampler {

namespace {

constexpr uint64_t kFileStride = uint64_t(1) << 24;  // compare.js's FILE_STRIDE: above any file's line count

class DataWriter {
 public:
  explicit DataWriter(const CompareReport& r) : r_(r), p_(*r.profile) {}

  std::string json(std::string_view events_jsonl, size_t max_events) {
    const CompareTable& t = r_.table;
    out_ += "{\"program\":" + json_string(p_.program) + ",\"mode\":" + json_string(r_.mode);
    out_ += fmt::format(",\"interval_ns\":{},\"interval_jitter\":{},\"duration_ns\":{},\"oracle\":{}", p_.interval_ns,
                        p_.interval_jitter, p_.duration_ns,
                        t.has_oracle ? "true" : "false");
    list("config", configuration_lines(r_), [&](const std::string& l) { append_json_string(out_, l); });
    out_ += ",\"reference\":" + json_string(reference_label(r_, true)) + ",\"oracleHow\":" + json_string(oracle_how());
    out_ += ",\"banner\":" + json_string(p_.debug_info_at_safepoints ? kDebugInfoAtSafepointsNote : "");
    list("budget", r_.budgets, [&](const BiasBudget& b) {
      out_ += fmt::format("{{\"sampler\":{},\"lines\":[{:.4f},{:.4f},{:.4f}],\"functions\":[{:.4f},{:.4f},{:.4f}]}}",
                          json_string(sampler_name(b.sampler)), b.lines.tvd, b.lines.low, b.lines.high,
                          b.functions.tvd, b.functions.low, b.functions.high);
    });
    list("columns", t.columns, [&](SamplerId s) { out_ += json_string(sampler_name(s)); });
    list("samples", t.samples, [&](uint64_t n) { out_ += std::to_string(n); });
    list("source", r_.source_of(0), [&](const std::string& l) { append_json_string(out_, l); });
    std::vector<uint16_t> imported;
    for (size_t f = 1; f < p_.files.size(); f++) imported.push_back(uint16_t(f));
    list("imported", imported, [&](uint16_t f) {
      out_ += "{\"path\":" + json_string(p_.files[f]);
      list("source", r_.source_of(f), [&](const std::string& l) { append_json_string(out_, l); });
      out_ += '}';
    });
    out_ += ",\"fnFile\":{";
    bool first_fn = true;
    for (const auto& [fn, f] : p_.function_files) {
      out_ += (first_fn ? "" : ",") + json_string(fn) + ":" + std::to_string(f);
      first_fn = false;
    }
    out_ += '}';
    list("rows", t.rows, [&](const CompareRow& row) { this->row(row); });
    std::vector<size_t> kinds;
    for (size_t k = 0; k < base::kPollKindCount; k++) kinds.push_back(k);
    list("pollKinds", kinds, [&](size_t k) {
      auto kind = PollKind(k);
      out_ += "{\"mark\":" + json_string(base::poll_kind_mark(kind)) + ",\"name\":" +
              json_string(base::poll_kind_name(kind)) + ",\"meaning\":" + json_string(base::poll_kind_meaning(kind)) +
              "}";
    });
    list("polls", r_.polls, [&](const LinePoll& lp) {
      out_ += fmt::format("{{\"line\":{},\"mark\":{},\"function\":{}}}", key(lp.file, lp.line),
                          json_string(base::poll_kind_mark(lp.kind)), json_string(lp.function));
    });
    list("stats", t.columns, [&](SamplerId s) { stats(s); });
    SamplingRate rate = sampling_rate(p_);
    out_ += ",\"rate\":" + json_string(rate.asked ? format_rate(rate) : "");
    list("rateShort", rate_shortfall(p_, rate), [&](const std::string& c) { append_json_string(out_, c); });
    out_ += ",\"apart\":" + json_string(classical_apart_hint(r_));
    confusion();
    reasons();
    stacks();
    events(events_jsonl, max_events);
    out_ += "}";
    return std::move(out_);
  }

 private:
  template <typename List, typename Each>
  void list(const char* key, const List& items, Each each) {
    out_ += fmt::format(",\"{}\":[", key);
    bool first = true;
    for (const auto& item : items) {
      if (!first) out_ += ',';
      first = false;
      each(item);
    }
    out_ += ']';
  }

  static uint64_t key(uint16_t file, uint32_t line) { return line == 0 ? 0 : file * kFileStride + line; }
  static uint64_t key(SourceLine l) { return key(l.file, l.line); }

  // The page's introduction says what the oracle knows; here, not in the page's text,
  // because under --debug-info=safepoints it knows no more than the polls and calls.
  std::string oracle_how() const {
    if (!p_.debug_info_at_safepoints) return "knows exactly where each one landed";
    return "knows only the polls and calls (--debug-info=safepoints), so it names each one by the poll or call "
           "before it, as a safepoint-biased sampler would";
  }

  void row(const CompareRow& r) {
    out_ += fmt::format("{{\"line\":{},\"c\":[", key(r.file, r.line));
    for (size_t c = 0; c < r.counts.size(); c++) out_ += fmt::format("{}{}", c ? "," : "", r.counts[c]);
    out_ += "],\"p\":[";
    for (size_t c = 0; c < r.percent.size(); c++) out_ += fmt::format("{}{:.2f}", c ? "," : "", r.percent[c]);
    out_ += fmt::format("],\"w\":{:.2f},\"ws\":{}", r.worst_pp, r.worst ? json_string(sampler_name(*r.worst)) : "null");
    list("polls", r.polls, [&](PollKind k) { out_ += json_string(base::poll_kind_mark(k)); });
    list("f", r.functions, [&](const std::string& f) { append_json_string(out_, f); });
    out_ += '}';
  }

  void by_reason(const char* key, const std::map<Reason, uint64_t>& m) {
    out_ += fmt::format(",\"{}\":{{", key);
    bool first = true;
    for (const auto& [reason, n] : m) {
      if (n == 0) continue;
      out_ += fmt::format("{}\"{}\":{}", first ? "" : ",", reason_name(reason), n);
      first = false;
      used_reasons_[reason] = true;
    }
    out_ += '}';
  }

  void stats(SamplerId s) {
    const SamplerStats& st = stats_of(p_, s);
    out_ += fmt::format("{{\"name\":\"{}\",\"interruptions\":{},\"samples\":{}", sampler_name(s), st.interruptions,
                        st.samples);
    by_reason("failed", st.failed);
    by_reason("biased", st.biased);
    by_reason("dropped", st.dropped);
    out_ += '}';
  }

  // Each sampler's line against the reference's for the same interruptions (confusion.h).
  void confusion() {
    list("confusion", r_.confusion, [&](const Confusion& m) {
      out_ += fmt::format("{{\"sampler\":{},\"paired\":{},\"agreed\":{},\"refFailed\":{}",
                          json_string(sampler_name(m.sampler)), m.paired, m.agreed(), m.reference_failed);
      list("cells", m.lines, [&](const auto& cell) {
        out_ += fmt::format("[{},{},{}]", key(cell.first.first), key(cell.first.second), cell.second);
      });
      list("failed", m.failed, [&](const auto& cell) {
        out_ += fmt::format("[\"{}\",{},{}]", reason_name(cell.first.first), key(cell.first.second), cell.second);
        used_reasons_[cell.first.first] = true;
      });
      out_ += '}';
    });
  }

  void reasons() {
    out_ += ",\"reasons\":{";
    bool first = true;
    for (const auto& [reason, used] : used_reasons_) {
      out_ += fmt::format("{}\"{}\":{}", first ? "" : ",", reason_name(reason), json_string(reason_meaning(reason)));
      first = false;
    }
    out_ += '}';
  }

  void stacks() {
    const CompareTable& t = r_.table;
    std::unordered_map<uint32_t, size_t> ids;  // profile stack id -> index in "stacks"
    std::vector<uint32_t> order;
    std::string agg;
    for (const Event& e : p_.events) {
      if (!is_stack_sample(e)) continue;
      auto col = std::find(t.columns.begin(), t.columns.end(), e.sampler);
      if (col == t.columns.end()) continue;
      auto [it, fresh] = ids.emplace(e.stack, order.size());
      if (fresh) order.push_back(e.stack);
      agg += fmt::format("{}[{},{},{},{}]", agg.empty() ? "" : ",", col - t.columns.begin(), it->second, e.count,
                         e.biased ? 1 : 0);
    }
    std::vector<std::string> names;
    std::unordered_map<std::string, size_t> name_ids;
    std::string stacks;
    for (uint32_t id : order) {
      stacks += stacks.empty() ? "[" : ",[";
      const StackTrace& st = stack_of_id(p_, id);
      for (size_t i = 0; i < st.size(); i++) {
        auto [it, fresh] = name_ids.emplace(function_name(st[i]), names.size());
        if (fresh) names.push_back(function_name(st[i]));
        stacks += fmt::format("{}[{},{},{}]", i ? "," : "", it->second, key(p_.file_of(st[i].function), st[i].line),
                              size_t(st[i].kind));
      }
      stacks += ']';
    }
    list("names", names, [&](const std::string& n) { append_json_string(out_, n); });
    out_ += ",\"kinds\":[";
    for (size_t k = 0; k < kFrameKindCount; k++) out_ += fmt::format("{}\"{}\"", k ? "," : "", frame_kind_name(FrameKind(k)));
    out_ += "],\"stacks\":[" + stacks + "],\"agg\":[" + agg + "]";
  }

  // The .jsonl lines are JSON objects written by report_jsonl.cpp, whose strings escape
  // '<', so they can stand inside the <script> element as they are.
  void events(std::string_view jsonl, size_t max_events) {
    out_ += ",\"events\":[";
    size_t kept = 0, total = 0, pos = 0, collections = 0;
    while (pos < jsonl.size()) {
      size_t end = jsonl.find('\n', pos);
      if (end == std::string_view::npos) end = jsonl.size();
      std::string_view line = jsonl.substr(pos, end - pos);
      pos = end + 1;
      if (line.empty() || line.front() != '{') continue;
      // A collection is kept past the limit (the timeline's bands): there are few, each
      // having stopped every thread.
      bool collection = line.starts_with("{\"event\":\"GarbageCollection\"");
      total++;
      if (kept == max_events && !collection) continue;
      if (kept > 0 || collections > 0) out_ += ',';
      (collection ? collections : kept)++;
      out_ += line;
    }
    out_ += fmt::format("],\"eventsTotal\":{}", total);
  }

  const CompareReport& r_;
  const Profile& p_;
  std::string out_;
  std::map<Reason, bool> used_reasons_;
};

}  // namespace

void write_compare_html(const CompareReport& report, std::string_view events_jsonl, std::ostream& out,
                        size_t max_events) {
  pages::write_page(pages::kcompare_page, "minivm compare: " + report.profile->program,
                    DataWriter(report).json(events_jsonl, max_events), out);
}

void write_compare_data(const CompareReport& report, std::ostream& out) {
  out << DataWriter(report).json("", 0) << "\n";
}

}  // namespace sampler
