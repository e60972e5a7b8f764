// At exit, and at every dump while the program runs: every event buffer (the sampler
// thread's, the ended threads' and each live Mini thread's) merged into one profile, and
// what has not ended accounted: full rings (dropped), and requests still waiting in a
// ring and signals still pending (failed at exit; in flight in a dump). The buffers keep
// what they hold, so a dump changes nothing for the next one.
#include <time.h>

#include <algorithm>
#include <utility>

#include "runtime/code_unloading.h"
#include "runtime/vm.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

void merge_schedule(Profile::Schedule& to, const Profile::Schedule& from) {
  to.periods += from.periods;
  to.periods_missed += from.periods_missed;
  to.visits_due += from.visits_due;
  to.visits_missed += from.visits_missed;
  to.not_running += from.not_running;
  to.period_ns.merge(from.period_ns);
}

}  // namespace

void merge_into(Profile& to, const EventBuffer& buf) {
  const Profile& from = buf.part;
  for (const auto& [sampler, s] : from.stats) {
    SamplerStats& t = to.stats[sampler];
    t.interruptions += s.interruptions;
    t.samples += s.samples;
    t.represented += s.represented;
    t.truncated += s.truncated;
    t.freed_code += s.freed_code;
    for (const auto& [r, n] : s.failed) t.failed[r] += n;
    for (const auto& [r, n] : s.biased) t.biased[r] += n;
    for (const auto& [r, n] : s.dropped) t.dropped[r] += n;
    t.suspension_ns.merge(s.suspension_ns);
    t.latency_ns.merge(s.latency_ns);
    t.latency_cpu_ns.merge(s.latency_cpu_ns);
  }
  to.sampler_cpu_ns.merge(from.sampler_cpu_ns);
  to.sampler_thread_cpu_ns += from.sampler_thread_cpu_ns;
  to.poll_walks.polls += from.poll_walks.polls;
  to.poll_walks.frames_walked += from.poll_walks.frames_walked;
  to.poll_walks.frames_cached += from.poll_walks.frames_cached;
  to.poll_walks.time_ns.merge(from.poll_walks.time_ns);
  merge_schedule(to.schedule, from.schedule);
  std::vector<int64_t> named_id(buf.compact.size(), -1);  // each compact trace named once
  for (Event e : from.events) {
    if (!buf.compact_stacks) {
      e.stack = to.stacks.intern(from.stacks.get(e.stack), from.stacks.truncated(e.stack));
    } else {
      if (named_id[e.stack] < 0)
        named_id[e.stack] = to.stacks.intern(named(buf.compact.trace(e.stack)), buf.compact.truncated(e.stack));
      e.stack = uint32_t(named_id[e.stack]);
    }
    to.add_sample(e);
  }
}

namespace {

// What the handlers counted (the ended threads' and the live ones'), and, for the live
// threads, requests still waiting in rings and signals still pending: at exit (a thread
// still running when the program ends, e.g. after a runtime error elsewhere) failures; in
// a dump, what is in flight.
void account_unserved(Profile& profile, bool final) {
  auto add_full = [&](SamplerId s, uint64_t full) {
    if (g_state.plan().wants(s)) profile.stats[s].dropped[Reason::ring_full] += full;
  };
  for (size_t i = 0; i < kSamplerCount; i++)
    add_full(SamplerId(i), stack_taken(SamplerId(i)) == StackTaken::at_poll ? g_state.threads.ended_ring_full
                                                                          : g_state.threads.ended_walks_full[i]);
  for (ThreadSampling* st : live_threads()) {
    for (size_t i = 0; i < kSamplerCount; i++)
      add_full(SamplerId(i), stack_taken(SamplerId(i)) == StackTaken::at_poll ? st->ring_full.load()
                                                                            : st->walks_full[i].load());
  }
  if (!final) {
    for (auto& [sampler, st] : profile.stats) st.in_flight = st.interruptions > ended(st) ? st.interruptions - ended(st) : 0;
    return;
  }
  for (uint64_t n = g_state.signals.not_delivered.load(std::memory_order_relaxed); n > 0; n--)
    count_failure_all(profile, Reason::signal_not_delivered);
  if (uint64_t left = g_state.signals.handlers_left.load(std::memory_order_relaxed); left > 0)
    for (size_t i = 0; i < kSamplerCount; i++)
      if (g_state.plan().wants(SamplerId(i))) profile.stats[SamplerId(i)].in_flight += left;
}

// A live thread's buffer, and at exit the requests still stored for it (failures), under
// the buffer's lock: the thread's poll takes and records under it, so each request is
// counted once, stored or as recorded.
void merge_thread(Profile& profile, ThreadSampling* st, bool final) {
  std::lock_guard<std::mutex> lock(st->events.mutex);
  merge_into(profile, st->events);
  if (final)
    for (uint64_t left = st->requests.pending(); left > 0; left--)
      count_request_failure(profile, Reason::program_ended_before_poll);
}

std::vector<EventBuffer*> all_buffers() {
  std::vector<EventBuffer*> buffers{&g_state.sampler.events, &g_state.threads.ended_events};
  for (ThreadSampling* st : live_threads()) buffers.push_back(&st->events);
  return buffers;
}

}  // namespace

