// Where samples are written while the program runs: each Mini thread's ThreadSampling
// (created when the thread starts, recorded and freed when it ends) with its own event
// buffer, and the functions that record a sample, a latency or a failure into a
// buffer's part of the profile (the caller holds that buffer's mutex). Each event's
// counters go to its sampler's stats in the same call, so events and counters agree.
#include <algorithm>

#include "sampler/profiler_state.h"

namespace sampler {

size_t CompactTraceHash::operator()(const CompactTrace& t) const {
  uint64_t h = 1469598103934665603ull ^ t.size();
  for (const CompactFrame& f : t) {
    uint64_t v = reinterpret_cast<uintptr_t>(f.method) ^ reinterpret_cast<uintptr_t>(f.stub) ^
                 (uint64_t(uint32_t(f.bci)) << 40) ^ (uint64_t(f.kind) << 60);
    h = (h ^ v) * 1099511628211ull;
  }
  return size_t(h);
}

uint32_t EventBuffer::intern(const CompactTrace& t) {
  auto [it, fresh] = compact_ids.try_emplace(t, uint32_t(compact.size()));
  if (fresh) compact.push_back(t);
  return it->second;
}

void on_thread(runtime::Thread* t, bool starting) {
  if (starting) {
    auto* st = new ThreadSampling();
    st->thread = t;
    st->thread_id = t->id;
    {
      std::lock_guard<std::mutex> lock(g_state.threads_mutex);
      g_state.threads.push_back(st);
    }
    t->sampler_state.store(st, std::memory_order_release);
    return;
  }
  // The thread is ending (on itself, after its last poll; its tid is cleared, so the
  // sampler sends no new signal). Under threads_mutex the sampler thread is not using
  // its state, and once it is unhooked a signal still pending finds no state (a
  // thread_gone failure): a handler runs on this thread, so one that started before the
  // unhooking has finished before the next line here runs.
  ThreadSampling* st = sampling_of(t);
  if (st == nullptr) return;
  {
    std::lock_guard<std::mutex> threads_lock(g_state.threads_mutex);
    t->sampler_state.store(nullptr, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // What will never be served: requests still in its ring; what its handlers walked.
    {
      std::lock_guard<std::mutex> lock(st->events.mutex);
      SampleRequest r;
      while (st->ring.pop(r)) record_request_failure(st->events.part, Reason::thread_ended_before_poll, &r, st->thread_id);
    }
    drain_walks(st);
    // Its events and counters outlive it; its rings and arena (most of its memory) do not.
    {
      std::lock_guard<std::mutex> lock(g_state.ended_events.mutex);
      std::lock_guard<std::mutex> own(st->events.mutex);
      merge_into(g_state.ended_events.part, st->events);
    }
    g_state.ended_ring_full += st->ring_full.load();
    for (size_t i = 0; i < kSamplerCount; i++) g_state.ended_walks_full[i] += st->walks_full[i].load();
    auto& live = g_state.threads;
    live.erase(std::find(live.begin(), live.end(), st));
  }
  delete st;
}

namespace {

// An event's common fields: which method, which interruption, which thread, when.
Event event(EventType type, SamplerId sampler, uint64_t id, int thread, uint64_t ticks) {
  Event e;
  e.type = type;
  e.sampler = sampler;
  e.sample = id;
  e.thread = thread;
  e.time_ns = ticks;
  return e;
}

}  // namespace

void record_sample(Profile& p, SamplerId sampler, uint64_t id, uint64_t ticks, uint64_t held, int thread,
                   uint32_t stack, std::optional<Reason> biased, bool truncated) {
  SamplerStats& s = p.stats[sampler];
  s.interruptions++;
  s.samples++;
  s.suspension_ns.push_back(held);
  if (truncated) s.truncated++;
  Event e = event(EventType::ExecutionSample, sampler, id, thread, ticks);
  e.biased = biased.has_value();
  if (biased) {
    e.reason = biased;
    s.biased[*biased]++;
  }
  e.stack = stack;
  p.events.push_back(e);
}

void record_native(Profile& p, uint64_t id, uint64_t ticks, uint64_t held, int thread, uint32_t stack) {
  for (SamplerId sampler : g_state.options.samplers) {  // every sampler sees the same native sample
    SamplerStats& s = p.stats[sampler];
    s.interruptions++;
    s.samples++;
    s.suspension_ns.push_back(held);
    Event e = event(EventType::NativeMethodSample, sampler, id, thread, ticks);
    e.stack = stack;
    p.events.push_back(e);
  }
}

void record_latency(Profile& p, const SampleRequest& r, int thread, uint32_t stack, uint64_t served_ns) {
  SamplerStats& s = p.stats[SamplerId::cooperative];
  Event l = event(EventType::SafepointLatency, SamplerId::cooperative, r.id, thread, r.ticks);
  l.latency_ns = served_ns - r.ticks;
  l.stack = stack;
  s.latency_ns.push_back(l.latency_ns);
  p.events.push_back(l);
}

void record_failure(Profile& p, SamplerId sampler, Reason reason, uint64_t id, uint64_t ticks, int thread) {
  SamplerStats& s = p.stats[sampler];
  s.interruptions++;
  s.failed[reason]++;
  if (id == 0) return;
  Event e = event(EventType::FailedSample, sampler, id, thread, ticks);
  e.reason = reason;
  p.events.push_back(e);
}

void record_request_failure(Profile& p, Reason reason, const SampleRequest* r, int thread) {
  for (size_t i = 0; i < kSamplerCount; i++)
    if (stack_taken(SamplerId(i)) == StackTaken::at_poll && g_state.want[i])
      record_failure(p, SamplerId(i), reason, r ? r->id : 0, r ? r->ticks : 0, thread);
}

}  // namespace sampler
