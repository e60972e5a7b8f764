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

#include "sampler/profile/json.h"
#include "sampler/profile/pages.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_compare.h"

namespace sampler {

namespace {

constexpr uint64_t kFileStride = uint64_t(1) << 24;  // compare.js's FILE_STRIDE: above any file's line count

class DataWriter {
 public:
  explicit DataWriter(const CompareReport& r) : r_(r), p_(*r.profile) {}

  Json json(std::string_view events_jsonl, size_t max_events) {
    const CompareTable& t = r_.table;
    Json budget = Json::array();
    for (const BiasBudget& b : r_.budgets)
      budget.push_back({{"sampler", sampler_name(b.sampler)},
                        {"lines", {rounded(b.lines.tvd, 4), rounded(b.lines.low, 4), rounded(b.lines.high, 4)}},
                        {"functions",
                         {rounded(b.functions.tvd, 4), rounded(b.functions.low, 4), rounded(b.functions.high, 4)}}});
    Json imported = Json::array();
    for (size_t f = 1; f < p_.files.size(); f++)
      imported.push_back({{"path", p_.files[f]}, {"source", r_.source_of(uint16_t(f))}});
    Json fn_file = Json::object();
    for (const auto& [fn, f] : p_.function_files) fn_file[fn] = f;
    Json rows = Json::array();
    for (const CompareRow& row : t.rows) rows.push_back(this->row(row));
    Json poll_kinds = Json::array();
    for (size_t k = 0; k < base::kPollKindCount; k++) {
      auto kind = PollKind(k);
      poll_kinds.push_back({{"mark", base::poll_kind_mark(kind)},
                            {"name", base::poll_kind_name(kind)},
                            {"meaning", base::poll_kind_meaning(kind)}});
    }
    Json polls = Json::array();
    for (const LinePoll& lp : r_.polls)
      polls.push_back({{"line", key(lp.file, lp.line)}, {"mark", base::poll_kind_mark(lp.kind)}, {"function", lp.function}});
    Json stats = Json::array();
    for (SamplerId s : t.columns) stats.push_back(this->stats(s));
    SamplingRate rate = sampling_rate(p_);
    Json doc = {{"program", p_.program},
                {"mode", r_.mode},
                {"interval_ns", p_.interval_ns},
                {"interval_jitter", p_.interval_jitter},
                {"duration_ns", p_.duration_ns},
                {"oracle", t.has_oracle},
                {"config", configuration_lines(r_)},
                {"reference", reference_label(r_, true)},
                {"oracleHow", oracle_how()},
                {"banner", p_.debug_info_at_safepoints ? kDebugInfoAtSafepointsNote : ""},
                {"budget", std::move(budget)},
                {"columns", column_names(t.columns)},
                {"samples", t.samples},
                {"source", r_.source_of(0)},
                {"imported", std::move(imported)},
                {"fnFile", std::move(fn_file)},
                {"rows", std::move(rows)},
                {"pollKinds", std::move(poll_kinds)},
                {"polls", std::move(polls)},
                {"stats", std::move(stats)},
                {"rate", rate.asked ? format_rate(rate) : ""},
                {"rateShort", rate_shortfall(p_, rate)},
                {"apart", classical_apart_hint(r_)}};
    doc["confusion"] = confusion();
    doc["reasons"] = reasons();
    stacks(doc);
    events(doc, events_jsonl, max_events);
    return doc;
  }

 private:
  static uint64_t key(uint16_t file, uint32_t line) { return line == 0 ? 0 : file * kFileStride + line; }
  static uint64_t key(SourceLine l) { return key(l.file, l.line); }

  static Json column_names(const std::vector<SamplerId>& columns) {
    Json out = Json::array();
    for (SamplerId s : columns) out.push_back(sampler_name(s));
    return out;
  }

  // The page's introduction says what the oracle knows; here, not in the page's text,
  // because under --debug-info=safepoints it knows no more than the polls and calls.
  std::string oracle_how() const {
    if (!p_.debug_info_at_safepoints) return "knows exactly where each one landed";
    return "knows only the polls and calls (--debug-info=safepoints), so it names each one by the poll or call "
           "before it, as a safepoint-biased sampler would";
  }

  Json row(const CompareRow& r) {
    Json percent = Json::array(), polls = Json::array();
    for (double v : r.percent) percent.push_back(rounded(v, 2));
    for (PollKind k : r.polls) polls.push_back(base::poll_kind_mark(k));
    return {{"line", key(r.file, r.line)},
            {"c", r.counts},
            {"p", std::move(percent)},
            {"w", rounded(r.worst_pp, 2)},
            {"ws", r.worst ? Json(sampler_name(*r.worst)) : Json(nullptr)},
            {"polls", std::move(polls)},
            {"f", r.functions}};
  }

  Json by_reason(const std::map<Reason, uint64_t>& m) {
    Json out = Json::object();
    for (const auto& [reason, n] : m) {
      if (n == 0) continue;
      out[reason_name(reason)] = n;
      used_reasons_[reason] = true;
    }
    return out;
  }

