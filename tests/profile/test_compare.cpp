// Unit tests of the per-line comparison behind `minivm compare` (sampler/profile/compare.h), on a
// Profile built by hand: the oracle's column first whatever the report order, shares of
// each sampler's own samples, the largest disagreement with the oracle and whose it is,
// lines that only hold a poll, a stub frame's samples on the "no line" row, the
// listing's rate line with the hint to run classical apart when it held the others back,
// the run's configuration and the reference's label (exact only with complete debug
// info), and the page: one file, its data what the table says.
#include <sstream>

#include <catch2/catch.hpp>

#include "sampler/profile/compare.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_compare.h"
#include "tests/profile/support.h"

using namespace sampler;
using base::PollKind;
using namespace profile_test;

namespace {

FrameRef frame(const char* fn, uint32_t line, FrameKind kind = FrameKind::jit) { return {fn, line, 0, kind}; }

void sample(Profile& p, SamplerId s, StackTrace stack, uint64_t count, bool biased = false) {
  Event e;
  e.sampler = s;
  e.stack = p.stacks.intern(stack);
  e.count = count;
  e.biased = biased;
  p.add_sample(e);
  p.stats[s].samples += count;
}

const CompareRow& row(const CompareTable& t, uint32_t line) {
  for (const CompareRow& r : t.rows)
    if (r.line == line) return r;
  FAIL("no row for line " << line);
  return t.rows.front();
}

// The counted loop on line 19 and the setter's return on line 14: the safepoint sampler
// puts 8 of 10 samples on 14, the oracle and the cooperative sampler on 19.
Profile counted_loop_profile() {
  Profile p;
  p.samplers = {SamplerId::cooperative, SamplerId::safepoint, SamplerId::oracle};
  StackTrace loop{frame("work", 19), frame("main", 27)};
  StackTrace ret{frame("store", 14), frame("work", 21), frame("main", 27)};
  sample(p, SamplerId::cooperative, loop, 9);
  sample(p, SamplerId::cooperative, ret, 1);
  sample(p, SamplerId::safepoint, ret, 8, /*biased=*/true);
  sample(p, SamplerId::safepoint, loop, 2, true);
  sample(p, SamplerId::oracle, loop, 18);
  sample(p, SamplerId::oracle, ret, 2);
  return p;
}

}  // namespace

TEST_CASE("compare: the oracle's column comes first, the others in report order", "[compare]") {
  CompareTable t = compare_lines(counted_loop_profile(), {});
  REQUIRE(t.has_oracle);
  REQUIRE(t.columns == std::vector<SamplerId>{SamplerId::oracle, SamplerId::cooperative, SamplerId::safepoint});
  REQUIRE(t.samples == std::vector<uint64_t>{20, 10, 10});
}

TEST_CASE("compare: shares are of each sampler's own samples, by the top frame's line", "[compare]") {
  CompareTable t = compare_lines(counted_loop_profile(), {});
  REQUIRE(t.rows.size() == 2);
  const CompareRow& loop = row(t, 19);
  REQUIRE(loop.counts == std::vector<uint64_t>{18, 9, 2});
  REQUIRE(loop.percent[0] == Approx(90.0));
  REQUIRE(loop.percent[1] == Approx(90.0));
  REQUIRE(loop.percent[2] == Approx(20.0));
  REQUIRE(loop.functions == std::vector<std::string>{"work"});
  // Line 27 is only a caller: no top frame is on it, so it has no row.
  for (const CompareRow& r : t.rows) REQUIRE(r.line != 27);
}

TEST_CASE("compare: the worst disagreement with the oracle, and whose it is", "[compare]") {
  CompareTable t = compare_lines(counted_loop_profile(), {});
  const CompareRow& ret = row(t, 14);
  REQUIRE(ret.worst == SamplerId::safepoint);
  REQUIRE(ret.worst_pp == Approx(70.0));  // 80% against the oracle's 10%
  REQUIRE(row(t, 19).worst_pp == Approx(70.0));
  std::vector<size_t> top = most_disagreeing(t, 1, 5.0);
  REQUIRE(top.size() == 1);
  REQUIRE(most_disagreeing(t, 5, 5.0).size() == 2);
  REQUIRE(most_disagreeing(t, 5, 75.0).empty());
}

TEST_CASE("compare: lines with polls only get a row, polls merged per line and kind", "[compare]") {
  std::vector<LinePoll> polls{{14, PollKind::method_return, "store"},
                              {19, PollKind::counted_no_poll, "work"},
                              {19, PollKind::strip_mined_latch, "work"},
                              {22, PollKind::method_return, "work"},
                              {22, PollKind::method_return, "work"}};
  CompareTable t = compare_lines(counted_loop_profile(), polls);
  REQUIRE(t.rows.size() == 3);
  REQUIRE(t.rows[2].line == 22);
  REQUIRE_FALSE(t.rows[2].sampled());
  REQUIRE(t.rows[2].polls == std::vector<PollKind>{PollKind::method_return});
  REQUIRE(t.rows[2].counts == std::vector<uint64_t>{0, 0, 0});
  REQUIRE(row(t, 19).polls == std::vector<PollKind>{PollKind::strip_mined_latch, PollKind::counted_no_poll});
  REQUIRE(row(t, 14).polls == std::vector<PollKind>{PollKind::method_return});
}

