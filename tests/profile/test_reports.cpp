// Unit tests of the profile model and report writers (sampler/profile/profile.h, sampler/profile/report.h),
// on Profiles built by hand: two samplers on the same interruptions, recursion, a native
// frame, failed, biased and dropped interruptions, latencies. The text report's numbers,
// the folded stacks and the .jsonl lines are checked exactly; the speedscope and HTML JSON
// are parsed (by a small strict parser, tests/profile/support.h, and by python3 when
// present) and must agree with the folded counts.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sampler/profile/profile.h"
#include "sampler/profile/report.h"
#include "sampler/profile/report_text.h"
#include "tests/profile/support.h"

using namespace sampler;
using namespace profile_test;

namespace {

// ---- Helpers ----

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// A line with runs of spaces squeezed to one and the ends trimmed: the text report's
// numbers are compared exactly, its column alignment is not.
std::string squeeze(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == ' ' && (o.empty() || o.back() == ' ')) continue;
    o += c;
  }
  while (!o.empty() && o.back() == ' ') o.pop_back();
  return o;
}

bool has_line(const std::string& text, const std::string& want) {
  for (const auto& l : split_lines(text))
    if (squeeze(l) == want) return true;
  return false;
}

// The part of a text report from "== sampler: NAME ==" to the next section.
std::string section_of(const std::string& text, const std::string& name) {
  size_t b = text.find("== sampler: " + name + " ==");
  REQUIRE(b != std::string::npos);
  size_t e = text.find("\n== sampler: ", b + 1);
  return text.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

// The lines of a table, from its heading (prefix match) to the next blank line.
std::vector<std::string> table_rows(const std::string& text, const std::string& heading) {
  std::vector<std::string> rows;
  auto lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size() && squeeze(lines[i]).rfind(heading, 0) != 0) ++i;
  REQUIRE(i < lines.size());
  for (i += 2; i < lines.size() && !squeeze(lines[i]).empty(); ++i) rows.push_back(squeeze(lines[i]));
  return rows;
}

FrameRef F(const char* fn, uint32_t line, int32_t bci, FrameKind k) { return FrameRef{fn, line, bci, k}; }

// Stacks, top frame first.
const StackTrace kA = {F("compute", 19, 12, FrameKind::jit), F("main", 30, 40, FrameKind::interp)};
const StackTrace kB = {F("fib", 3, 5, FrameKind::jit), F("fib", 4, 9, FrameKind::jit),
                       F("fib", 4, 9, FrameKind::jit), F("main", 31, 44, FrameKind::interp)};
const StackTrace kC = {F("sqrt", 0, -1, FrameKind::native), F("compute", 21, 20, FrameKind::jit),
                       F("main", 30, 40, FrameKind::interp)};
const StackTrace kD = {F("main", 28, 2, FrameKind::interp)};

Event sample_event(SamplerId sampler, uint64_t id, uint32_t stack, bool native = false) {
  Event e;
  e.type = native ? EventType::NativeMethodSample : EventType::ExecutionSample;
  e.sampler = sampler;
  e.sample = id;
  e.thread = 1;
  e.time_ns = id * 1000000;
  e.stack = stack;
  return e;
}

Event failed_event(SamplerId sampler, uint64_t id, Reason reason) {
  Event e;
  e.type = EventType::FailedSample;
  e.sampler = sampler;
  e.sample = id;
  e.thread = 1;
  e.reason = reason;
  return e;
}

Event latency_event(SamplerId sampler, uint64_t id, uint32_t stack, uint64_t ns, uint64_t cpu_ns = 0) {
  Event e;
  e.type = EventType::SafepointLatency;
  e.sampler = sampler;
  e.sample = id;
  e.thread = 1;
  e.time_ns = id * 1'000'000;  // its interruption's
  e.latency_ns = ns;
  e.cpu_ns = cpu_ns;
  e.stack = stack;
  return e;
}

// Ten interruptions seen by two samplers (--sampler=all).
//   cooperative: A A A B B C(native) D(biased pc_in_stub) A(biased frame_not_found),
//                two dropped (ring_full): 8 samples + 0 failed + 2 dropped = 10.
//   classical:   A A failed(pc_in_stub) B B C(native) failed(unknown_pc) A A
//                failed(pc_in_stub): 7 samples + 3 failed + 0 dropped = 10.
Profile two_sampler_profile() {
  Profile p;
  p.program = "prog.mini";
  p.samplers = {SamplerId::cooperative, SamplerId::classical};
  p.interval_ns = 1000000;
  p.duration_ns = 10500000;
  uint32_t a = p.stacks.intern(kA), b = p.stacks.intern(kB), c = p.stacks.intern(kC),
           d = p.stacks.intern(kD);
  auto coop = [&](Event e) { p.events.push_back(e); };
  const SamplerId co = SamplerId::cooperative, cl = SamplerId::classical;
  // sample 1
  coop(sample_event(co, 1, a));
  p.events.push_back(latency_event(co, 1, a, 4200, 3900));
  p.events.push_back(sample_event(cl, 1, a));
  // 2
  coop(sample_event(co, 2, a));
  p.events.push_back(sample_event(cl, 2, a));
  // 3
  coop(sample_event(co, 3, a));
  p.events.push_back(failed_event(cl, 3, Reason::pc_in_stub));
  // 4, 5
  for (uint64_t id : {4, 5}) {
    coop(sample_event(co, id, b));
    p.events.push_back(sample_event(cl, id, b));
  }
  // 6: in native
  coop(sample_event(co, 6, c, true));
  p.events.push_back(sample_event(cl, 6, c, true));
  // 7: biased at the poll site
  Event biased7 = sample_event(co, 7, d);
  biased7.biased = true;
  biased7.reason = Reason::pc_in_stub;
  coop(biased7);
  p.events.push_back(failed_event(cl, 7, Reason::unknown_pc));
  // 8
  Event biased8 = sample_event(co, 8, a);
  biased8.biased = true;
  biased8.reason = Reason::frame_not_found;
  coop(biased8);
  p.events.push_back(sample_event(cl, 8, a));
  // 9: cooperative dropped (no event)
  p.events.push_back(sample_event(cl, 9, a));
  // 10: cooperative dropped, classical failed
  p.events.push_back(failed_event(cl, 10, Reason::pc_in_stub));

  SamplerStats& s1 = p.stats[co];
  s1.interruptions = 10;
  s1.samples = 8;
  s1.biased = {{Reason::pc_in_stub, 1}, {Reason::frame_not_found, 1}};
  s1.dropped = {{Reason::ring_full, 2}};
  s1.suspension_ns = {3000, 1000, 2000, 4000, 5000, 6000, 7000, 8000, 9000, 150000};
  s1.latency_ns = {4200, 1000, 3000, 2000, 5000, 800, 1200};
  s1.latency_cpu_ns = {4100, 900, 600, 1900, 4900, 700, 1100};
  SamplerStats& s2 = p.stats[cl];
  s2.interruptions = 10;
  s2.samples = 7;
  s2.failed = {{Reason::pc_in_stub, 2}, {Reason::unknown_pc, 1}};
  s2.suspension_ns = {1500, 500};
  return p;
}

