// pprof (`--profile-out FILE.pb.gz`; `go tool pprof -top FILE`, or any reader of pprof's
// profile.proto, which sampler/profile/profile.proto restates): the profile's samples as
// a gzipped Profile message, encoded here in protobuf's wire format (varint keys, varints,
// length-delimited strings and messages, packed repeated integers). One sample type per
// sampler (type = its name, unit "count"), the first the default; each entry of the
// profile is a Sample whose value is its count under its sampler and 0 under the others,
// labelled with its thread and, when biased, the reason. Each distinct frame (function,
// line, kind) is a Location with one Line; each function a Function with its file. A stack
// the depth limit cut ends in a `[truncated]` root, as in the other formats.
#include <zlib.h>

#include <map>
#include <ostream>
#include <tuple>
#include <unordered_map>

#include "sampler/profile/jfr_chunk.h"
#include "sampler/profile/report.h"

namespace sampler {

namespace {

// ---- protobuf's wire format ----
enum WireType { kVarint = 0, kLengthDelimited = 2 };

void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += char((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += char(v);
}
void key(std::string& out, int field, WireType type) { varint(out, uint64_t(field) << 3 | type); }
void int_field(std::string& out, int field, uint64_t v) {
  if (v == 0) return;  // proto3: a zero is the default, not written
  key(out, field, kVarint);
  varint(out, v);
}
void bytes_field(std::string& out, int field, std::string_view bytes) {
  key(out, field, kLengthDelimited);
  varint(out, bytes.size());
  out += bytes;
}
void packed_field(std::string& out, int field, const std::vector<uint64_t>& values) {
  if (values.empty()) return;
  std::string packed;
  for (uint64_t v : values) varint(packed, v);
  bytes_field(out, field, packed);
}

// Profile's fields (profile.proto).
enum ProfileField {
  kSampleType = 1, kSample = 2, kLocation = 4, kFunction = 5, kStringTable = 6, kTimeNanos = 9,
  kDurationNanos = 10, kPeriodType = 11, kPeriod = 12, kDefaultSampleType = 14,
};

struct Strings {
  std::vector<std::string> table{""};
  std::unordered_map<std::string, uint64_t> ids{{"", 0}};
  uint64_t id(const std::string& s) {
    auto [it, fresh] = ids.try_emplace(s, table.size());
    if (fresh) table.push_back(s);
    return it->second;
  }
};

std::string value_type(Strings& strings, const std::string& type, const std::string& unit) {
  std::string m;
  int_field(m, 1, strings.id(type));
  int_field(m, 2, strings.id(unit));
  return m;
}

// `data` gzipped (zlib's deflate with a gzip wrapper).
std::string gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, uLong(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

void write_pprof(const Profile& p, std::ostream& os) {
  std::vector<SamplerId> samplers = report_samplers(p);
  Strings strings;
  std::string body;
  std::map<SamplerId, size_t> column;
  for (SamplerId s : samplers) {
    column[s] = column.size();
    bytes_field(body, kSampleType, value_type(strings, sampler_name(s), "count"));
  }

  // Functions and locations, each distinct one once, ids from 1.
  std::string functions, locations;
  std::unordered_map<std::string, uint64_t> function_ids;
  std::map<std::tuple<uint64_t, uint32_t, FrameKind>, uint64_t> location_ids;
  auto location = [&](const FrameRef* f) -> uint64_t {
    std::string name = f ? function_name(*f) : std::string(kTruncatedLabel);
    auto [fit, new_function] = function_ids.try_emplace(name, function_ids.size() + 1);
    if (new_function) {
      std::string m;
      int_field(m, 1, fit->second);
      int_field(m, 2, strings.id(name));
      int_field(m, 3, strings.id(name));
      if (f && has_source_line(*f)) int_field(m, 4, strings.id(p.file_name(p.file_of(f->function))));
      bytes_field(functions, kFunction, m);
    }
    auto key = std::make_tuple(fit->second, f ? f->line : 0, f ? f->kind : FrameKind::native);
    auto [lit, new_location] = location_ids.try_emplace(key, location_ids.size() + 1);
    if (new_location) {
      std::string line, m;
      int_field(line, 1, fit->second);
      int_field(line, 2, f ? f->line : 0);
      int_field(m, 1, lit->second);
      bytes_field(m, 4, line);
      bytes_field(locations, kLocation, m);
    }
    return lit->second;
  };

  std::unordered_map<uint32_t, std::vector<uint64_t>> stacks;  // stack id -> location ids, leaf first
  for (const Event& e : p.events) {
    if (!is_stack_sample(e)) continue;
    auto [it, fresh] = stacks.try_emplace(e.stack);
    if (fresh) {
      for (const FrameRef& f : stack_of_id(p, e.stack)) it->second.push_back(location(&f));
      if (p.stacks.truncated(e.stack)) it->second.push_back(location(nullptr));
    }
    std::vector<uint64_t> values(samplers.size(), 0);
    values[column.at(e.sampler)] = e.count;
    std::string sample;
    packed_field(sample, 1, it->second);
    packed_field(sample, 2, values);
    std::string thread;
    int_field(thread, 1, strings.id("thread"));
    int_field(thread, 3, uint64_t(e.thread));
    bytes_field(sample, 3, thread);
    if (e.biased) {
      std::string biased;
      int_field(biased, 1, strings.id("biased"));
      int_field(biased, 2, strings.id(e.reason ? reason_name(*e.reason) : "yes"));
      bytes_field(sample, 3, biased);
    }
    bytes_field(body, kSample, sample);
  }
  body += locations;
  body += functions;
  // The wall-clock time of the first sample (samples' times are CLOCK_MONOTONIC).
  uint64_t start = p.events.empty() ? 0 : p.events.front().time_ns;
  int_field(body, kTimeNanos, jfr_times_since(start).start_epoch_ns);
  int_field(body, kDurationNanos, p.duration_ns);
  bytes_field(body, kPeriodType, value_type(strings, "cpu", "nanoseconds"));
  int_field(body, kPeriod, p.interval_ns);
  if (!samplers.empty()) int_field(body, kDefaultSampleType, strings.id(sampler_name(samplers.front())));
  // The string table last: every string above is in it by now.
  for (const std::string& s : strings.table) bytes_field(body, kStringTable, s);
  os << gzip(body);
}

}  // namespace sampler
