// Unit tests of the statistics writer (`--profile-stats`, sampler/profile/report_stats.cpp) on
// Profiles built by hand: every field, its key order and its value's type (the documents
// compared as JSON, not as text: the layout is nlohmann's), a sampler with failures, biased
// samples, drops and truncated stacks, percentiles of nothing as null, a number that is
// not finite, a name that is not UTF-8, accounting that does not add up, and the file
// errors.
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sampler/profile/profile.h"
#include "sampler/profile/report.h"
#include "tests/profile/support.h"

using namespace sampler;
using profile_test::canonical_json;
using profile_test::parse_json;
using profile_test::three_collections;

namespace {

std::string stats_json(const Profile& p) {
  std::ostringstream os;
  write_stats_json(p, os);
  return os.str();
}

// Two samplers on the same 10 interruptions. cooperative: 9 samples (1 biased) and a
// drop, held and latency times recorded. classical: 6 samples (2 truncated), 3 failures
// by two reasons (one a crash the protection caught) and a drop, held times only, one
// interruption that named freed code; code unloading totals. A third sampler has stats but is not in
// Profile::samplers, so it comes last (report_samplers) and has nothing recorded.
Profile two_samplers() {
  Profile p;
  p.program = "dir/prog \"x\".mini";
  p.samplers = {SamplerId::cooperative, SamplerId::classical};
  p.interval_ns = 1'000'000;
  p.duration_ns = 12'345'678;
  p.sampler_cpu_ns = {4000, 1000, 3000, 2000};  // p50 = rank 2 = 2000, p99 = rank 4
  p.sampler_thread_cpu_ns = 98'765;
  SamplerStats& coop = p.stats[SamplerId::cooperative];
  coop.interruptions = 10;
  coop.samples = 9;
  coop.biased[Reason::frame_not_found] = 1;
  coop.dropped[Reason::ring_full] = 1;
  for (uint64_t v = 1; v <= 10; v++) coop.suspension_ns.push_back(v * 100);  // p50 500, p99 1000
  coop.latency_ns = {7000, 5000, 6000};                                     // p50 6000
  coop.latency_cpu_ns = {7000, 900, 3000};                                  // p50 3000: once descheduled
  SamplerStats& cls = p.stats[SamplerId::classical];
  cls.interruptions = 10;
  cls.samples = 6;
  cls.truncated = 2;
  cls.failed[Reason::pc_in_stub] = 2;
  cls.failed[Reason::crashed_in_walk] = 1;
  cls.freed_code = 1;
  cls.dropped[Reason::ring_full] = 1;
  cls.suspension_ns = {20000};
  p.stats[SamplerId::async];
  p.unloading = CodeUnloading{5, 4, 3, 2, 1};
  p.collections = three_collections();
  p.poll_walks.polls = 3;
  p.poll_walks.frames_walked = 7;
  p.poll_walks.frames_cached = 900;
  p.poll_walks.time_ns = {3000, 1000, 2000};
  // 12 periods of one thread, found blocked twice: 10 visits asked for, 10 made.
  p.schedule.periods = 12;
  p.schedule.visits_due = 12;
  p.schedule.not_running = 2;
  p.schedule.period_ns = {30000, 10000, 20000};
  return p;
}

// Four threads at 500 µs beside classical, which held them: of 4,000 visits due 2,400 fell
// in the 600 periods the sampler thread missed and 100 found a thread blocked; of the
// 1,500 interruptions 500 were signals coalesced. 1,000 of 3,900 asked for (25.6%).
Profile throttled() {
  Profile p;
  p.program = "threads.mini";
  p.samplers = {SamplerId::cooperative, SamplerId::classical};
  p.interval_ns = 500'000;
  p.duration_ns = 500'000'000;
  for (SamplerId s : p.samplers) {
    SamplerStats& st = p.stats[s];
    st.interruptions = 1500;
    st.samples = 1000;
    st.failed[Reason::signal_coalesced] = 500;
  }
  p.stats[SamplerId::classical].suspension_ns = {900'000, 1'100'000, 1'000'000};
  p.schedule.periods = 1000;
  p.schedule.periods_missed = 600;
  p.schedule.visits_due = 4000;
  p.schedule.visits_missed = 2400;
  p.schedule.not_running = 100;
  p.schedule.period_ns = {2'000'000, 1'500'000, 2'500'000};
  return p;
}

}  // namespace

TEST_CASE("report_stats: every field, in report order, with its type", "[reports][stats]") {
  const std::string expected =
      "{\"program\": \"dir/prog \\\"x\\\".mini\",\n"
      " \"interval_ns\": 1000000,\n"
      " \"interval_jitter\": 0.25,\n"
      " \"duration_ns\": 12345678,\n"
      " \"slowdowns\": [\"sieve:10=100ns\", \"Box.get:25=2000ns\"],\n"
      " \"slowdown_passes\": [1485530, 2],\n"
      " \"sampler_thread\": {\"cpu_ns\": 98765, \"cpu_per_visit_ns\": "
      "{\"n\": 4, \"p50\": 2000, \"p99\": 4000, \"max\": 4000}},\n"
      " \"poll_walks\": {\"polls\": 3, \"frames_walked\": 7, \"frames_cached\": 900, \"time_ns\": "
      "{\"n\": 3, \"p50\": 2000, \"p99\": 3000, \"max\": 3000}},\n"
      " \"code_unloading\": {\"retired\": 5, \"freed\": 4, \"rounds\": 3, \"kept_in_use\": 2, \"unwalkable_rounds\": 1},\n"
      " \"gc\": {\"collections\": 3, \"young\": 2, \"full\": 1, \"pause_total_ns\": 7000000,\n"
      "        \"pause_ns\": {\"n\": 3, \"p50\": 2000000, \"p99\": 4000000, \"max\": 4000000},\n"
      "        \"time_to_safepoint_ns\": {\"n\": 2, \"p50\": 100000, \"p99\": 300000, \"max\": 300000},\n"
      "        \"last_to_stop\": {\"1\": 1}},\n"
      " \"rate\": {\"asked\": 10, \"achieved\": 10, \"asked_hz\": 1000.0, \"achieved_hz\": 1000.0, \"short\": false,\n"
      "          \"short_by\": {\"sampler_behind\": 0, \"signal_coalesced\": 0, \"other\": 0},\n"
      "          \"periods\": 12, \"periods_missed\": 0, \"visits_due\": 12, \"not_running\": 2, \"period_ns\": "
      "{\"n\": 3, \"p50\": 20000, \"p99\": 30000, \"max\": 30000},\n"
      "          \"classical_throttles\": false},\n"
      " \"samplers\": [\n"
      "  {\"name\": \"cooperative\",\n"
      "   \"interruptions\": 10, \"samples\": 9, \"truncated\": 0, \"represented\": 0,\n"
      "   \"biased\": {\"frame_not_found\": 1},\n"
      "   \"failed\": {},\n"
      "   \"dropped\": {\"ring_full\": 1},\n"
      "   \"accounted\": true,\n"
      "   \"suspension_ns\": {\"n\": 10, \"p50\": 500, \"p99\": 1000, \"max\": 1000},\n"
      "   \"latency_ns\": {\"n\": 3, \"p50\": 6000, \"p99\": 7000, \"max\": 7000},\n"
      "   \"latency_cpu_ns\": {\"n\": 3, \"p50\": 3000, \"p99\": 7000, \"max\": 7000},\n"
      "   \"stability\": {\"crashes_caught\": 0, \"freed_code\": 0},\n"
      "   \"bias_budget\": null},\n"
      "  {\"name\": \"classical\",\n"
      "   \"interruptions\": 10, \"samples\": 6, \"truncated\": 2, \"represented\": 0,\n"
      "   \"biased\": {},\n"
      "   \"failed\": {\"crashed_in_walk\": 1, \"pc_in_stub\": 2},\n"
      "   \"dropped\": {\"ring_full\": 1},\n"
      "   \"accounted\": true,\n"
      "   \"suspension_ns\": {\"n\": 1, \"p50\": 20000, \"p99\": 20000, \"max\": 20000},\n"
      "   \"latency_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
      "   \"latency_cpu_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
      "   \"stability\": {\"crashes_caught\": 1, \"freed_code\": 1},\n"
      "   \"bias_budget\": null},\n"
      "  {\"name\": \"async\",\n"
      "   \"interruptions\": 0, \"samples\": 0, \"truncated\": 0, \"represented\": 0,\n"
      "   \"biased\": {},\n"
      "   \"failed\": {},\n"
      "   \"dropped\": {},\n"
      "   \"accounted\": true,\n"
      "   \"suspension_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
      "   \"latency_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
      "   \"latency_cpu_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
      "   \"stability\": {\"crashes_caught\": 0, \"freed_code\": 0},\n"
      "   \"bias_budget\": null}\n"
      " ]}\n";
  Profile p = two_samplers();
  p.interval_jitter = 0.25;
  p.slowdowns = {"sieve:10=100ns", "Box.get:25=2000ns"};
  p.slowdown_passes = {1485530, 2};
  CHECK(canonical_json(stats_json(p)) == canonical_json(expected));
}

TEST_CASE("report_stats: the percentiles are the text report's", "[reports][stats]") {
  // Both writers print percentiles() of the same values: in ns here, in µs in the text.
  // (A median by interpolation would give 550 ns for the cooperative suspension.)
  Profile p = two_samplers();
  std::string json = canonical_json(stats_json(p));
  for (const auto& [sampler, st] : p.stats) {
    // Each sampler's own timing is in the report of that sampler alone. (A copy: clang 14
    // cannot capture a structured binding.)
    SamplerId name = sampler;
    Profile alone = p;
    alone.samplers = {name};
    std::erase_if(alone.events, [&](const Event& e) { return e.sampler != name; });
    std::erase_if(alone.stats, [&](const auto& kv) { return kv.first != name; });
    std::ostringstream text;
    write_text(alone, text);
    for (const auto* values : {&st.suspension_ns, &st.latency_ns, &st.latency_cpu_ns}) {
      Percentiles q = percentiles(*values);
      if (q.n == 0) continue;
      INFO(sampler_name(name));
      CHECK(json.find(canonical_json(fmt::format("{{\"n\": {}, \"p50\": {}, \"p99\": {}, \"max\": {}}}", q.n,
                                                 q.p50, q.p99, q.max))) != std::string::npos);
      CHECK(text.str().find(fmt::format("p50 {}  p99 {}  max {}  (n={})", format_us(q.p50),
                                        format_us(q.p99), format_us(q.max), q.n)) != std::string::npos);
    }
  }
}

TEST_CASE("report_stats: no sampler, no visits, accounting that does not add up", "[reports][stats]") {
  Profile empty;
  CHECK(canonical_json(stats_json(empty)) ==
        canonical_json("{\"program\": \"\",\n"
        " \"interval_ns\": 0,\n"
        " \"interval_jitter\": 0.0,\n"
        " \"duration_ns\": 0,\n"
        " \"slowdowns\": [],\n"
        " \"slowdown_passes\": [],\n"
        " \"sampler_thread\": {\"cpu_ns\": 0, \"cpu_per_visit_ns\": "
        "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null}},\n"
        " \"poll_walks\": {\"polls\": 0, \"frames_walked\": 0, \"frames_cached\": 0, \"time_ns\": "
        "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null}},\n"
        " \"code_unloading\": {\"retired\": 0, \"freed\": 0, \"rounds\": 0, \"kept_in_use\": 0, \"unwalkable_rounds\": 0},\n"
        " \"gc\": {\"collections\": 0, \"young\": 0, \"full\": 0, \"pause_total_ns\": 0,\n"
        "        \"pause_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
        "        \"time_to_safepoint_ns\": {\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
        "        \"last_to_stop\": {}},\n"
        " \"rate\": {\"asked\": 0, \"achieved\": 0, \"asked_hz\": 0.0, \"achieved_hz\": 0.0, \"short\": false,\n"
        "          \"short_by\": {\"sampler_behind\": 0, \"signal_coalesced\": 0, \"other\": 0},\n"
        "          \"periods\": 0, \"periods_missed\": 0, \"visits_due\": 0, \"not_running\": 0, \"period_ns\": "
        "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null},\n"
        "          \"classical_throttles\": false},\n"
        " \"samplers\": []}\n"));

  SamplerStats st;
  st.interruptions = 5;
  st.samples = 3;
  st.failed[Reason::pc_in_stub] = 1;
  CHECK_FALSE(all_accounted(st));  // one interruption unaccounted for
  st.dropped[Reason::ring_full] = 1;
  CHECK(all_accounted(st));
  st.dropped[Reason::ring_full] = 2;
  CHECK_FALSE(all_accounted(st));  // more endings than interruptions

  Profile p;
  p.samplers = {SamplerId::safepoint};
  p.stats[SamplerId::safepoint] = st;
  CHECK_FALSE(parse_json(stats_json(p))["samplers"][0]["accounted"].boolean);
}

TEST_CASE("report_stats: write_stats_file writes the document or says why not", "[reports][stats]") {
  Profile p = two_samplers();
  auto path = std::filesystem::temp_directory_path() / "minivm_test_stats.json";
  std::string error;
  REQUIRE(write_stats_file(p, path.string(), error));
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == stats_json(p));
  std::filesystem::remove(path);