TEST_CASE("compare: a line of an imported file is its own row, after the program's lines", "[compare]") {
  Profile p;
  p.samplers = {SamplerId::oracle, SamplerId::cooperative};
  p.files = {"main.mini", "lib/vec.mini"};
  p.function_files = {{"Vec.add", 1}};
  sample(p, SamplerId::oracle, {frame("Vec.add", 7), frame("main", 7)}, 3);
  sample(p, SamplerId::oracle, {frame("main", 7)}, 1);
  sample(p, SamplerId::cooperative, {frame("Vec.add", 7), frame("main", 7)}, 4);
  std::vector<LinePoll> polls{{9, PollKind::method_return, "Vec.add", 1}, {9, PollKind::method_return, "main", 0}};
  CompareTable t = compare_lines(p, polls);
  REQUIRE(t.rows.size() == 4);
  REQUIRE((t.rows[0].file == 0 && t.rows[0].line == 7 && t.rows[0].counts == std::vector<uint64_t>{1, 0}));
  REQUIRE((t.rows[1].file == 0 && t.rows[1].line == 9 && t.rows[1].functions == std::vector<std::string>{"main"}));
  REQUIRE((t.rows[2].file == 1 && t.rows[2].line == 7 && t.rows[2].counts == std::vector<uint64_t>{3, 4}));
  REQUIRE((t.rows[3].file == 1 && t.rows[3].line == 9 && t.rows[3].polls == std::vector<PollKind>{PollKind::method_return}));
}

TEST_CASE("compare: a stub or native top frame is the no-line row, last, and with no oracle the first sampler leads",
          "[compare]") {
  Profile p;
  p.samplers = {SamplerId::cooperative, SamplerId::classical};
  sample(p, SamplerId::cooperative, {frame("arraycopy", 0, FrameKind::stub), frame("main", 7)}, 3);
  sample(p, SamplerId::cooperative, {frame("main", 7)}, 1);
  sample(p, SamplerId::classical, {frame("main", 7)}, 2);
  CompareTable t = compare_lines(p, {});
  REQUIRE_FALSE(t.has_oracle);
  REQUIRE(t.columns.front() == SamplerId::cooperative);
  REQUIRE(t.rows.back().line == 0);
  REQUIRE(t.rows.back().functions == std::vector<std::string>{"arraycopy (stub)"});
  REQUIRE(t.rows.back().percent[0] == Approx(75.0));
  REQUIRE(t.rows.back().percent[1] == Approx(0.0));
  REQUIRE(row(t, 7).worst_pp == Approx(75.0));
  REQUIRE(row(t, 7).worst == SamplerId::classical);
}

TEST_CASE("compare: the rate achieved against the one asked for, and classical apart when it held the others back",
          "[compare]") {
  Profile p = counted_loop_profile();
  p.program = "loop.mini";
  p.samplers.push_back(SamplerId::classical);
  p.interval_ns = 1'000'000;
  // 10 interruptions reached the thread; 90 visits fell in the 90 periods the sampler
  // thread missed while classical held the thread.
  for (SamplerId s : p.samplers) p.stats[s].interruptions = 10;
  p.stats[SamplerId::classical].suspension_ns = {5'000'000};
  p.schedule.periods = 100;
  p.schedule.periods_missed = 90;
  p.schedule.visits_due = 100;
  p.schedule.visits_missed = 90;
  p.schedule.period_ns = {5'000'000};
  CompareReport rep;
  rep.profile = &p;
  rep.table = compare_lines(p, {});
  rep.program = "dir/loop.mini";
  std::ostringstream out;
  write_compare_text(rep, out);
  std::string text = out.str();
  INFO(text);
  CHECK(text.find("rate: 10 of 100 interruptions asked for (10.0%): 100.0/s per running thread against 1000/s\n") !=
        std::string::npos);
  CHECK(text.find("  short by: 90 in 90 periods the sampler thread missed") != std::string::npos);
  CHECK(text.find("minivm compare --no-classical [the same options] dir/loop.mini") != std::string::npos);
  CHECK(text.find("minivm run --profile --sampler=classical [the same options] dir/loop.mini") != std::string::npos);
  CHECK(classical_apart_hint(rep) != "");

  // Without classical (compare --no-classical) nothing held the thread: no hint to give.
  p.samplers.pop_back();
  p.stats.erase(SamplerId::classical);
  CHECK(classical_apart_hint(rep) == "");
  // The rate asked for, achieved: the rate line alone.
  p.schedule = {};
  p.schedule.periods = p.schedule.visits_due = 10;
  std::ostringstream full;
  write_compare_text(rep, full);
  CHECK(full.str().find("rate: 10 of 10 interruptions asked for (100.0%)") != std::string::npos);
  CHECK(full.str().find("short by") == std::string::npos);
}

