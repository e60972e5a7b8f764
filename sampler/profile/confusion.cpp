#include "sampler/profile/confusion.h"

#include <algorithm>
#include <string>

#include "sampler/profile/json.h"

namespace sampler {

namespace {

// What an outcome needs of one .jsonl line (report_jsonl.cpp's), read by nlohmann-json's
// SAX parser: the event's "event", "sampler", "sample" and "reason", and its first frame's
// "function" and "line". The parse stops at the end of that frame: the rest of a stack is
// most of a line's bytes, and building every line whole made compare's pairing twenty
// times slower.
class OutcomeFields : public nlohmann::json_sax<Json> {
 public:
  std::string event, sampler, reason, function;
  uint64_t sample = 0, line = 0;
  bool has_stack = false, has_frame = false, has_line = false;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return number(v < 0 ? 0 : uint64_t(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(v); }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool string(string_t& v) override {
    if (level_ == 1 && key_ == "event") event = v;
    else if (level_ == 1 && key_ == "sampler") sampler = v;
    else if (level_ == 1 && key_ == "reason") reason = v;
    else if (in_frame() && key_ == "function") function = v;
    return true;
  }
  bool key(string_t& k) override {
    if (level_ == 1 || in_frame()) key_ = k;
    return true;
  }
  bool start_object(std::size_t) override {
    ++level_;
    if (level_ == 3 && in_stack_) has_frame = true;
    return true;
  }
  bool end_object() override {
    if (in_frame()) return false;  // the first frame read: nothing more is needed
    --level_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++level_;
    if (level_ == 2 && key_ == "stack") in_stack_ = has_stack = true;
    return true;
  }
  bool end_array() override {
    if (level_-- == 2) in_stack_ = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool in_frame() const { return in_stack_ && has_frame && level_ == 3; }
  bool number(uint64_t v) {
    if (level_ == 1 && key_ == "sample") sample = v;
    else if (in_frame() && key_ == "line") line = v, has_line = true;
    return true;
  }
  int level_ = 0;  // objects and arrays open: 1 in the event, 2 in its stack, 3 in a frame
  bool in_stack_ = false;
  std::string key_;  // the event's key, or in its first frame the frame's
};

// An outcome from one .jsonl line: a sample, a failure or a drop with an interruption id;
// nothing for any other line.
std::optional<Outcome> read_outcome(std::string_view line, const Profile& profile) {
  OutcomeFields f;
  Json::sax_parse(line.begin(), line.end(), &f);  // false when it stopped after the first frame
  bool sample = f.event == "ExecutionSample" || f.event == "NativeMethodSample";
  bool failure = f.event == "FailedSample" || f.event == "DroppedSample";
  if (!sample && !failure) return std::nullopt;
  std::optional<SamplerId> sampler = sampler_named(f.sampler);
  if (!sampler || f.sample == 0) return std::nullopt;
  Outcome o;
  o.sampler = *sampler;
  o.interruption = f.sample;
  if (failure) {
    if (!(o.failed = reason_named(f.reason))) return std::nullopt;
    return o;
  }
  if (!f.has_stack) return std::nullopt;
  if (!f.has_frame) return o;  // no frames: no line
  if (!f.has_line) return std::nullopt;
  o.line.line = uint32_t(f.line);
  o.line.file = o.line.line == 0 ? 0 : profile.file_of(f.function);
  return o;
}

using Counts = std::vector<std::pair<SourceLine, uint64_t>>;

Counts most_first(std::map<SourceLine, uint64_t> by_line) {
  Counts out(by_line.begin(), by_line.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace

std::vector<Outcome> read_outcomes(std::string_view jsonl, const Profile& profile) {
  std::vector<Outcome> out;
  for (size_t pos = 0; pos < jsonl.size();) {
    size_t end = jsonl.find('\n', pos);
    if (end == std::string_view::npos) end = jsonl.size();
    if (std::optional<Outcome> o = read_outcome(jsonl.substr(pos, end - pos), profile)) out.push_back(*o);
    pos = end + 1;
  }
  return out;
}

Counts Confusion::really(SourceLine line) const {
  std::map<SourceLine, uint64_t> by;
  for (const auto& [cell, n] : lines)
    if (cell.first == line) by[cell.second] += n;
  return most_first(by);
}

Counts Confusion::moved(SourceLine line) const {
  std::map<SourceLine, uint64_t> by;
  for (const auto& [cell, n] : lines)
    if (cell.second == line) by[cell.first] += n;
  return most_first(by);
}

uint64_t Confusion::agreed() const {
  uint64_t n = 0;
  for (const auto& [cell, k] : lines)
    if (cell.first == cell.second) n += k;
  return n;
}

std::vector<Confusion> confusion_matrices(const std::vector<Outcome>& outcomes, const std::vector<SamplerId>& columns) {
  std::vector<Confusion> out;
  if (columns.empty()) return out;
  SamplerId reference = columns[0];
  std::map<uint64_t, const Outcome*> truth;  // interruption -> the reference's outcome
  for (const Outcome& o : outcomes)
    if (o.sampler == reference) truth[o.interruption] = &o;
  for (size_t c = 1; c < columns.size(); c++) {
    Confusion m;
    m.sampler = columns[c];
    for (const Outcome& o : outcomes) {
      if (o.sampler != m.sampler) continue;
      auto it = truth.find(o.interruption);
      if (it == truth.end()) {
        m.reference_missing++;
        continue;
      }
      if (it->second->failed) {
        m.reference_failed++;
        continue;
      }
      SourceLine really = it->second->line;
      if (o.failed)
        m.failed[{*o.failed, really}]++;
      else
        m.lines[{o.line, really}]++;
      m.paired++;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace sampler