// A handler runs for microseconds on a CPU; at exit its thread may be kept off every CPU
// far longer: a loaded machine, or a Mini thread lowered to SCHED_IDLE by the exit
// (runtime::idle_other_mini_threads), which runs only while this thread sleeps.
constexpr uint64_t kHandlerWaitNs = 2'000'000'000;

void settle_handlers() {
  uint64_t not_delivered = 0;
  {
    std::unique_lock<std::mutex> threads_lock = lock_threads();
    for (ThreadSampling* st : live_threads()) not_delivered += st->take_pending_signal();
  }
  g_state.signals.not_delivered.store(not_delivered, std::memory_order_relaxed);
  uint64_t deadline = now_ns() + kHandlerWaitNs;
  for (;;) {
    uint64_t running = 0;
    {
      std::unique_lock<std::mutex> threads_lock = lock_threads();
      for (ThreadSampling* st : live_threads())
        running += st->signal.load(std::memory_order_acquire) == ThreadSampling::kInHandler;
    }
    if (running == 0 || now_ns() >= deadline) {
      g_state.signals.handlers_left.store(running, std::memory_order_relaxed);
      return;
    }
    timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
}

std::unique_lock<std::mutex> lock_threads() {
  g_state.threads.waiters.fetch_add(1, std::memory_order_acq_rel);
  std::unique_lock<std::mutex> lock(g_state.threads.mutex);
  g_state.threads.waiters.fetch_sub(1, std::memory_order_acq_rel);
  return lock;
}

Profile snapshot_profile(bool final) {
  std::unique_lock<std::mutex> threads_lock = lock_threads();
  Profile profile;
  profile.program = g_state.profile.program;
  profile.files = g_state.profile.files;
  profile.function_files = g_state.profile.function_files;
  profile.samplers = g_state.profile.samplers;
  profile.interval_ns = g_state.profile.interval_ns;
  profile.interval_jitter = g_state.profile.interval_jitter;
  profile.slowdowns = g_state.profile.slowdowns;
  profile.debug_info_at_safepoints = g_state.profile.debug_info_at_safepoints;
  for (SamplerId s : profile.samplers) profile.stats[s];
  for (EventBuffer* buf : {&g_state.sampler.events, &g_state.threads.ended_events}) {
    std::lock_guard<std::mutex> lock(buf->mutex);
    merge_into(profile, *buf);
  }
  for (ThreadSampling* st : live_threads()) merge_thread(profile, st, final);
  profile.sort_by_time();
  profile.duration_ns = now_ns() - g_state.plan().start_ns;
  uint64_t limit = g_state.plan().options.duration_ns;  // -d: sampling stopped there
  if (limit > 0 && profile.duration_ns > limit) profile.duration_ns = limit;
  account_unserved(profile, final);
  runtime::UnloadTotals u = runtime::unload_totals();
  profile.unloading = CodeUnloading{u.retired, u.freed, u.rounds, u.kept_in_use, u.unwalkable_rounds};
  if (!profile.slowdowns.empty()) profile.slowdown_passes = runtime::VM::get().slowdown_passes();
  {
    std::lock_guard<std::mutex> lock(g_state.collections.mutex);
    profile.collections = g_state.collections.totals;
  }
  return profile;
}

void flush_streams() {
  // Each buffer's events are taken under the registry's mutex (a thread that ends frees
  // its buffer under it) and its own, briefly; their lines are made after both are
  // released, so that neither the sampler thread's visits nor the recording threads wait
  // for the JSON. Each buffer's stream_mutex is held until its lines are written: its
  // thread's own write cannot overtake them, and a thread that ends waits for them before
  // its buffer is freed. Lines of several buffers go out in one write.
  std::vector<std::pair<EventBuffer*, std::unique_lock<std::mutex>>> taken;
  std::string batch, jfr_batch;
  {
    std::unique_lock<std::mutex> threads_lock = lock_threads();
    for (EventBuffer* buf : all_buffers()) {
      std::unique_lock<std::mutex> stream(buf->stream_mutex);
      std::lock_guard<std::mutex> lock(buf->mutex);
      if (buf->jsonl_events.empty() && buf->jfr_events.empty()) continue;
      buf->take_streams(jfr_batch);
      taken.emplace_back(buf, std::move(stream));
    }
  }
  size_t unwritten = 0;  // the first of `taken` whose lines are not written yet
  auto write_batch = [&](size_t made) {
    if (!batch.empty()) g_state.jsonl.append(batch);
    if (!jfr_batch.empty()) g_state.jfr.append(jfr_batch);
    batch.clear();
    jfr_batch.clear();
    for (; unwritten < made; unwritten++) taken[unwritten].second.unlock();
  };
  for (size_t i = 0; i < taken.size(); i++) {
    taken[i].first->make_lines(batch);
    if (batch.size() >= kStreamBlock) write_batch(i + 1);
  }
  write_batch(taken.size());
}

}  // namespace sampler
