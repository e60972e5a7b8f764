// speedscope JSON (`--profile-out FILE.json`; open it at speedscope.app or with the
// `speedscope` command): one "sampled" profile per sampler, named after it, all sharing
// one frames table. The samples of one thread with one stack and outcome are one entry
// weighted by their count (the profile keeps them so: profile.h), in order of the first
// of them, with unit "none": the numbers speedscope shows are sample counts, the same as
// the text and collapsed reports. (speedscope's "Time Order" view shows first
// appearances, not the timeline.) A frame is a
// function, or function:line with --profile-lines (then "line" is set too).
#include <ostream>
#include <unordered_map>

#include "sampler/profile/json.h"
#include "sampler/profile/report.h"

namespace sampler {

void write_speedscope(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  // The shared frames table, in order of first use.
  std::unordered_map<std::string, size_t> index;
  Json frames = Json::array();
  // A frame of the program, or (f null) one of the writers' own: [no_frames], [truncated].
  auto frame_id = [&](const FrameRef* f, const char* own = kNoFramesLabel) -> size_t {
    std::string label = f ? frame_label(*f, opt.lines) : std::string(own);
    auto [it, inserted] = index.emplace(label, index.size());
    if (inserted) {
      Json frame = {{"name", label}};
      bool in_program = f && has_source_line(*f);
      const std::string* file = in_program ? &p.file_name(p.file_of(f->function)) : nullptr;
      if (file != nullptr && !file->empty()) frame["file"] = *file;
      if (opt.lines && f && f->line) frame["line"] = f->line;
      frames.push_back(std::move(frame));
    }
    return it->second;
  };

  Json profiles = Json::array();
  for (SamplerId s : report_samplers(p)) {
    Json samples = Json::array(), weights = Json::array();
    std::unordered_map<uint32_t, Json> cache;  // stack id -> [i, j, k], root first
    uint64_t n = 0;
    for (const Event& e : p.events) {
      if (!is_stack_sample(e) || e.sampler != s) continue;
      auto [it, inserted] = cache.try_emplace(e.stack, Json::array());
      if (inserted) {
        const StackTrace& st = stack_of_id(p, e.stack);
        if (p.stacks.truncated(e.stack)) it->second.push_back(frame_id(nullptr, kTruncatedLabel));
        if (st.empty()) it->second.push_back(frame_id(nullptr));
        for (size_t i = st.size(); i-- > 0;) it->second.push_back(frame_id(&st[i]));  // speedscope: root first
      }
      samples.push_back(it->second);
      weights.push_back(e.count);
      n += e.count;
    }
    profiles.push_back({{"type", "sampled"},
                        {"name", sampler_name(s)},
                        {"unit", "none"},
                        {"startValue", 0},
                        {"endValue", n},
                        {"samples", std::move(samples)},
                        {"weights", std::move(weights)}});
  }

  Json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"exporter", "minivm"},
              {"name", p.program.empty() ? std::string("minivm profile") : p.program},
              {"activeProfileIndex", 0},
              {"shared", {{"frames", std::move(frames)}}},
              {"profiles", std::move(profiles)}};
  out << json_text(doc) << "\n";
}

}  // namespace sampler