// One sampler's part of a profile: what a run with --sampler=NAME alone reports.
Profile only(Profile p, SamplerId sampler) {
  p.samplers = {sampler};
  std::erase_if(p.events, [&](const Event& e) { return e.sampler != sampler; });
  std::erase_if(p.stats, [&](const auto& kv) { return kv.first != sampler; });
  return p;
}

Profile one_sampler_profile() { return only(two_sampler_profile(), SamplerId::cooperative); }

template <class W>
std::string render(W writer, const Profile& p, ReportOptions o = {}) {
  std::ostringstream os;
  writer(p, os, o);
  return os.str();
}
std::string text_of(const Profile& p, ReportOptions o = {}) { return render(write_text, p, o); }
std::string collapsed_of(const Profile& p, ReportOptions o = {}) { return render(write_collapsed, p, o); }
std::string speedscope_of(const Profile& p, ReportOptions o = {}) { return render(write_speedscope, p, o); }
std::string html_of(const Profile& p, ReportOptions o = {}) { return render(write_html, p, o); }
std::string jsonl_of(const Profile& p) {
  std::ostringstream os;
  write_jsonl(p, os);
  return os.str();
}

// The JSON embedded in the HTML report.
std::string html_data(const std::string& html) { return page_data(html, "profile-data"); }

// Folded stacks rebuilt from an HTML tree: every node with self samples is a stack end.
std::map<std::string, uint64_t> fold_html_tree(const Json& data, const Json& root) {
  std::map<std::string, uint64_t> out;
  bool lines = data["lines"].boolean;
  std::function<void(const Json&, const std::string&)> walk = [&](const Json& n, const std::string& path) {
    uint64_t children = 0;
    if (n.has("c"))
      for (const Json& c : n["c"].items) {
        std::string name = data["names"][c["f"].u64()].str;
        if (lines && name.back() != ')') {  // a native or stub frame has no line: "sqrt (native)"
          uint64_t l = c["l"].u64();
          name += ":" + (l ? std::to_string(l) : std::string("?"));
        }
        walk(c, path.empty() ? name : path + ";" + name);
        children += c["v"].u64();
      }
    CHECK(n["v"].u64() == children + n["s"].u64());  // width = callees + self
    if (n["s"].u64()) out[path] += n["s"].u64();
  };
  walk(root, "");
  return out;
}