  Json stats(SamplerId s) {
    const SamplerStats& st = stats_of(p_, s);
    return {{"name", sampler_name(s)},
            {"interruptions", st.interruptions},
            {"samples", st.samples},
            {"failed", by_reason(st.failed)},
            {"biased", by_reason(st.biased)},
            {"dropped", by_reason(st.dropped)}};
  }

  // Each sampler's line against the reference's for the same interruptions (confusion.h).
  Json confusion() {
    Json out = Json::array();
    for (const Confusion& m : r_.confusion) {
      Json cells = Json::array(), failed = Json::array();
      for (const auto& [cell, n] : m.lines) cells.push_back({key(cell.first), key(cell.second), n});
      for (const auto& [cell, n] : m.failed) {
        failed.push_back({reason_name(cell.first), key(cell.second), n});
        used_reasons_[cell.first] = true;
      }
      out.push_back({{"sampler", sampler_name(m.sampler)},
                     {"paired", m.paired},
                     {"agreed", m.agreed()},
                     {"refFailed", m.reference_failed},
                     {"cells", std::move(cells)},
                     {"failed", std::move(failed)}});
    }
    return out;
  }

  Json reasons() const {
    Json out = Json::object();
    for (const auto& [reason, used] : used_reasons_) out[reason_name(reason)] = reason_meaning(reason);
    return out;
  }

  // "names", "kinds", "stacks" and "agg": each distinct stack once, its frames as
  // [name, line, kind], and every aggregated sample as [column, stack, count, biased].
  void stacks(Json& doc) {
    const CompareTable& t = r_.table;
    std::unordered_map<uint32_t, size_t> ids;  // profile stack id -> index in "stacks"
    std::vector<uint32_t> order;
    Json agg = Json::array();
    for (const Event& e : p_.events) {
      if (!is_stack_sample(e)) continue;
      auto col = std::find(t.columns.begin(), t.columns.end(), e.sampler);
      if (col == t.columns.end()) continue;
      auto [it, fresh] = ids.emplace(e.stack, order.size());
      if (fresh) order.push_back(e.stack);
      agg.push_back({col - t.columns.begin(), it->second, e.count, e.biased ? 1 : 0});
    }
    std::vector<std::string> names;
    std::unordered_map<std::string, size_t> name_ids;
    Json stacks = Json::array();
    for (uint32_t id : order) {
      Json frames = Json::array();
      for (const FrameRef& f : stack_of_id(p_, id)) {
        auto [it, fresh] = name_ids.emplace(function_name(f), names.size());
        if (fresh) names.push_back(function_name(f));
        frames.push_back({it->second, key(p_.file_of(f.function), f.line), size_t(f.kind)});
      }
      stacks.push_back(std::move(frames));
    }
    Json kinds = Json::array();
    for (size_t k = 0; k < kFrameKindCount; k++) kinds.push_back(frame_kind_name(FrameKind(k)));
    doc["names"] = names;
    doc["kinds"] = std::move(kinds);
    doc["stacks"] = std::move(stacks);
    doc["agg"] = std::move(agg);
  }

  // "events": the first `max_events` events of the run's .jsonl stream, each line read
  // back as the object it is, and every GarbageCollection past them; "eventsTotal": how
  // many lines it had.
  static void events(Json& doc, std::string_view jsonl, size_t max_events) {
    Json events = Json::array();
    size_t kept = 0, total = 0;
    for (size_t pos = 0; pos < jsonl.size();) {
      size_t end = jsonl.find('\n', pos);
      if (end == std::string_view::npos) end = jsonl.size();
      std::string_view line = jsonl.substr(pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      total++;
      // A collection is kept past the limit (the timeline's bands): there are few, each
      // having stopped every thread. Only a line naming one is read to see if it is one.
      bool may_be_collection = line.find("\"GarbageCollection\"") != std::string_view::npos;
      if (kept == max_events && !may_be_collection) continue;
      Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!event.is_object()) continue;
      bool collection = event.value("event", "") == "GarbageCollection";
      if (kept == max_events && !collection) continue;
      if (!collection) kept++;
      events.push_back(std::move(event));
    }
    doc["events"] = std::move(events);
    doc["eventsTotal"] = total;
  }

  const CompareReport& r_;
  const Profile& p_;
  std::map<Reason, bool> used_reasons_;
};

}  // namespace

void write_compare_html(const CompareReport& report, std::string_view events_jsonl, std::ostream& out,
                        size_t max_events) {
  pages::write_page(pages::kcompare_page, "minivm compare: " + report.profile->program,
                    DataWriter(report).json(events_jsonl, max_events), out);
}

void write_compare_data(const CompareReport& report, std::ostream& out) {
  out << json_text(DataWriter(report).json("", 0)) << "\n";
}

}  // namespace sampler
