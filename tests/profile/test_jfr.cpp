// Unit tests of the JFR writer (sampler/profile/jfr_encoding.h, jfr_chunk.h, write_jfr):
// the compressed integers and strings byte for byte, an event's size that counts itself,
// and a whole chunk read back by a small reader written here from the format (header,
// events walked by their sizes, the metadata's types, the checkpoint's pools). That the
// JDK's own `jfr` tool reads what the profiler writes is tests/test_jfr.py's job.
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sampler/profile/jfr_chunk.h"
#include "sampler/profile/jfr_encoding.h"
#include "sampler/profile/report.h"

using namespace sampler;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += char(c);
  return s;
}

std::string varint(uint64_t v) {
  std::string s;
  jfr::put_varint(s, v);
  return s;
}

// ---- A reader of the chunk format, independent of the writer's code ----

struct Reader {
  const std::string& s;
  size_t at = 0;
  uint8_t byte() {
    if (at >= s.size()) throw std::runtime_error("read past the end");
    return uint8_t(s[at++]);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
      uint8_t b = byte();
      v |= uint64_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) return v;
    }
    return v | uint64_t(byte()) << 56;
  }
  uint64_t big_endian(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | byte();
    return v;
  }
  std::string string() {
    uint8_t encoding = byte();
    if (encoding == 0 || encoding == 1) return "";
    if (encoding != 3) throw std::runtime_error("unexpected string encoding");
    uint64_t n = varint();
    std::string out = s.substr(at, n);
    at += n;
    return out;
  }
};

struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<Element> children;
};

Element read_element(Reader& r, const std::vector<std::string>& strings) {
  Element e;
  e.name = strings.at(r.varint());
  for (uint64_t n = r.varint(); n > 0; n--) {
    std::string k = strings.at(r.varint());
    e.attributes[k] = strings.at(r.varint());
  }
  for (uint64_t n = r.varint(); n > 0; n--) e.children.push_back(read_element(r, strings));
  return e;
}

struct Chunk {
  uint64_t size = 0, checkpoint = 0, metadata = 0, ticks_per_second = 0;
  std::map<uint64_t, std::string> type_names;  // from the metadata
  std::map<std::string, int> events;           // type name -> how many
  std::map<std::string, uint64_t> pool_sizes;  // type name -> entries
};

Chunk read_chunk(const std::string& file) {
  Reader r{file};
  Chunk c;
  REQUIRE(file.substr(0, 4) == std::string("FLR\0", 4));
  r.at = 4;
  CHECK(r.big_endian(2) == 2);
  CHECK(r.big_endian(2) == 0);
  c.size = r.big_endian(8);
  c.checkpoint = r.big_endian(8);
  c.metadata = r.big_endian(8);
  r.at = 56;
  c.ticks_per_second = r.big_endian(8);
  CHECK(uint8_t(file[64]) == 0);  // finished
  REQUIRE(c.size == file.size());
  // The metadata first: it names every type.
  r.at = c.metadata;
  uint64_t size = r.varint();
  CHECK(c.metadata + size == c.size);
  CHECK(r.varint() == 0);  // the metadata event's type
  r.varint(), r.varint(), r.varint();
  std::vector<std::string> strings(r.varint());
  for (auto& s : strings) s = r.string();
  Element root = read_element(r, strings);
  CHECK(r.at == c.size);
  REQUIRE(root.children.size() == 2);
  for (const Element& k : root.children[0].children) c.type_names[std::stoull(k.attributes.at("id"))] = k.attributes.at("name");
  // Every event from the header to the end, walked by their sizes.
  for (r.at = kJfrHeaderSize; r.at < c.size;) {
    size_t start = r.at;
    uint64_t event_size = r.varint();
    uint64_t type = r.varint();
    if (type == 1) {
      CHECK(start == c.checkpoint);
      r.varint(), r.varint();
      CHECK(r.varint() == 0);  // no earlier checkpoint
      r.byte();
      uint64_t pools = r.varint();
      // Pools are not walked entry by entry here (that needs every field's type); their
      // type ids and counts are checked where they start: the first pool's.
      uint64_t first = r.varint();
      c.pool_sizes[c.type_names.at(first)] = r.varint();
      CHECK(pools >= 5);
    } else if (type != 0) {
      c.events[c.type_names.at(type)]++;
    }
    r.at = start + event_size;
  }
  CHECK(r.at == c.size);
  return c;
}