// Folded stacks rebuilt from a speedscope profile.
std::map<std::string, uint64_t> fold_speedscope(const Json& doc, const Json& profile) {
  std::map<std::string, uint64_t> out;
  const Json& frames = doc["shared"]["frames"];
  REQUIRE(profile["samples"].items.size() == profile["weights"].items.size());
  for (size_t i = 0; i < profile["samples"].items.size(); ++i) {
    std::string key;
    for (const Json& f : profile["samples"][i].items) {
      if (!key.empty()) key += ';';
      key += frames[f.u64()]["name"].str;
    }
    out[key] += profile["weights"][i].u64();
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------

TEST_CASE("reports: frame kind and event type names follow the .jsonl schema", "[reports]") {
  CHECK(std::string(frame_kind_name(FrameKind::interp)) == "interp");
  CHECK(std::string(frame_kind_name(FrameKind::jit)) == "jit");
  CHECK(std::string(frame_kind_name(FrameKind::inlined)) == "inlined");
  CHECK(std::string(frame_kind_name(FrameKind::stub)) == "stub");
  CHECK(std::string(frame_kind_name(FrameKind::native)) == "native");
  CHECK(std::string(event_type_name(EventType::ExecutionSample)) == "ExecutionSample");
  CHECK(std::string(event_type_name(EventType::NativeMethodSample)) == "NativeMethodSample");
  CHECK(std::string(event_type_name(EventType::SafepointLatency)) == "SafepointLatency");
  CHECK(std::string(event_type_name(EventType::FailedSample)) == "FailedSample");
}

TEST_CASE("reports: the stack-trace repository interns each distinct trace once", "[reports]") {
  StackTraceRepository repo;
  uint32_t a = repo.intern(kA), b = repo.intern(kB);
  CHECK(a != b);
  CHECK(repo.intern(kA) == a);
  CHECK(repo.intern(StackTrace(kA)) == a);
  StackTrace other_kind = kA;
  other_kind[0].kind = FrameKind::interp;  // same function and line, other kind: distinct
  uint32_t c = repo.intern(other_kind);
  CHECK(c != a);
  StackTrace other_bci = kA;
  other_bci[0].bci = 13;
  CHECK(repo.intern(other_bci) != a);
  CHECK(repo.intern(StackTrace{}) == repo.intern(StackTrace{}));
  CHECK(repo.size() == 5);
  CHECK(repo.get(a) == kA);
  CHECK(repo.get(c) == other_kind);
}

TEST_CASE("reports: nearest-rank percentiles and microsecond formatting", "[reports]") {
  CHECK(percentiles({}).n == 0);
  Percentiles one = percentiles({7});
  CHECK((one.n == 1 && one.p50 == 7 && one.p99 == 7 && one.max == 7));
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  Percentiles h = percentiles(v);
  CHECK((h.p50 == 50 && h.p99 == 99 && h.max == 100 && h.n == 100));
  v.clear();
  for (uint64_t i = 1; i <= 200; ++i) v.push_back(i);
  Percentiles t = percentiles(v);
  CHECK((t.p50 == 100 && t.p99 == 198 && t.max == 200));
  Percentiles two = percentiles({500, 1500});  // ranks ceil(1) = 1 and ceil(1.98) = 2
  CHECK((two.p50 == 500 && two.p99 == 1500));

  CHECK(format_us(0) == "0.00 µs");
  CHECK(format_us(123) == "0.12 µs");
  CHECK(format_us(4200) == "4.20 µs");
  CHECK(format_us(42000) == "42.0 µs");
  CHECK(format_us(420000) == "420 µs");
  CHECK(format_us(12345678) == "12346 µs");
}

TEST_CASE("reports: a name that is not UTF-8 makes valid JSON in every format", "[reports]") {
  // A Mini program names its files and functions with any bytes; nlohmann-json would throw
  // on such a string (type_error 316) unless told to replace it.
  Profile p = two_sampler_profile();
  p.program = "odd\xFF.mini";
  Event e = sample_event(SamplerId::cooperative, 11, p.stacks.intern({F("f\xC3(", 7, 1, FrameKind::jit)}));
  p.events.push_back(e);
  const std::string odd = "f\xEF\xBF\xBD(";
  std::string jsonl = jsonl_of(p);
  CHECK(parse_json(split_lines(jsonl).back())["stack"][0]["function"].str == odd);
  CHECK(python_accepts(jsonl, true));
  Json speedscope = parse_json(speedscope_of(p));
  CHECK(speedscope["name"].str == "odd\xEF\xBF\xBD.mini");
  bool named = false;
  for (const Json& f : speedscope["shared"]["frames"].items) named |= f["name"].str == odd;
  CHECK(named);
  Json flame = parse_json(html_data(html_of(p)));
  CHECK(flame["program"].str == "odd\xEF\xBF\xBD.mini");
  named = false;
  for (const Json& n : flame["names"].items) named |= n.str == odd;
  CHECK(named);
  std::ostringstream stats;
  write_stats_json(p, stats);
  CHECK(parse_json(stats.str())["program"].str == "odd\xEF\xBF\xBD.mini");
}

TEST_CASE("reports: text report accounting adds up, by reason, per sampler", "[reports]") {
  std::string text = text_of(two_sampler_profile());
  INFO(text);
  CHECK(text.rfind("minivm profile: prog.mini\n", 0) == 0);
  CHECK(has_line(text, "interval 1 ms, run time 10.5 ms, samplers cooperative, classical, all on the same "
                       "interruptions"));
  // Several samplers: one accounting row each, in Profile::samplers order, with reasons.
  CHECK(table_rows(text, "Accounting per sampler") ==
        std::vector<std::string>{
            "cooperative 10 8 2 0 2 all accounted for; biased: frame_not_found 1, pc_in_stub 1; dropped: ring_full 2",
            "classical 10 7 0 3 0 all accounted for; failed: pc_in_stub 2, unknown_pc 1"});

  std::string co = section_of(text_of(only(two_sampler_profile(), SamplerId::cooperative)), "cooperative");
  CHECK(has_line(co, "interruptions 10"));
  CHECK(has_line(co, "samples 8 80.0% (7 execution, 1 native)"));
  CHECK(has_line(co, "of which biased 2 20.0% (top frame not where the signal landed: see the reasons)"));
  CHECK(has_line(co, "frame_not_found 1 10.0%"));
  CHECK(has_line(co, "pc_in_stub 1 10.0%"));
  CHECK(has_line(co, "failed 0 0.0%"));
  CHECK(has_line(co, "dropped 2 20.0%"));
  CHECK(has_line(co, "ring_full 2 20.0%"));
  CHECK(has_line(co, "8 samples + 0 failed + 2 dropped = 10 = interruptions: all accounted for"));

  std::string cl = section_of(text_of(only(two_sampler_profile(), SamplerId::classical)), "classical");
  CHECK(has_line(cl, "samples 7 70.0% (6 execution, 1 native)"));
  CHECK(has_line(cl, "of which biased 0 0.0% (top frame not where the signal landed: see the reasons)"));
  CHECK(has_line(cl, "failed 3 30.0%"));
  CHECK(has_line(cl, "pc_in_stub 2 20.0%"));
  CHECK(has_line(cl, "unknown_pc 1 10.0%"));
  CHECK(has_line(cl, "dropped 0 0.0%"));
  CHECK(has_line(cl, "7 samples + 3 failed + 0 dropped = 10 = interruptions: all accounted for"));
}

TEST_CASE("reports: several samplers: what they share once, top lines side by side, intervals", "[reports]") {
  std::string text = text_of(two_sampler_profile());
  INFO(text);
  // The stop is shared: the sampler with the most samples shows it (cooperative, n=10);
  // the latency is that of the requests served at a poll, which only cooperative waits for.
  CHECK(has_line(text, "thread stopped p50 5.00 µs p99 150 µs max 150 µs (n=10), per sample: in the signal "
                       "handler or held"));
  CHECK(has_line(text, "safepoint latency p50 2.00 µs p99 5.00 µs max 5.00 µs (n=7), signal -> next poll: "
                       "what cooperative wait; the others take the stack at once"));
  // cpu sorted: 0.6 0.7 0.9 1.1 1.9 4.1 4.9 µs: p50 = rank 4.
  CHECK(has_line(text, "on a CPU p50 1.10 µs p99 4.90 µs max 4.90 µs (n=7), of each latency the thread's time on a "
                       "CPU (the rest it waited for one)"));
  CHECK(text.find("== sampler:") == std::string::npos);
  CHECK(table_rows(text, "Top lines by self") ==
        std::vector<std::string>{"compute:19 50.0%* 57.1%*", "fib:3 25.0% 28.6%", "sqrt (native) 12.5% 14.3%",
                                 "main:28 12.5% -"});
  CHECK(has_line(text, "cooperative compute:19 50.0% 21.5-78.5% of 8"));
  CHECK(has_line(text, "classical compute:19 57.1% 25.0-84.2% of 7"));
  CHECK(has_line(text, "Few samples: classical has only 7, so a share of 50% is anywhere in 15.8-75.0%. For "
                       "more, run longer (the programs of examples/, not those of its lessons/, take -D ROUNDS=N) "
                       "or sample more often (--interval=500us, half of this run's)."));
  CHECK(text.find("minivm help reasons") != std::string::npos);
}

TEST_CASE("reports: the few-samples note suggests an interval the run did not already use", "[reports]") {
  // Half the run's interval, in a unit --interval takes; none at the flag's least value.
  auto note = [](uint64_t interval_ns) {
    Profile p = two_sampler_profile();
    p.interval_ns = interval_ns;
    std::string text = text_of(p);
    size_t at = text.find("Few samples:");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  CHECK(note(100'000).find("(--interval=50us, half of this run's)") != std::string::npos);
  CHECK(note(4'000'000).find("(--interval=2ms, half of this run's)") != std::string::npos);
  CHECK(note(15'000).find("(--interval=10us, half of this run's)") != std::string::npos);
  CHECK(note(10'000).find("--interval") == std::string::npos);
  CHECK(note(10'000).find("take -D ROUNDS=N).") != std::string::npos);
  // A run that got under half the interruptions it asked for: no shorter interval.
  Profile starved = two_sampler_profile();
  starved.schedule.visits_due = 40;
  starved.schedule.visits_missed = 30;
  std::string text = text_of(starved);
  CHECK(text.find("--interval=500us") == std::string::npos);
  CHECK(text.find("a shorter --interval would not help, the run got only 25.0% of the interruptions it asked for "
                  "(the rate line says why)") != std::string::npos);
}

TEST_CASE("reports: the Wilson interval of a share", "[reports]") {
  Interval i = wilson95(50, 100);
  CHECK(i.low == Approx(40.383).epsilon(1e-3));
  CHECK(i.high == Approx(59.617).epsilon(1e-3));
  CHECK(wilson95(0, 10).low == 0);
  CHECK(wilson95(10, 10).high == Approx(100));
  CHECK(format_interval(wilson95(21, 30)) == "52.1-83.3%");
}

// A stretch without a poll of 40 requests, 4 kept (weights 10 each: stacks A, A, A, B) and
// 36 left out (ring_full, each a DroppedSample), then 2 requests kept alone (weight 1, B).
Profile weighted_profile() {
  Profile p;
  p.program = "prog.mini";
  p.samplers = {SamplerId::cooperative};
  p.interval_ns = 1000000;
  p.duration_ns = 42000000;
  uint32_t a = p.stacks.intern(kA), b = p.stacks.intern(kB);
  const SamplerId co = SamplerId::cooperative;
  uint64_t id = 1;
  for (uint32_t stack : {a, a, a, b}) {
    Event e = sample_event(co, id, stack);
    e.count = 10;
    p.add_sample(e);
    id += 10;
  }
  Event dropped;
  dropped.type = EventType::DroppedSample;
  dropped.sampler = co;
  dropped.sample = 2;
  dropped.thread = 1;
  dropped.time_ns = 2000000;
  dropped.reason = Reason::ring_full;
  p.events.push_back(dropped);
  for (uint64_t k = 0; k < 2; k++) p.add_sample(sample_event(co, 41 + k, b));
  SamplerStats& s = p.stats[co];
  s.interruptions = 42;
  s.samples = 6;
  s.represented = 36;
  s.dropped = {{Reason::ring_full, 36}};
  return p;
}

TEST_CASE("reports: samples kept from a long stretch count by their weight", "[reports]") {
  Profile p = weighted_profile();
  std::string text = text_of(p);
  INFO(text);
  CHECK(has_line(text, "6 samples + 0 failed + 36 dropped = 42 = interruptions: all accounted for"));
  CHECK(has_line(text, "weighted: the 6 samples stand for 42 requests (each kept from a stretch without a poll "
                       "counts for its share of the stretch), and the tables count them so"));
  CHECK(text.find("sample events recorded, but the counters say") == std::string::npos);
  CHECK(has_line(text, "Shares are of this sampler's 42 samples, weighted (6 taken)."));
  // compute:19 has 30 of 42 by weight; its interval rests on the 6 samples taken, not 42.
  CHECK(has_line(text, "compute:19 71.4% " + format_interval(share_interval(30, 42, 6))));
  CHECK(share_interval(30, 42, 6).low < wilson95(30, 42).low);
  CHECK(format_interval(share_interval(21, 30, 30)) == format_interval(wilson95(21, 30)));
  CHECK(collapsed_of(p) == "main;compute 30\nmain;fib;fib;fib 12\n");
  // The stream's line of a weighted sample says how many it stands for; a drop has its own.
  auto lines = split_lines(jsonl_of(p));
  CHECK(lines[0] ==
        "{\"event\":\"ExecutionSample\",\"sampler\":\"cooperative\",\"sample\":1,\"thread\":1,"
        "\"time_ns\":1000000,\"biased\":false,\"count\":30,\"stack\":[{\"function\":\"compute\",\"line\":19,"
        "\"bci\":12,\"kind\":\"jit\"},{\"function\":\"main\",\"line\":30,\"bci\":40,\"kind\":\"interp\"}]}");
  CHECK(lines[2] == "{\"event\":\"DroppedSample\",\"sampler\":\"cooperative\",\"sample\":2,\"thread\":1,"
                    "\"time_ns\":2000000,\"reason\":\"ring_full\"}");
  CHECK(std::string(event_type_name(EventType::DroppedSample)) == "DroppedSample");

  // Beside the oracle (the summary of several samplers), the top line's row says both
  // counts: its share by weight, its interval on the samples taken.
  Profile both = weighted_profile();
  both.samplers = {SamplerId::cooperative, SamplerId::oracle};
  uint32_t a = both.stacks.intern(kA), b = both.stacks.intern(kB);
  for (uint64_t id = 1; id <= 42; id++) both.add_sample(sample_event(SamplerId::oracle, id, id <= 30 ? a : b));
  both.stats[SamplerId::oracle].interruptions = 42;
  both.stats[SamplerId::oracle].samples = 42;
  std::string summary = text_of(both);
  INFO(summary);
  CHECK(has_line(summary, "cooperative compute:19 71.4% " + format_interval(share_interval(30, 42, 6)) +
                              " of 42 by weight, 6 taken"));
  CHECK(has_line(summary, "oracle compute:19 71.4% " + format_interval(wilson95(30, 42)) + " of 42"));
}

TEST_CASE("reports: --debug-info=safepoints is said to limit every sampler, the oracle too", "[reports]") {
  Profile p = one_sampler_profile();
  CHECK(text_of(p).find("--debug-info=safepoints") == std::string::npos);
  p.debug_info_at_safepoints = true;
  CHECK(text_of(p).find("the oracle is only as exact as the debug info") != std::string::npos);
  CHECK(text_of(two_sampler_profile()).find("--debug-info") == std::string::npos);
}

TEST_CASE("reports: text report percentiles of suspension and safepoint latency", "[reports]") {
  std::string co = text_of(only(two_sampler_profile(), SamplerId::cooperative));
  std::string cl = text_of(only(two_sampler_profile(), SamplerId::classical));
  INFO(co + cl);
  // cooperative suspension: 1..9 µs and 150 µs: p50 = rank 5, p99 = rank 10.
  CHECK(has_line(co, "thread stopped (in the handler or held), per sample p50 5.00 µs p99 150 µs max 150 µs (n=10)"));
  // latency sorted: 0.8 1.0 1.2 2.0 3.0 4.2 5.0 µs: p50 = rank 4, p99 = rank 7.
  CHECK(has_line(co, "safepoint latency (signal -> its next poll) p50 2.00 µs p99 5.00 µs max 5.00 µs (n=7)"));
  CHECK(has_line(co, "of which the thread was on a CPU p50 1.10 µs p99 4.90 µs max 4.90 µs (n=7)"));
  CHECK(has_line(cl, "thread stopped (in the handler or held), per sample p50 0.50 µs p99 1.50 µs max 1.50 µs (n=2)"));
  CHECK(has_line(cl, "safepoint latency not applicable: classical takes the stack without waiting for a poll"));
}

TEST_CASE("reports: text report shares by function and line, self and total", "[reports]") {
  std::string text = text_of(two_sampler_profile());
  INFO(text);
  std::string co = text_of(only(two_sampler_profile(), SamplerId::cooperative));
  CHECK(has_line(co, "Shares are of this sampler's 8 samples."));
  CHECK(table_rows(co, "Top lines by self, each share") ==
        std::vector<std::string>{"fib:3 25.0% 7.1-59.1%", "main:28 12.5% 2.2-47.1%"});
  CHECK(has_line(co, "compute:19 50.0% 21.5-78.5%"));
  // Self: compute 4 (A x3 + biased A); fib 2; main 1 (biased D) before sqrt 1 (more total).
  CHECK(table_rows(co, "Functions by self") ==
        std::vector<std::string>{"4 50.0% 5 62.5% compute", "2 25.0% 2 25.0% fib",
                                 "1 12.5% 8 100.0% main", "1 12.5% 1 12.5% sqrt (native)"});
  // Total: fib recurses three deep but counts once per sample.
  CHECK(table_rows(co, "Functions by total") ==
        std::vector<std::string>{"8 100.0% 1 12.5% main", "5 62.5% 4 50.0% compute",
                                 "2 25.0% 2 25.0% fib", "1 12.5% 1 12.5% sqrt (native)"});
  CHECK(table_rows(co, "Lines by self") ==
        std::vector<std::string>{"4 50.0% 4 50.0% compute:19", "2 25.0% 2 25.0% fib:3",
                                 "1 12.5% 1 12.5% main:28", "1 12.5% 1 12.5% sqrt (native)"});
  CHECK(table_rows(co, "Lines by total") ==
        std::vector<std::string>{"5 62.5% 0 0.0% main:30", "4 50.0% 4 50.0% compute:19",
                                 "2 25.0% 2 25.0% fib:3", "2 25.0% 0 0.0% fib:4",
                                 "2 25.0% 0 0.0% main:31", "1 12.5% 1 12.5% main:28",
                                 "1 12.5% 1 12.5% sqrt (native)", "1 12.5% 0 0.0% compute:21"});
  std::string cl = text_of(only(two_sampler_profile(), SamplerId::classical));
  CHECK(table_rows(cl, "Functions by self") ==
        std::vector<std::string>{"4 57.1% 5 71.4% compute", "2 28.6% 2 28.6% fib",
                                 "1 14.3% 1 14.3% sqrt (native)"});
}

TEST_CASE("reports: text report truncates tables at `top` and says what it left out", "[reports]") {
  ReportOptions o;
  o.top = 2;
  std::string co = text_of(one_sampler_profile(), o);
  INFO(co);
  CHECK(has_line(co, "Functions by self (samples with it on top of the stack), top 2 of 4:"));
  CHECK(has_line(co, "... 2 more functions with 2 self samples (25.0%)"));
  CHECK(has_line(co, "... 6 more lines"));
  CHECK(table_rows(co, "Functions by self").size() == 3);
}

TEST_CASE("reports: text report is honest about missing samples and bad accounting", "[reports]") {
  SECTION("no sampler at all") {
    Profile p;
    p.program = "empty.mini";
    std::string t = text_of(p);
    CHECK(has_line(t, "No samples: no sampler ran, so nothing was recorded."));
  }
  SECTION("a run shorter than one interval") {
    Profile p;
    p.program = "short.mini";
    p.samplers = {SamplerId::cooperative};
    p.interval_ns = 1000000;
    p.duration_ns = 300000;
    p.stats[SamplerId::cooperative];
    std::string t = text_of(p);
    INFO(t);
    CHECK(has_line(t, "No samples: the program was never interrupted (it ran for 300 µs, less than one "
                      "sampling interval of 1 ms)."));
    CHECK(has_line(t, "thread stopped (in the handler or held), per sample none recorded"));
    CHECK(t.find("Functions by") == std::string::npos);
  }
  SECTION("every interruption failed") {
    Profile p;
    p.samplers = {SamplerId::classical};
    p.stats[SamplerId::classical].interruptions = 3;
    p.stats[SamplerId::classical].failed[Reason::unknown_pc] = 3;
    for (uint64_t i = 1; i <= 3; ++i) p.events.push_back(failed_event(SamplerId::classical, i, Reason::unknown_pc));
    std::string t = text_of(p);
    INFO(t);
    CHECK(has_line(t, "0 samples + 3 failed + 0 dropped = 3 = interruptions: all accounted for"));
    CHECK(has_line(t, "No samples: none of the 3 interruptions produced a stack (see above)."));
  }
  SECTION("counters that do not add up are flagged") {
    Profile p = one_sampler_profile();
    p.stats[SamplerId::cooperative].interruptions = 12;
    std::string t = text_of(p);
    CHECK(has_line(t, "8 samples + 0 failed + 2 dropped = 10, but 12 interruptions: 2 NOT accounted for"));
    p.stats[SamplerId::cooperative].interruptions = 9;
    t = text_of(p);
    CHECK(has_line(t, "8 samples + 0 failed + 2 dropped = 10, more than the 9 interruptions counted (by 1)"));
    p.stats[SamplerId::cooperative].samples = 9;
    t = text_of(p);
    CHECK(has_line(t, "note: 8 sample events recorded, but the counters say 9 samples; the tables below "
                      "use the 8 events"));
  }
  SECTION("one sampler: no side-by-side tables") {
    std::string t = text_of(one_sampler_profile());
    CHECK(t.find("% of each sampler's samples") == std::string::npos);
    CHECK(has_line(t, "interval 1 ms, run time 10.5 ms, sampler cooperative"));
  }
}

TEST_CASE("reports: collapsed stacks, root first, one line per distinct stack", "[reports]") {
  SECTION("two samplers: the sampler is the root frame") {
    CHECK(collapsed_of(two_sampler_profile()) ==
          "cooperative;main 1\n"
          "cooperative;main;compute 4\n"
          "cooperative;main;compute;sqrt (native) 1\n"
          "cooperative;main;fib;fib;fib 2\n"
          "classical;main;compute 4\n"
          "classical;main;compute;sqrt (native) 1\n"
          "classical;main;fib;fib;fib 2\n");
  }
  SECTION("one sampler: no prefix") {
    CHECK(collapsed_of(one_sampler_profile()) ==
          "main 1\n"
          "main;compute 4\n"
          "main;compute;sqrt (native) 1\n"
          "main;fib;fib;fib 2\n");
  }
  SECTION("--profile-lines") {
    ReportOptions o;
    o.lines = true;
    CHECK(collapsed_of(one_sampler_profile(), o) ==
          "main:28 1\n"
          "main:30;compute:19 4\n"
          "main:30;compute:21;sqrt (native) 1\n"
          "main:31;fib:4;fib:4;fib:3 2\n");
  }
  SECTION("frame names never contain ';' or spaces; empty stacks are named") {
    Profile p;
    p.samplers = {SamplerId::cooperative};
    uint32_t odd = p.stacks.intern({F("a b;c", 1, 0, FrameKind::jit), F("", 2, 0, FrameKind::interp)});
    uint32_t none = p.stacks.intern({});
    p.events.push_back(sample_event(SamplerId::cooperative, 1, odd));
    p.events.push_back(sample_event(SamplerId::cooperative, 2, none));
    CHECK(collapsed_of(p) == "[no_frames] 1\n[unknown];a_b_c 1\n");
  }
}

TEST_CASE("reports: jsonl is one event per line, byte for byte the DESIGN.md schema", "[reports]") {
  Profile p = two_sampler_profile();
  std::string out = jsonl_of(p);
  auto lines = split_lines(out);
  REQUIRE(lines.size() == p.events.size());
  CHECK(out.back() == '\n');
  const std::string stackA =
      "[{\"function\":\"compute\",\"line\":19,\"bci\":12,\"kind\":\"jit\"},"
      "{\"function\":\"main\",\"line\":30,\"bci\":40,\"kind\":\"interp\"}]";
  CHECK(lines[0] ==
        "{\"event\":\"ExecutionSample\",\"sampler\":\"cooperative\",\"sample\":1,\"thread\":1,"
        "\"time_ns\":1000000,\"biased\":false,\"stack\":" + stackA + "}");
  CHECK(lines[1] ==
        "{\"event\":\"SafepointLatency\",\"sampler\":\"cooperative\",\"sample\":1,\"thread\":1,"
        "\"time_ns\":1000000,\"latency_ns\":4200,\"cpu_ns\":3900,\"stack\":" + stackA + "}");
  CHECK(lines[2] ==
        "{\"event\":\"ExecutionSample\",\"sampler\":\"classical\",\"sample\":1,\"thread\":1,"
        "\"time_ns\":1000000,\"biased\":false,\"stack\":" + stackA + "}");
  CHECK(lines[6] ==
        "{\"event\":\"FailedSample\",\"sampler\":\"classical\",\"sample\":3,\"thread\":1,\"reason\":\"pc_in_stub\"}");
  CHECK(lines[11] ==
        "{\"event\":\"NativeMethodSample\",\"sampler\":\"cooperative\",\"sample\":6,\"thread\":1,"
        "\"time_ns\":6000000,\"biased\":false,\"stack\":["
        "{\"function\":\"sqrt\",\"line\":0,\"bci\":-1,\"kind\":\"native\"},"
        "{\"function\":\"compute\",\"line\":21,\"bci\":20,\"kind\":\"jit\"},"
        "{\"function\":\"main\",\"line\":30,\"bci\":40,\"kind\":\"interp\"}]}");
  CHECK(lines[13] ==
        "{\"event\":\"ExecutionSample\",\"sampler\":\"cooperative\",\"sample\":7,\"thread\":1,"
        "\"time_ns\":7000000,\"biased\":true,\"reason\":\"pc_in_stub\",\"stack\":["
        "{\"function\":\"main\",\"line\":28,\"bci\":2,\"kind\":\"interp\"}]}");
  // Every line parses, in emission order, with the event's type and sampler.
  for (size_t i = 0; i < lines.size(); ++i) {
    Json j = parse_json(lines[i]);
    CHECK(j["event"].str == event_type_name(p.events[i].type));
    CHECK(j["sampler"].str == sampler_name(p.events[i].sampler));
    CHECK(j["sample"].u64() == p.events[i].sample);
  }
  CHECK(python_accepts(out, true));
  CHECK(jsonl_of(Profile{}).empty());
}

TEST_CASE("reports: speedscope has one sampled profile per sampler and agrees with collapsed", "[reports]") {
  for (bool lines : {false, true}) {
    ReportOptions o;
    o.lines = lines;
    Profile p = two_sampler_profile();
    std::string out = speedscope_of(p, o);
    INFO(out);
    Json doc = parse_json(out);
    CHECK(doc["$schema"].str == "https://www.speedscope.app/file-format-schema.json");
    CHECK(doc["exporter"].str == "minivm");
    CHECK(doc["name"].str == "prog.mini");
    CHECK(doc["activeProfileIndex"].u64() == 0);
    REQUIRE(doc["profiles"].items.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      const Json& prof = doc["profiles"][i];
      CHECK(prof["type"].str == "sampled");
      CHECK(prof["name"].str == sampler_name(p.samplers[i]));
      CHECK(prof["unit"].str == "none");
      CHECK(prof["endValue"].u64() == prof["samples"].items.size());
      CHECK(fold_speedscope(doc, prof) == fold_stacks(p, p.samplers[i], lines));
    }
    // The frames table is shared and has no duplicates.
    std::set<std::string> names;
    for (const Json& f : doc["shared"]["frames"].items) CHECK(names.insert(f["name"].str).second);
    if (lines) CHECK(names.count("compute:19") == 1);
    CHECK(python_accepts(out, false));
  }
  Json empty = parse_json(speedscope_of(Profile{}));
  CHECK(empty["profiles"].items.empty());
}

TEST_CASE("reports: the HTML flame graph is self-contained and its data agrees with collapsed", "[reports]") {
  for (bool lines : {false, true}) {
    ReportOptions o;
    o.lines = lines;
    Profile p = two_sampler_profile();
    std::string html = html_of(p, o);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("<script src") == std::string::npos);
    CHECK(html.find("id=\"sampler\"") != std::string::npos);  // the sampler selector
    CHECK(html.find("id=\"search\"") != std::string::npos);
    CHECK(html.find("id=\"reset\"") != std::string::npos);
    CHECK(node_accepts_script(html));
    std::string data = html_data(html);
    CHECK(python_accepts(data, false));
    Json d = parse_json(data);
    CHECK(d["program"].str == "prog.mini");
    CHECK(d["lines"].boolean == lines);
    REQUIRE(d["samplers"].items.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      const Json& s = d["samplers"][i];
      CHECK(s["name"].str == sampler_name(p.samplers[i]));
      CHECK(s["interruptions"].u64() == 10);
      CHECK(s["root"]["f"].number == -1);
      CHECK(s["samples"].u64() == s["root"]["v"].u64());
      CHECK(fold_html_tree(d, s["root"]) == fold_stacks(p, p.samplers[i], lines));
    }
    CHECK(d["samplers"][0]["biased"].u64() == 2);
    CHECK(d["samplers"][1]["failed"].u64() == 3);
    CHECK(d["samplers"][0]["dropped"].u64() == 2);
  }
}

TEST_CASE("reports: HTML survives hostile names", "[reports]") {
  Profile p = one_sampler_profile();
  p.program = "</script><b>x&y\".mini";
  std::string html = html_of(p);
  // The embedded JSON ends at the real closing tag and round-trips the name.
  Json d = parse_json(html_data(html));
  CHECK(d["program"].str == p.program);
  CHECK(html.find("<title>minivm profile: &lt;/script&gt;&lt;b&gt;x&amp;y&quot;.mini</title>") !=
        std::string::npos);
}

TEST_CASE("reports: write_profile_file picks the writer by extension", "[reports]") {
  Profile p = two_sampler_profile();
  ReportOptions o;
  TempDir dir;
  std::string err;
  struct Case {
    const char* name;
    std::string expected;
  } cases[] = {
      {"p.txt", text_of(p, o)},       {"p.collapsed", collapsed_of(p, o)},
      {"p.json", speedscope_of(p, o)}, {"p.html", html_of(p, o)},
      {"p.jsonl", jsonl_of(p)},        {"P.HTML", html_of(p, o)},
      {"p.folded", collapsed_of(p, o)},
  };
  for (const auto& c : cases) {
    auto path = (dir.path / c.name).string();
    INFO(path);
    REQUIRE(write_profile_file(p, path, o, err));
    CHECK(slurp(path) == c.expected);
  }

  auto bad = (dir.path / "p.xyz").string();
  CHECK_FALSE(write_profile_file(p, bad, o, err));
  CHECK(err == "--profile-out " + bad +
                   ": unknown extension '.xyz'; use .txt (text report), .collapsed or .folded (folded stacks), "
                   ".json (speedscope), .html (flame graph), .jsonl (one event per line), .jfr (JFR recording) or .pprof or .pb.gz (pprof profile)");
  CHECK_FALSE(std::filesystem::exists(bad));  // nothing written for an unknown format

  auto bare = (dir.path / "profile").string();
  CHECK_FALSE(write_profile_file(p, bare, o, err));
  CHECK(err.find("the file has no extension") != std::string::npos);
  auto dotted_dir = (dir.path / "d.json" / "profile").string();
  CHECK_FALSE(write_profile_file(p, dotted_dir, o, err));
  CHECK(err.find("no extension") != std::string::npos);

  CHECK_FALSE(write_profile_file(p, (dir.path / "missing" / "p.txt").string(), o, err));
  CHECK(err.find("cannot write") != std::string::npos);
}

TEST_CASE("reports: a format is named by --format or by extension, from one table", "[reports]") {
  CHECK(profile_format_named("folded") == OutputFormat::collapsed);
  CHECK(profile_format_named("COLLAPSED") == OutputFormat::collapsed);
  CHECK(profile_format_named("json") == OutputFormat::json);
  CHECK_FALSE(profile_format_named("svg").has_value());
  CHECK_FALSE(profile_format_named("").has_value());
  std::string err;
  CHECK(output_format("dir.d/p.folded", err) == OutputFormat::collapsed);
  CHECK(output_format("dir.d/p.pb.gz", err) == OutputFormat::pprof);  // the longest extension named
  CHECK(output_format("P.PB.GZ", err) == OutputFormat::pprof);
  CHECK(output_format("p.pprof", err) == OutputFormat::pprof);
  CHECK_FALSE(output_format("p.gz", err).has_value());
  CHECK_FALSE(output_format("pb.gz/p", err).has_value());
  CHECK_FALSE(output_format("p.", err).has_value());
  CHECK(err.find("the file has no extension") != std::string::npos);
  for (const ProfileFormatInfo& f : kProfileFormats) {
    INFO(f.name);
    CHECK(profile_format_named(f.name) == f.format);
    CHECK(profile_format_choices(true).find(std::string(".") + f.name + " ") != std::string::npos);
  }
}

TEST_CASE("reports: a stack the depth limit cut is marked truncated in every format", "[reports]") {
  Profile p;
  p.program = "prog.mini";
  p.samplers = {SamplerId::classical};
  uint32_t cut = p.stacks.intern(kB, true), whole = p.stacks.intern(kB);
  CHECK(cut != whole);
  CHECK(p.stacks.truncated(cut));
  CHECK_FALSE(p.stacks.truncated(whole));
  CHECK(p.stacks.intern(kB, true) == cut);
  p.events = {sample_event(SamplerId::classical, 1, cut), sample_event(SamplerId::classical, 2, whole)};
  SamplerStats& s = p.stats[SamplerId::classical];
  s.interruptions = s.samples = 2;
  s.truncated = 1;
  // Folded stacks: the cut one has [truncated] as its root; the whole one does not.
  CHECK(collapsed_of(p) == "[truncated];main;fib;fib;fib 1\nmain;fib;fib;fib 1\n");
  // .jsonl: the cut sample says so, the whole one carries no mark.
  std::vector<std::string> lines = split_lines(jsonl_of(p));
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0].find("\"biased\":false,\"truncated\":true,\"stack\":[") != std::string::npos);
  CHECK(lines[1].find("truncated") == std::string::npos);
  for (bool with_lines : {false, true}) {
    ReportOptions o;
    o.lines = with_lines;
    Json doc = parse_json(speedscope_of(p, o));
    CHECK(fold_speedscope(doc, doc["profiles"][0]) == fold_stacks(p, SamplerId::classical, with_lines));
    Json d = parse_json(html_data(html_of(p, o)));
    // (The tree's nodes all carry a line with --profile-lines; [truncated] has none.)
    if (!with_lines) CHECK(fold_html_tree(d, d["samplers"][0]["root"]) == fold_stacks(p, SamplerId::classical, false));
    std::set<std::string> roots;
    for (const Json& c : d["samplers"][0]["root"]["c"].items) roots.insert(d["names"][c["f"].u64()].str);
    CHECK(roots == std::set<std::string>{"[truncated]", "main"});
    CHECK(fold_stacks(p, SamplerId::classical, with_lines).begin()->first.rfind("[truncated];main", 0) == 0);
  }
  // The text report counts them.
  CHECK(text_of(p).find("of which truncated") != std::string::npos);
}

TEST_CASE("reports: a profile dumped while running counts what is in flight", "[reports]") {
  Profile p = one_sampler_profile();
  SamplerStats& s = p.stats[SamplerId::cooperative];
  s.interruptions += 3;
  CHECK_FALSE(all_accounted(s));
  s.in_flight = 3;
  CHECK(all_accounted(s));
  std::string text = text_of(p);
  CHECK(has_line(text, "in flight 3 23.1% (sent, not yet ended when this profile was dumped)"));
  CHECK(has_line(text, "8 samples + 0 failed + 2 dropped + 3 in flight = 13 = interruptions: all accounted for"));
}

namespace {

// Threads at 500 µs beside classical, which held them: 2,400 visits due fell in the 600
// periods the sampler thread missed, 100 found a thread blocked, and of 1,500 more
// interruptions 500 were signals coalesced.
Profile throttled_profile() {
  Profile p = two_sampler_profile();
  p.interval_ns = 500'000;
  for (auto& [s, st] : p.stats) {  // failures, so that every sampler's accounting stays whole
    st.interruptions += 1500;
    st.failed[Reason::signal_coalesced] += 500;
    st.failed[Reason::not_in_java] += 1000;
  }
  uint64_t interruptions = p.stats.begin()->second.interruptions;
  p.stats[SamplerId::classical].suspension_ns = {900'000, 1'100'000, 1'000'000};
  p.schedule.periods = 1000;
  p.schedule.periods_missed = 600;
  p.schedule.visits_due = 2400 + 100 + interruptions;
  p.schedule.visits_missed = 2400;
  p.schedule.not_running = 100;
  p.schedule.period_ns = {2'000'000, 1'500'000, 2'500'000};
  return p;
}

}  // namespace

TEST_CASE("reports: the interruption rate against the one asked for, and why it fell short", "[reports]") {
  Profile p = throttled_profile();
  SamplingRate r = sampling_rate(p);
  uint64_t interruptions = p.stats.begin()->second.interruptions;
  CHECK(r.asked == 2400 + interruptions);
  CHECK(r.missed == 2400);
  CHECK(r.coalesced == 500);
  CHECK(r.achieved == interruptions - 500);
  CHECK(r.achieved + r.missed + r.coalesced + r.other == r.asked);
  CHECK(r.short_of_asked());
  CHECK(classical_throttles(p, r));
  std::string text = text_of(p);
  INFO(text);
  CHECK(text.find(fmt::format("  rate: {} of {} interruptions asked for", r.achieved, r.asked)) != std::string::npos);
  CHECK(text.find(fmt::format("per running thread against 2000/s")) != std::string::npos);
  // Largest cause first, each with its numbers.
  CHECK(text.find("    short by: 2400 in 600 periods the sampler thread missed, still busy when their time came "
                  "(a period's visits took p50 2000 µs, p99 2500 µs against the 500 µs interval; for classical it "
                  "waits until each thread's handler runs, then walks it, holding it p50 1000 µs, p99 1100 µs)\n") != std::string::npos);
  CHECK(text.find("              500 signals not sent, signal_coalesced: the previous one was still pending") !=
        std::string::npos);
  CHECK(text.find("classical held the threads the others would have interrupted: run it on its own "
                  "(--sampler=classical)") != std::string::npos);
  Json data = parse_json(html_data(html_of(p)));
  CHECK(data["rate"].str.rfind(fmt::format("{} of {} interruptions asked for", r.achieved, r.asked), 0) == 0);
  CHECK(data["rate_short"][0].str.rfind("2400 in 600 periods the sampler thread missed", 0) == 0);

  // The rate asked for, achieved: one line, no cause, no hint.
  Profile full = two_sampler_profile();
  full.interval_ns = 1'000'000;
  full.schedule.periods = full.schedule.visits_due = full.stats.begin()->second.interruptions + 3;
  full.schedule.not_running = 3;
  std::string plain = text_of(full);
  INFO(plain);
  CHECK(plain.find("  rate: ") != std::string::npos);
  CHECK(plain.find("short by") == std::string::npos);
  CHECK(plain.find("run it on its own") == std::string::npos);
  // Nothing asked (a profile without a schedule, or a program never running): no rate line.
  CHECK(text_of(two_sampler_profile()).find("  rate: ") == std::string::npos);
}

TEST_CASE("reports: collections and code unloading in the text report, byte for byte", "[reports]") {
  Profile p = one_sampler_profile();
  CHECK(text_of(p).find("collections:") == std::string::npos);  // none happened: no line
  CHECK(text_of(p).find("code unloading:") == std::string::npos);
  p.collections = three_collections();  // support.h
  p.unloading = CodeUnloading{5, 4, 3, 2, 1};
  std::string text = text_of(p);
  CHECK(text.find("\n  collections: 3 (2 young, 1 full), paused 7 ms in all; pause p50 2000 µs  p99 4000 µs  "
                  "max 4000 µs; time to safepoint p50 100 µs  p99 300 µs  max 300 µs; last to stop: thread 1 (1)\n"
                  "  code unloading: 5 compiled codes replaced, 4 freed in 3 rounds; 2 kept while a pc lay in them, "
                  "1 rounds with a stack not walkable\n") != std::string::npos);
  // In the compact layout of several samplers too: the lines are the run's, not a sampler's.
  CHECK(text_of([&] {
          Profile both = two_sampler_profile();
          both.collections = p.collections;
          return both;
        }()).find("  collections: 3 (2 young, 1 full)") != std::string::npos);
}

TEST_CASE("reports: a collection's .jsonl line, byte for byte", "[reports]") {
  GcPause gc{.gc = 4, .young = false, .cause = "heap full", .requester = 2, .time_ns = 5'000'000,
             .time_to_safepoint_ns = 30'000, .pause_ns = 900'000, .threads_stopped = 3, .slowest_thread = 0,
             .slowest_cpu_ns = 20'000, .heap_before = 4096, .heap_after = 1024, .safepoint = 7};
  std::string line;
  append_gc_line(line, gc);
  CHECK(line ==
        "{\"event\":\"GarbageCollection\",\"gc\":4,\"young\":false,\"cause\":\"heap full\",\"thread\":2,"
        "\"time_ns\":5000000,\"pause_ns\":900000,\"time_to_safepoint_ns\":30000,\"threads_stopped\":3,"
        "\"slowest_thread\":0,\"slowest_cpu_ns\":20000,\"heap_before\":4096,\"heap_after\":1024,\"safepoint\":7}\n");
}

TEST_CASE("reports: async-profiler's -I, -X, -t, --total and -a shape folded stacks", "[reports]") {
  Profile p = one_sampler_profile();  // main 1, main;compute 4, main;compute;sqrt 1, main;fib;fib;fib 2
  ReportOptions o;
  SECTION("-I: only the stacks with a matching frame; any of the patterns") {
    o.include = {"comp*"};
    CHECK(collapsed_of(p, o) == "main;compute 4\nmain;compute;sqrt (native) 1\n");
    o.include = {"*ib", "sqrt*"};
    CHECK(collapsed_of(p, o) == "main;compute;sqrt (native) 1\nmain;fib;fib;fib 2\n");
  }
  SECTION("-X: none with a matching frame, and it wins over -I") {
    o.exclude = {"*qrt*"};
    CHECK(collapsed_of(p, o) == "main 1\nmain;compute 4\nmain;fib;fib;fib 2\n");
    o.include = {"compute"};
    CHECK(collapsed_of(p, o) == "main;compute 4\n");
  }
  SECTION("-t: each thread under a root frame naming it") {
    p.events.push_back(sample_event(SamplerId::cooperative, 99, p.stacks.intern(kD)));
    p.events.back().thread = 0;
    o.threads = true;
    CHECK(collapsed_of(p, o) ==
          "[main];main 1\n"
          "[thread_1];main 1\n"
          "[thread_1];main;compute 4\n"
          "[thread_1];main;compute;sqrt (native) 1\n"
          "[thread_1];main;fib;fib;fib 2\n");
  }
  SECTION("--total: each sample weighs the interval, in nanoseconds") {
    o.total = true;
    CHECK(collapsed_of(p, o) ==
          "main 1000000\nmain;compute 4000000\nmain;compute;sqrt (native) 1000000\nmain;fib;fib;fib 2000000\n");
  }
  SECTION("-a: each frame's type; natives keep theirs") {
    o.annotate = true;
    CHECK(collapsed_of(p, o) == "main_[0] 1\nmain_[0];compute_[j] 4\nmain_[0];compute_[j];sqrt (native) 1\n"
                                "main_[0];fib_[j];fib_[j];fib_[j] 2\n");
  }
  SECTION("patterns: whole names, or a * at either end") {
    CHECK(pattern_matches("Vector.add", "Vector.add"));
    CHECK_FALSE(pattern_matches("Vector", "Vector.add"));
    CHECK(pattern_matches("Vector.*", "Vector.add"));
    CHECK(pattern_matches("*.add", "Vector.add"));
    CHECK(pattern_matches("*tor.a*", "Vector.add"));
    CHECK(pattern_matches("*", "anything"));
    CHECK_FALSE(pattern_matches("*.sub", "Vector.add"));
  }
}

TEST_CASE("reports: the flame graph's --title, --reverse and --minwidth", "[reports]") {
  Profile p = one_sampler_profile();  // 8 samples: main 1, compute 4 (sqrt 1 of them), fib 2
  ReportOptions o;
  o.title = "CPU <profile>";
  o.reverse = true;
  o.min_width = 30;  // at least 2.4 samples, so 3: fib (2) and sqrt (1) are left out
  std::string html = html_of(p, o);
  CHECK(html.find("<title>CPU &lt;profile&gt;</title>") != std::string::npos);
  Json d = parse_json(page_data(html, "profile-data"));
  CHECK(d["title"].str == "CPU <profile>");
  CHECK(d["reverse"].boolean);
  const Json& main = d["samplers"][0]["root"]["c"][0];
  REQUIRE(main["c"].items.size() == 1);  // compute only
  CHECK(d["names"][size_t(main["c"][0]["f"].number)].str == "compute");
  CHECK_FALSE(main["c"][0].has("c"));  // sqrt left out
}

TEST_CASE("reports: %n in an output name is the number of the write", "[reports]") {
  CHECK(with_sequence_number("p-%n.folded", 3) == "p-3.folded");
  CHECK(with_sequence_number("p-%n{2}.folded", 3) == "p-1.folded");
  CHECK(with_sequence_number("p-%n{x}.folded", 3) == "p-3{x}.folded");
  CHECK(with_sequence_number("p-%p-%t.folded", 3) == "p-%p-%t.folded");
  CHECK(with_sequence_number("100%", 3) == "100%");
}

TEST_CASE("reports: the tests' JSON parser is strict and keeps the writers' key order", "[reports]") {
  Json d = parse_json("{\"b\":1,\"a\":[true,null,\"\\u00e9\\ud83d\\ude00\"],\"c\":-2.5e3}");
  CHECK(d.keys == std::vector<std::string>{"b", "a", "c"});
  CHECK(d["a"][2].str == "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(d["c"].number == -2500);
  for (const char* bad : {"{\"a\":1,}", "[1] 2", "\"\\ud800\"", "\"\xff\"", "{'a':1}", "[01]", "\"a\tb\""})
    CHECK_THROWS_AS(parse_json(bad), std::runtime_error);
}
