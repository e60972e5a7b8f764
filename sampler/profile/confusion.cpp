#include "sampler/profile/confusion.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace sampler {

namespace {

// A reader of the lines report_jsonl.cpp writes, just as far as an outcome needs: its
// keys come in a fixed order, each value right after its key.
class LineReader {
 public:
  explicit LineReader(std::string_view s) : s_(s) {}

  // Moves past the next `"key":`; false when the line has none.
  bool key(std::string_view k) {
    std::string quoted = "\"" + std::string(k) + "\":";
    size_t at = s_.find(quoted, pos_);
    if (at == std::string_view::npos) return false;
    pos_ = at + quoted.size();
    return true;
  }
  bool literal(std::string_view text) {
    if (s_.substr(pos_, text.size()) != text) return false;
    pos_ += text.size();
    return true;
  }
  std::optional<uint64_t> number() {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
    if (ec != std::errc()) return std::nullopt;
    pos_ = size_t(end - s_.data());
    return v;
  }
  // A JSON string as append_json_string writes it: its escapes undone (\uXXXX to UTF-8;
  // the writer escapes only characters of the Basic Multilingual Plane that way).
  std::optional<std::string> string() {
    if (!literal("\"")) return std::nullopt;
    std::string out;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return std::nullopt;
      char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          unsigned cp = 0;
          if (pos_ + 4 > s_.size()) return std::nullopt;
          auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
          if (ec != std::errc() || end != s_.data() + pos_ + 4) return std::nullopt;
          pos_ += 4;
          if (cp < 0x80) {
            out += char(cp);
          } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
          } else {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: out += e;  // \" \\ \/
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

std::optional<Outcome> read_outcome(std::string_view line, const Profile& profile) {
  LineReader r(line);
  if (!r.literal("{") || !r.key("event")) return std::nullopt;
  std::optional<std::string> type = r.string();
  if (!type) return std::nullopt;
  bool sample = *type == "ExecutionSample" || *type == "NativeMethodSample";
  bool failure = *type == "FailedSample" || *type == "DroppedSample";
  if (!sample && !failure) return std::nullopt;
  Outcome o;
  std::optional<std::string> name;
  std::optional<SamplerId> sampler;
  std::optional<uint64_t> id;
  if (!r.key("sampler") || !(name = r.string()) || !(sampler = sampler_named(*name))) return std::nullopt;
  if (!r.key("sample") || !(id = r.number()) || *id == 0) return std::nullopt;
  o.sampler = *sampler;
  o.interruption = *id;
  if (failure) {
    std::optional<std::string> why;
    if (!r.key("reason") || !(why = r.string()) || !(o.failed = reason_named(*why))) return std::nullopt;
    return o;
  }
  if (!r.key("stack") || !r.literal("[")) return std::nullopt;
  if (!r.literal("{")) return o;  // no frames: no line
  std::optional<std::string> function;
  std::optional<uint64_t> number;
  if (!r.key("function") || !(function = r.string()) || !r.key("line") || !(number = r.number())) return std::nullopt;
  o.line.line = uint32_t(*number);
  o.line.file = o.line.line == 0 ? 0 : profile.file_of(*function);
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