Event event(EventType type, SamplerId sampler, uint64_t id, uint32_t stack) {
  Event e;
  e.type = type;
  e.sampler = sampler;
  e.sample = id;
  e.thread = int(id % 2);
  e.time_ns = 1'000'000 * id;
  e.stack = stack;
  return e;
}

}  // namespace

TEST_CASE("jfr: compressed integers are LEB128, nine bytes at most", "[jfr]") {
  CHECK(varint(0) == bytes({0}));
  CHECK(varint(127) == bytes({0x7f}));
  CHECK(varint(128) == bytes({0x80, 0x01}));
  CHECK(varint(300) == bytes({0xac, 0x02}));
  CHECK(varint(UINT64_MAX) == bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(varint(uint64_t(1) << 56) == bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}));
  for (uint64_t v : {uint64_t(0), uint64_t(127), uint64_t(128), uint64_t(16383), uint64_t(16384), UINT64_MAX})
    CHECK(jfr::varint_size(v) == varint(v).size());
  std::string minus_one;
  jfr::put_int(minus_one, -1);  // an int field: its 32 bits
  CHECK(minus_one == bytes({0xff, 0xff, 0xff, 0xff, 0x0f}));
  std::string s = varint(UINT64_MAX) + varint(300);
  Reader r{s};
  CHECK(r.varint() == UINT64_MAX);
  CHECK(r.varint() == 300);
}

TEST_CASE("jfr: strings say their encoding, and an event's size counts itself", "[jfr]") {
  std::string s;
  jfr::put_string(s, "");
  jfr::put_null_string(s);
  jfr::put_string(s, "f\xc3\xa9");  // UTF-8 bytes, counted as bytes
  CHECK(s == bytes({1, 0, 3, 3, 'f', 0xc3, 0xa9}));
  for (size_t body : {1, 126, 127, 128, 16381, 16382, 16383}) {
    std::string e;
    jfr::put_event(e, std::string(body, 'x'));
    Reader r{e};
    INFO(body);
    CHECK(r.varint() == e.size());
  }
}

TEST_CASE("jfr: frames name a class and a method", "[jfr]") {
  using P = std::pair<std::string, std::string>;
  CHECK(jfr_class_and_method(FrameRef{"Point.norm", 3, 1, FrameKind::jit}, "dir/prog.mini") == P{"Point", "norm"});
  CHECK(jfr_class_and_method(FrameRef{"main", 3, 1, FrameKind::interp}, "dir/prog.mini") == P{"prog", "main"});
  CHECK(jfr_class_and_method(FrameRef{"main$fn@12", 12, 0, FrameKind::inlined}, "lib.mini") == P{"lib", "main$fn@12"});
  CHECK(jfr_class_and_method(FrameRef{"Box.get$fn@3", 3, 0, FrameKind::jit}, "p.mini") == P{"Box", "get$fn@3"});
  CHECK(jfr_class_and_method(FrameRef{"native_spin_ns", 0, -1, FrameKind::native}, "p.mini") ==
        P{"[native]", "native_spin_ns"});
  CHECK(std::string(jfr_frame_type(FrameKind::interp)) == "Interpreted");
  CHECK(std::string(jfr_frame_type(FrameKind::jit)) == "JIT compiled");
  CHECK(std::string(jfr_frame_type(FrameKind::inlined)) == "Inlined");
  CHECK(std::string(jfr_frame_type(FrameKind::native)) == "Native");
}

