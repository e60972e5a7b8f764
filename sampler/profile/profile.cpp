// The profile data model (profile.h): names of frame kinds and event types as the
// .jsonl schema spells them, and the stack-trace repository.
#include "sampler/profile/profile.h"

#include <algorithm>
#include <cstring>

#include <functional>

namespace sampler {

const char* event_type_name(EventType t) {
  switch (t) {
    case EventType::ExecutionSample: return "ExecutionSample";
    case EventType::NativeMethodSample: return "NativeMethodSample";
    case EventType::SafepointLatency: return "SafepointLatency";
    case EventType::FailedSample: return "FailedSample";
    case EventType::DroppedSample: return "DroppedSample";
  }
  return "UnknownEvent";
}

size_t StackTraceRepository::Hash::operator()(const StackTrace& t) const {
  // FNV-style mixing of each frame's fields. The name contributes its length and first
  // 8 bytes only: traces are hundreds of frames deep and hashed at every poll, the
  // line and bci tell frames of one function apart, and equality still compares names.
  uint64_t h = 1469598103934665603ull ^ t.size();
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  for (const FrameRef& f : t) {
    uint64_t head = 0;
    std::memcpy(&head, f.function.data(), std::min<size_t>(8, f.function.size()));
    mix(head ^ (uint64_t(f.function.size()) << 56));
    mix(f.line);
    mix(static_cast<uint32_t>(f.bci));
    mix(static_cast<uint64_t>(f.kind));
  }
  return static_cast<size_t>(h);
}

size_t Profile::SampleKeyHash::operator()(const SampleKey& k) const {
  uint64_t h = (uint64_t(k.stack) << 32) ^ (uint64_t(uint32_t(k.thread)) << 8) ^ (uint64_t(k.type) << 4) ^
               uint64_t(k.sampler) ^ (uint64_t(k.biased) << 7) ^ (k.reason ? (uint64_t(*k.reason) + 1) << 48 : 0);
  return size_t(h * 0x9e3779b97f4a7c15ull);
}

void Profile::add_sample(const Event& e) {
  SampleKey key{e.type, e.sampler, e.thread, e.stack, e.biased, e.reason};
  auto [it, fresh] = sample_index_.try_emplace(key, events.size());
  if (fresh)
    events.push_back(e);
  else
    events[it->second].count += e.count;
}

void Profile::sort_by_time() {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  sample_index_.clear();
  for (size_t i = 0; i < events.size(); i++) {
    const Event& e = events[i];
    sample_index_.try_emplace(SampleKey{e.type, e.sampler, e.thread, e.stack, e.biased, e.reason}, i);
  }
}

uint32_t StackTraceRepository::intern(const StackTrace& trace, bool truncated) {
  auto& ids = ids_[truncated];
  auto it = ids.find(trace);
  if (it != ids.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(traces_.size());
  traces_.push_back(trace);
  truncated_.push_back(truncated);
  ids.emplace(trace, id);
  return id;
}

void Collections::add(const GcPause& gc) {
  count++;
  (gc.young ? young : full)++;
  pause_total_ns += gc.pause_ns;
  pause_ns.push_back(gc.pause_ns);
  if (!gc.shares_safepoint) time_to_safepoint_ns.push_back(gc.time_to_safepoint_ns);  // the first one's
  if (gc.slowest_thread >= 0 && !gc.shares_safepoint) last_to_stop[gc.slowest_thread]++;
}

}  // namespace sampler