  CHECK_FALSE(write_stats_file(p, "/nonexistent-dir/s.json", error));
  CHECK(error.find("--profile-stats /nonexistent-dir/s.json: cannot write") == 0);
}

TEST_CASE("report_stats: the rate achieved against the one asked for, short by cause", "[reports][stats]") {
  std::string json = canonical_json(stats_json(throttled()));
  CHECK(json.find(",\"rate\":" + canonical_json("{\"asked\": 3900, \"achieved\": 1000, \"asked_hz\": 2000.0, "
                  "\"achieved_hz\": 512.8, \"short\": true,\n"
                  "          \"short_by\": {\"sampler_behind\": 2400, \"signal_coalesced\": 500, \"other\": 0},\n"
                  "          \"periods\": 1000, \"periods_missed\": 600, \"visits_due\": 4000, \"not_running\": 100, "
                  "\"period_ns\": {\"n\": 3, \"p50\": 2000000, \"p99\": 2500000, \"max\": 2500000},\n"
                  "          \"classical_throttles\": true}") + ",") != std::string::npos);
  // Without classical nothing held the threads: the same shortfall is not its doing.
  Profile alone = throttled();
  alone.samplers = {SamplerId::cooperative};
  alone.stats.erase(SamplerId::classical);
  CHECK_FALSE(parse_json(stats_json(alone))["rate"]["classical_throttles"].boolean);
}

TEST_CASE("report_stats: a name that is not UTF-8 and a number that is not finite still make JSON", "[reports][stats]") {
  // nlohmann-json throws on a string that is not UTF-8 unless told otherwise; a Mini
  // program's name is any bytes. A float that is not finite has no JSON form: null.
  Profile p = two_samplers();
  p.program = "bad\xFF\xC3(.mini";
  p.slowdowns = {"f\xE2\x82:1=5ns"};
  p.interval_jitter = std::numeric_limits<double>::quiet_NaN();
  std::string json = stats_json(p);
  CHECK(parse_json(json)["program"].str == "bad\xEF\xBF\xBD\xEF\xBF\xBD(.mini");  // U+FFFD for each bad byte
  CHECK(parse_json(json)["slowdowns"][0].str == "f\xEF\xBF\xBD:1=5ns");
  CHECK(parse_json(json)["interval_jitter"].type == profile_test::Json::Null);
  CHECK(profile_test::python_accepts(json, false));
}