TEST_CASE("jfr: a chunk holds every event under its type, with its pools and metadata", "[jfr]") {
  Profile p;
  p.program = "prog.mini";
  p.samplers = {SamplerId::cooperative, SamplerId::oracle};
  StackTrace a = {FrameRef{"compute", 19, 12, FrameKind::jit}, FrameRef{"main", 30, 40, FrameKind::interp}};
  StackTrace n = {FrameRef{"sqrt", 0, -1, FrameKind::native}, FrameRef{"main", 31, 44, FrameKind::interp}};
  uint32_t sa = p.stacks.intern(a), sn = p.stacks.intern(n);
  p.events.push_back(event(EventType::ExecutionSample, SamplerId::cooperative, 1, sa));
  p.events.back().count = 3;
  p.events.push_back(event(EventType::ExecutionSample, SamplerId::oracle, 1, sa));
  p.events.push_back(event(EventType::NativeMethodSample, SamplerId::cooperative, 2, sn));
  p.events.push_back(event(EventType::NativeMethodSample, SamplerId::oracle, 2, sn));
  Event latency = event(EventType::SafepointLatency, SamplerId::cooperative, 1, sa);
  latency.latency_ns = 4200;
  p.events.push_back(latency);
  Event failed = event(EventType::FailedSample, SamplerId::oracle, 3, 0);
  failed.reason = Reason::pc_in_stub;
  p.events.push_back(failed);
  Event dropped = event(EventType::DroppedSample, SamplerId::cooperative, 4, 0);
  dropped.reason = Reason::ring_full;
  p.events.push_back(dropped);

  std::ostringstream out;
  write_jfr(p, out);
  Chunk c = read_chunk(out.str());
  CHECK(c.ticks_per_second == 1'000'000'000);
  CHECK(c.events == std::map<std::string, int>{{"jdk.ExecutionSample", 1},
                                               {"jdk.NativeMethodSample", 1},
                                               {"jdk.SafepointLatency", 1},
                                               {"minivm.ExecutionSample", 1},
                                               {"minivm.NativeMethodSample", 1},
                                               {"minivm.FailedSample", 1},
                                               {"minivm.DroppedSample", 1}});
  CHECK(c.pool_sizes == std::map<std::string, uint64_t>{{"java.lang.Thread", 2}});  // threads 0 and 1

  // The first sampler given is JDK's: with the oracle first, the oracle's samples are.
  p.samplers = {SamplerId::oracle, SamplerId::cooperative};
  std::ostringstream swapped;
  write_jfr(p, swapped);
  Chunk s = read_chunk(swapped.str());
  CHECK(s.events["jdk.ExecutionSample"] == 1);
  CHECK(s.events["minivm.ExecutionSample"] == 1);

  std::string err;
  CHECK(output_format("p.JFR", err) == OutputFormat::jfr);
}

TEST_CASE("jfr: a collection is jdk.GarbageCollection inside its safepoint's begin and end", "[jfr]") {
  Profile p;
  p.program = "prog.mini";
  p.samplers = {SamplerId::cooperative};
  JfrChunkWriter writer(p, SamplerId::cooperative);
  // A young collection that waited for thread 3, asked by thread 1, and a full one in the
  // same safepoint (no second begin and end); then one asked by a thread that is not a
  // Mini thread, with no thread waited for.
  GcPause young{.gc = 1, .young = true, .cause = "allocation budget", .requester = 1, .time_ns = 1000,
                .time_to_safepoint_ns = 100, .pause_ns = 900, .threads_stopped = 2, .slowest_thread = 3};
  young.safepoint = 1;
  GcPause full = young;
  full.gc = 2;
  full.young = false;
  full.shares_safepoint = true;
  GcPause other{.gc = 3, .young = true, .cause = "gc-a-lot", .requester = -1, .time_ns = 5000,
                .time_to_safepoint_ns = 0, .pause_ns = 400};
  other.safepoint = 2;
  std::string events;
  for (const GcPause& gc : {young, full, other}) writer.append_gc(events, gc);
  std::string header, tail;
  writer.finish(events.size(), JfrChunkWriter::Times{1000, 9000, 0}, /*final_chunk=*/true, header, tail);
  Chunk c = read_chunk(header + events + tail);
  CHECK(c.events == std::map<std::string, int>{{"jdk.GarbageCollection", 3},
                                               {"jdk.SafepointBegin", 2},
                                               {"jdk.SafepointEnd", 2}});
  CHECK(c.pool_sizes == std::map<std::string, uint64_t>{{"java.lang.Thread", 4}});  // threads 0 to 3
}
