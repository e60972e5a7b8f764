// At exit: every event buffer (the sampler thread's and each Mini thread's) merged into
// the one profile, and what never became an event accounted: full rings (dropped),
// requests still waiting in a ring when the program ended, and signals that found no
// thread (failed).
#include <algorithm>

#include "runtime/code_unloading.h"
#include "sampler/profiler_state.h"

namespace sampler {

void merge_into(Profile& to, const EventBuffer& buf) {
  const Profile& from = buf.part;
  for (const auto& [sampler, s] : from.stats) {
    SamplerStats& t = to.stats[sampler];
    t.interruptions += s.interruptions;
    t.samples += s.samples;
    t.truncated += s.truncated;
    t.freed_code += s.freed_code;
    for (const auto& [r, n] : s.failed) t.failed[r] += n;
    for (const auto& [r, n] : s.biased) t.biased[r] += n;
    for (const auto& [r, n] : s.dropped) t.dropped[r] += n;
    t.suspension_ns.insert(t.suspension_ns.end(), s.suspension_ns.begin(), s.suspension_ns.end());
    t.latency_ns.insert(t.latency_ns.end(), s.latency_ns.begin(), s.latency_ns.end());
  }
  std::vector<int64_t> named_id(buf.compact.size(), -1);  // each compact trace named once
  for (Event e : from.events) {
    if (e.type != EventType::FailedSample) {
      if (!buf.compact_stacks) {
        e.stack = to.stacks.intern(from.stacks.get(e.stack));
      } else {
        if (named_id[e.stack] < 0) named_id[e.stack] = to.stacks.intern(named(buf.compact[e.stack]));
        e.stack = uint32_t(named_id[e.stack]);
      }
    }
    to.events.push_back(std::move(e));
  }
}

namespace {

// What the handlers counted (the ended threads' and the live ones'), and requests still
// waiting in rings (a thread that is still running when the program exits, e.g. after a
// runtime error elsewhere).
void account_unserved(Profile& profile) {
  auto add_full = [&](SamplerId s, uint64_t full) {
    if (!g_state.wants(s)) return;
    profile.stats[s].dropped[Reason::ring_full] += full;
    profile.stats[s].interruptions += full;
  };
  for (size_t i = 0; i < kSamplerCount; i++)
    add_full(SamplerId(i), stack_taken(SamplerId(i)) == StackTaken::at_poll ? g_state.ended_ring_full
                                                                          : g_state.ended_walks_full[i]);
  for (ThreadSampling* st : g_state.threads) {
    for (size_t i = 0; i < kSamplerCount; i++)
      add_full(SamplerId(i), stack_taken(SamplerId(i)) == StackTaken::at_poll ? st->ring_full.load()
                                                                            : st->walks_full[i].load());
    for (uint64_t left = st->ring.size(); left > 0; left--)
      record_request_failure(profile, Reason::program_ended_before_poll, nullptr, st->thread_id);
  }
  for (uint64_t n = g_state.orphan_signals.load(); n > 0; n--)
    for (size_t i = 0; i < kSamplerCount; i++)
      if (g_state.want[i]) record_failure(profile, SamplerId(i), Reason::thread_gone, 0, 0, 0);
}

}  // namespace

void merge_profile() {
  std::lock_guard<std::mutex> threads_lock(g_state.threads_mutex);
  Profile& profile = g_state.profile;
  std::vector<EventBuffer*> buffers{&g_state.sampler_events, &g_state.ended_events};
  for (ThreadSampling* st : g_state.threads) buffers.push_back(&st->events);
  for (EventBuffer* buf : buffers) {
    std::lock_guard<std::mutex> lock(buf->mutex);
    merge_into(profile, *buf);
    buf->part = Profile();
    buf->compact.clear();
    buf->compact_ids.clear();
  }
  std::stable_sort(profile.events.begin(), profile.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  profile.duration_ns = now_ns() - profile.duration_ns;
  profile.sampler_cpu_ns = std::move(g_state.visit_cpu_ns);
  profile.sampler_thread_cpu_ns = g_state.sampler_total_cpu_ns;
  account_unserved(profile);
  runtime::UnloadTotals u = runtime::unload_totals();
  profile.unloading = CodeUnloading{u.retired, u.freed, u.rounds, u.kept_in_use, u.unwalkable_rounds};
}

}  // namespace sampler
