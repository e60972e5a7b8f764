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

#include "sampler/profile/report.h"

namespace sampler {

void write_speedscope(const Profile& p, std::ostream& out, const ReportOptions& opt) {
  std::vector<SamplerId> samplers = report_samplers(p);

  // The shared frames table, in order of first use.
  std::unordered_map<std::string, size_t> index;
  std::string frames;
  // A frame of the program, or (f null) one of the writers' own: [no_frames], [truncated].
  auto frame_id = [&](const FrameRef* f, const char* own = kNoFramesLabel) -> size_t {
    std::string label = f ? frame_label(*f, opt.lines) : std::string(own);
    auto [it, inserted] = index.emplace(label, index.size());
    if (inserted) {
      if (it->second) frames += ",\n";
      frames += "{\"name\":";
      append_json_string(frames, label);
      bool in_program = f && has_source_line(*f);
      const std::string* file = in_program ? &p.file_name(p.file_of(f->function)) : nullptr;
      if (file != nullptr && !file->empty()) {
        frames += ",\"file\":";
        append_json_string(frames, *file);
      }
      if (opt.lines && f && f->line) frames += ",\"line\":" + std::to_string(f->line);
      frames += '}';
    }
    return it->second;
  };

  std::string profiles;
  for (size_t si = 0; si < samplers.size(); ++si) {
    SamplerId s = samplers[si];
    std::string stacks, weights;
    std::unordered_map<uint32_t, std::string> cache;  // stack id -> "i,j,k", root first
    uint64_t n = 0;
    for (const Event& e : p.events) {
      if (!is_stack_sample(e) || e.sampler != s) continue;
      auto [it, inserted] = cache.try_emplace(e.stack);
      if (inserted) {
        const StackTrace& st = stack_of_id(p, e.stack);
        if (p.stacks.truncated(e.stack)) it->second = std::to_string(frame_id(nullptr, kTruncatedLabel)) + ',';
        if (st.empty()) it->second += std::to_string(frame_id(nullptr));
        for (size_t i = st.size(); i-- > 0;) {  // speedscope stacks are root first
          it->second += std::to_string(frame_id(&st[i]));
          if (i) it->second += ',';
        }
      }
      if (n) {
        stacks += ',';
        weights += ',';
      }
      stacks += '[' + it->second + ']';
      weights += std::to_string(e.count);
      n += e.count;
    }
    if (si) profiles += ",\n";
    profiles += "{\"type\":\"sampled\",\"name\":";
    append_json_string(profiles, sampler_name(s));
    profiles += ",\"unit\":\"none\",\"startValue\":0,\"endValue\":" + std::to_string(n);
    profiles += ",\n \"samples\":[" + stacks + "],\n \"weights\":[" + weights + "]}";
  }

  std::string doc;
  doc += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n";
  doc += "\"exporter\":\"minivm\",\n\"name\":";
  append_json_string(doc, p.program.empty() ? std::string("minivm profile") : p.program);
  doc += ",\n\"activeProfileIndex\":0,\n";
  doc += "\"shared\":{\"frames\":[\n" + frames + "]},\n";
  doc += "\"profiles\":[\n" + profiles + "]}\n";
  out << doc;
}

}  // namespace sampler