TEST_CASE("compare: the page is one file, and its data is the table, the source and the first events", "[compare]") {
  Profile p = counted_loop_profile();
  p.program = "</script><b>loop&.mini";
  CompareReport rep;
  rep.profile = &p;
  rep.polls = {{19, PollKind::strip_mined_latch, "work"}, {14, PollKind::method_return, "store"}};
  rep.table = compare_lines(p, rep.polls);
  rep.sources = {{"fn main() {", "  work();", "}"}};
  rep.mode = "tiered";
  rep.program = "loop.mini";
  const std::string events =
      "{\"event\":\"ExecutionSample\",\"sampler\":\"oracle\",\"sample\":1,\"thread\":1,\"time_ns\":5}\n"
      "{\"event\":\"SafepointLatency\",\"sampler\":\"cooperative\",\"sample\":1,\"thread\":1,\"time_ns\":6}\n"
      "{\"event\":\"ExecutionSample\",\"sampler\":\"oracle\",\"sample\":2,\"thread\":1,\"time_ns\":9}\n";
  std::ostringstream out;
  write_compare_html(rep, events, out, /*max_events=*/2);
  const std::string html = out.str();

  // One file: its style and script inline, nothing fetched (the SVG namespace is a name,
  // not an address).
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  for (const char* external : {"<link", "<script src", "src=\"http", "href=\"http", "url(http", "fetch("})
    CHECK(html.find(external) == std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
  CHECK(node_accepts_script(html));
  // The title names the program, escaped; the data's copy round-trips it.
  CHECK(html.find("<title>minivm compare: &lt;/script&gt;&lt;b&gt;loop&amp;.mini</title>") != std::string::npos);
  const std::string data = page_data(html, "compare-data");
  CHECK(python_accepts(data, false));
  Json d = parse_json(data);
  CHECK(d["program"].str == p.program);
  CHECK(d["mode"].str == "tiered");
  REQUIRE(d["columns"].items.size() == 3);
  CHECK(d["columns"][0].str == "oracle");
  CHECK(d["samples"][0].u64() == 20);
  REQUIRE(d["source"].items.size() == 3);
  CHECK(d["source"][1].str == "  work();");
  REQUIRE(d["rows"].items.size() == rep.table.rows.size());
  CHECK(d["rows"][0]["line"].u64() == rep.table.rows[0].line);
  CHECK(d["polls"].items.size() == 2);
  CHECK(d["pollKinds"].items.size() == base::kPollKindCount);
  // The first `max_events` events, and how many there were.
  REQUIRE(d["events"].items.size() == 2);
  CHECK(d["events"][1]["event"].str == "SafepointLatency");
  CHECK(d["eventsTotal"].u64() == 3);
  // Complete debug info: the oracle is exact, and no banner says otherwise.
  CHECK(d["reference"].str == "oracle (exact)");
  CHECK(d["banner"].str == "");
  CHECK(d["config"].items.size() == 2);
}

TEST_CASE("compare: the run's configuration, and the oracle called exact only with complete debug info",
          "[compare]") {
  Profile p = counted_loop_profile();
  p.interval_ns = 1'000'000;
  CompareReport rep;
  rep.profile = &p;
  rep.table = compare_lines(p, {});
  rep.config.strip_mining_iters = 0;
  rep.config.counted_loop_polls = true;
  rep.config.safepoint_debug_info = true;
  rep.config.handshake = true;
  std::vector<std::string> config = configuration_lines(rep);
  REQUIRE(config.size() == 2);
  CHECK(config[0] == "samplers: oracle, cooperative, safepoint; --suspend=handshake, --stub-metadata off");
  CHECK(config[1] == "compiled code: --strip-mining=0 (never), --counted-loop-polls on, --debug-info=safepoints");
  CHECK(reference_label(rep, true) == "oracle (exact)");

  // The code kept debug info only at safepoints: header, footer and page all say so.
  p.debug_info_at_safepoints = true;
  CHECK(reference_label(rep, true) == "oracle (safepoint debug info)");
  std::ostringstream text;
  write_compare_text(rep, text);
  INFO(text.str());
  CHECK(text.str().find("the oracle (safepoint debug info: it knows only the lines of polls and calls") !=
        std::string::npos);
  CHECK(text.str().find("exact, from complete metadata") == std::string::npos);
  CHECK(text.str().find(kDebugInfoAtSafepointsNote) != std::string::npos);
  std::ostringstream html;
  write_compare_html(rep, "", html);
  Json d = parse_json(page_data(html.str(), "compare-data"));
  CHECK(d["reference"].str == "oracle (safepoint debug info)");
  CHECK(d["banner"].str == kDebugInfoAtSafepointsNote);
  CHECK(d["oracleHow"].str.find("exactly") == std::string::npos);
}
