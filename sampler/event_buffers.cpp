// Where samples are written while the program runs: each Mini thread's ThreadSampling
// (created when the thread starts, recorded and freed when it ends) with its own event
// buffer, and the functions that record a sample, a latency or a failure into a
// buffer's part of the profile (the caller holds that buffer's mutex). Each event's
// counters go to its sampler's stats in the same call, so events and counters agree.
#include <algorithm>
#include <bit>

#include "sampler/profiler_state.h"
#include "sampler/profile/report.h"

namespace sampler {

size_t TraceNodeHash::operator()(const TraceNode& n) const {
  const CompactFrame& f = n.frame;
  uint64_t v = reinterpret_cast<uintptr_t>(f.method) ^ reinterpret_cast<uintptr_t>(f.stub) ^
               (uint64_t(uint32_t(f.bci)) << 40) ^ (uint64_t(f.kind) << 60) ^ (f.pc * 0x9e3779b1u);
  uint64_t h = (v ^ (uint64_t(n.caller) * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return size_t(h ^ (h >> 32));
}

uint32_t TraceTree::push(uint32_t caller, const CompactFrame& frame) {
  uint32_t last = nodes_[caller].last_callee;
  if (last != UINT32_MAX && nodes_[last].frame == frame) return last;
  TraceNode n{caller, frame, nodes_[caller].depth + 1, nodes_[caller].truncated};
  auto [it, fresh] = ids_.try_emplace(n, uint32_t(nodes_.size()));
  if (fresh) nodes_.push_back(n);
  nodes_[caller].last_callee = it->second;
  return it->second;
}

uint32_t TraceTree::intern(const CompactTrace& t, uint32_t below) {
  uint32_t node = below;
  for (size_t i = t.size(); i-- > 0;) node = push(node, t[i]);
  return node;
}

CompactTrace TraceTree::trace(uint32_t node) const {
  CompactTrace t;
  t.reserve(nodes_[node].depth);
  for (; node != kEmpty && node != kCut; node = nodes_[node].caller) t.push_back(nodes_[node].frame);
  return t;
}

uint32_t TraceTree::cut(uint32_t node, uint32_t limit) {
  if (nodes_[node].depth <= limit) return node;
  CompactTrace top = trace(node);
  top.resize(limit);
  return intern(top, kCut);
}

uint32_t depth_limit(SamplerId s) {
  uint32_t limit = g_state.plan().options.stack_depth;
  bool guessing = s == SamplerId::classical || s == SamplerId::async;
  return guessing ? std::min(limit, kGuessDepthLimit) : limit;
}

size_t handler_arena_frames() {
  // What one interruption's handler walks can write, each sampler's deepest walk with its
  // C/C++ frames; room for two such interruptions between the sampler thread's drains.
  size_t per_interruption = 0;
  for (SamplerId s : g_state.plan().options.samplers)
    if (stack_taken(s) == StackTaken::in_handler)
      per_interruption += depth_limit(s) + (g_state.plan().options.native_frames ? kNativeWalkMax : 0);
  return std::bit_ceil(std::max<size_t>(1024, 2 * per_interruption));
}

std::vector<ThreadSampling*>& live_threads() {
  size_t known = g_state.threads.live.size();
  for (ThreadSampling* s = g_state.threads.started.exchange(nullptr, std::memory_order_acquire); s != nullptr;
       s = s->next_started)
    g_state.threads.live.push_back(s);
  std::reverse(g_state.threads.live.begin() + long(known), g_state.threads.live.end());  // the list is newest first
  return g_state.threads.live;
}

void on_thread(runtime::Thread* t, bool starting) {
  if (starting) {
    auto* st = new ThreadSampling();
    if (g_state.plan().options.native_frames) st->native = std::make_unique<NativeWalkBuffers>();
    // (Not value-initialised: that would write the whole arena.)
    if (g_state.plan().want_handler_walks) st->walks.reset(new HandlerWalks(handler_arena_frames()));
    st->thread = t;
    st->thread_id = t->id;
    ThreadSampling* newest = g_state.threads.started.load(std::memory_order_relaxed);
    do {
      st->next_started = newest;
    } while (!g_state.threads.started.compare_exchange_weak(newest, st, std::memory_order_release, std::memory_order_relaxed));
    t->sampler_state.store(st, std::memory_order_release);
    return;
  }
  // The thread is ending (on itself, after its last poll; its tid is cleared, so the
  // sampler sends no new signal). Under the registry's mutex the sampler thread is not
  // using its state, and once it is unhooked a signal still pending finds no state (it is
  // counted here, thread_gone): a handler runs on this thread, so one that started
  // before the unhooking has finished before the next line here runs.
  ThreadSampling* st = sampling_of(t);
  if (st == nullptr) return;
  {
    std::lock_guard<std::mutex> threads_lock(g_state.threads.mutex);
    t->sampler_state.store(nullptr, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // What will never be served: requests still stored, signals still pending (a
    // handler that runs from now on finds no state and leaves no trace); what its
    // handlers walked and the requests its store left out.
    {
      std::lock_guard<std::mutex> lock(st->events.mutex);
      auto never_served = [&](const SampleRequest& r, uint64_t) {
        record_request_failure(st->events, Reason::thread_ended_before_poll, r, st->thread_id);
      };
      while (st->requests.take(never_served)) {
      }
      if (st->take_pending_signal()) count_failure_all(st->events.part, Reason::thread_gone);
    }
    drain_walks(st);
    // Its events and counters outlive it; its rings and arena (most of its memory) do not.
    {
      std::lock_guard<std::mutex> lock(g_state.threads.ended_events.mutex);
      std::lock_guard<std::mutex> own(st->events.mutex);
      st->events.flush_streams();
      merge_into(g_state.threads.ended_events.part, st->events);
    }
    g_state.threads.ended_ring_full += st->ring_full.load();
    for (size_t i = 0; i < kSamplerCount; i++) g_state.threads.ended_walks_full[i] += st->walks_full[i].load();
    auto& live = live_threads();
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

bool served_at_poll(SamplerId s) { return stack_taken(s) == StackTaken::at_poll && g_state.plan().wants(s); }

}  // namespace

void EventBuffer::emit(const Event& e) {
  if (is_stack_sample(e)) part.add_sample(e);
  bool jsonl = g_state.jsonl.is_open(), jfr = g_state.jfr.is_open();
  if (jsonl) jsonl_events.push_back(e);  // its line is made when it is written (take_streams)
  if (jfr) {
    uint64_t key = 0;
    if (has_stack(e.type)) {
      if (jfr_stack_keys.size() <= e.stack) jfr_stack_keys.resize(e.stack + 1);
      if (jfr_stack_keys[e.stack] == 0) {
        bool truncated = compact_stacks ? compact.truncated(e.stack) : part.stacks.truncated(e.stack);
        jfr_stack_keys[e.stack] = g_state.jfr.stack_id(stack_trace(e.stack), truncated);
      }
      key = jfr_stack_keys[e.stack];
    }
    g_state.jfr.encode(jfr_events, e, key);
  }
  if (jsonl_events.size() < kStreamPendingEvents && jfr_events.size() < kStreamBlock) return;
  // The dump thread is behind (or a .jfr block is full): write them from here, unless a
  // writer is at this buffer now, which takes the lock in the other order.
  std::unique_lock<std::mutex> stream(stream_mutex, std::try_to_lock);
  if (stream) write_streams();
}

StackTrace EventBuffer::stack_trace(uint32_t stack) const {
  return compact_stacks ? named(compact.trace(stack)) : part.stacks.get(stack);
}

void EventBuffer::take_streams(std::string& jfr) {
  for (const Event& e : jsonl_events) {
    if (!has_stack(e.type)) continue;
    if (stack_json.size() <= e.stack) stack_json.resize(e.stack + 1);
    StackJson& sj = stack_json[e.stack];
    if (sj.taken) continue;
    sj.taken = true;
    sj.truncated = compact_stacks ? compact.truncated(e.stack) : part.stacks.truncated(e.stack);
    stacks_taken.emplace_back(e.stack, stack_trace(e.stack));  // its text is made without `mutex`
  }
  jsonl_taken.swap(jsonl_events);  // both keep their room: no allocation once warm
  jfr += jfr_events;
  jfr_events.clear();
}

void EventBuffer::make_lines(std::string& lines) {
  for (const auto& [stack, trace] : stacks_taken) append_stack_json(stack_json[stack].text, trace);
  stacks_taken.clear();
  for (const Event& e : jsonl_taken) {
    if (!has_stack(e.type)) {
      append_event_line(lines, e, {}, false);
    } else {
      const StackJson& sj = stack_json[e.stack];
      append_event_line(lines, e, sj.text, sj.truncated);
    }
    // Written a block at a time: a line of a 2,048-frame stack is about 100 KB, and the
    // events of 100 ms at --sampler=all made into one string were tens of megabytes.
    if (lines.size() >= kStreamBlock) {
      g_state.jsonl.append(lines);
      lines.clear();
    }
  }
  jsonl_taken.clear();
}

void EventBuffer::flush_streams() {
  // Waited for under `mutex` and the registry's: a writer that holds stream_mutex took
  // both before it (merge.cpp's flush_streams) and lets them go before it makes lines, or
  // is this very thread (emit). So nothing that holds it waits for either.
  std::lock_guard<std::mutex> stream(stream_mutex);
  write_streams();
}

void EventBuffer::write_streams() {
  std::string lines, jfr_bytes;
  take_streams(jfr_bytes);
  make_lines(lines);
  if (!lines.empty()) g_state.jsonl.append(lines);
  if (!jfr_bytes.empty()) g_state.jfr.append(jfr_bytes);
}

void record_sample(EventBuffer& b, SamplerId sampler, uint64_t id, uint64_t ticks, uint64_t held, int thread,
                   uint32_t stack, std::optional<Reason> biased, bool truncated, uint64_t weight) {
  SamplerStats& s = b.part.stats[sampler];
  s.samples++;
  s.represented += weight - 1;
  s.suspension_ns.push_back(held);
  if (truncated) s.truncated++;
  Event e = event(EventType::ExecutionSample, sampler, id, thread, ticks);
  e.biased = biased.has_value();
  if (biased) {
    e.reason = biased;
    s.biased[*biased]++;
  }
  e.stack = stack;
  e.count = weight;
  b.emit(e);
}

void record_native(EventBuffer& b, uint64_t id, uint64_t ticks, uint64_t held, int thread, uint32_t stack,
                   bool truncated) {
  for (SamplerId sampler : g_state.plan().options.samplers) {  // every sampler sees the same native sample
    SamplerStats& s = b.part.stats[sampler];
    s.samples++;
    if (truncated) s.truncated++;
    s.suspension_ns.push_back(held);
    Event e = event(EventType::NativeMethodSample, sampler, id, thread, ticks);
    e.stack = stack;
    b.emit(e);
  }
}

void record_latency(EventBuffer& b, const SampleRequest& r, int thread, uint32_t stack, uint64_t served_ns,
                    uint64_t served_cpu_ns) {
  // One wait serves every sampler that takes its stack at the poll: each counts it, one
  // event (the first such sampler's) records it. Its time on a CPU is read on the same
  // thread at both ends, inside the wall-clock interval.
  uint64_t cpu = served_cpu_ns > r.cpu_ticks ? std::min(served_cpu_ns - r.cpu_ticks, served_ns - r.ticks) : 0;
  std::optional<SamplerId> first;
  for (SamplerId sampler : g_state.plan().options.samplers) {
    if (stack_taken(sampler) != StackTaken::at_poll) continue;
    b.part.stats[sampler].latency_ns.push_back(served_ns - r.ticks);
    b.part.stats[sampler].latency_cpu_ns.push_back(cpu);
    if (!first) first = sampler;
  }
  if (!first) return;
  Event l = event(EventType::SafepointLatency, *first, r.id, thread, r.ticks);
  l.latency_ns = served_ns - r.ticks;
  l.cpu_ns = cpu;
  l.stack = stack;
  b.emit(l);
}

void record_failure(EventBuffer& b, SamplerId sampler, Reason reason, uint64_t id, uint64_t ticks, int thread) {
  b.part.stats[sampler].failed[reason]++;
  if (id == 0) return;
  Event e = event(EventType::FailedSample, sampler, id, thread, ticks);
  e.reason = reason;
  b.emit(e);
}

void record_left_out(EventBuffer& b, uint64_t id, uint64_t ticks, int thread, std::optional<SamplerId> walk) {
  for (SamplerId sampler : g_state.plan().options.samplers) {
    if (walk ? sampler != *walk : !served_at_poll(sampler)) continue;
    b.part.stats[sampler].dropped[Reason::ring_full]++;
    Event e = event(EventType::DroppedSample, sampler, id, thread, ticks);
    e.reason = Reason::ring_full;
    b.emit(e);
  }
}

void count_interruption(Profile& p) {
  for (SamplerId sampler : g_state.plan().options.samplers) p.stats[sampler].interruptions++;
}

void record_failure_all(EventBuffer& b, Reason reason, uint64_t id, uint64_t ticks, int thread) {
  for (SamplerId sampler : g_state.plan().options.samplers) record_failure(b, sampler, reason, id, ticks, thread);
}

void record_request_failure(EventBuffer& b, Reason reason, const SampleRequest& r, int thread) {
  for (SamplerId sampler : g_state.plan().options.samplers)
    if (served_at_poll(sampler)) record_failure(b, sampler, reason, r.id, r.ticks, thread);
}

void count_failure_all(Profile& p, Reason reason) {
  for (SamplerId sampler : g_state.plan().options.samplers) p.stats[sampler].failed[reason]++;
}

void count_request_failure(Profile& p, Reason reason) {
  for (SamplerId sampler : g_state.plan().options.samplers)
    if (served_at_poll(sampler)) p.stats[sampler].failed[reason]++;
}

}  // namespace sampler
