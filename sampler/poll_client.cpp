// At the thread's next poll (the poll the handler armed), in ordinary context on the
// sampled thread itself: every request in its ring is served. The thread walks its own
// stack once, now walkable, and for each request records
//   - cooperative (JEP 518): the sampled stack rebuilt from the request (reconstruct.cpp),
//     or, when it cannot be, the poll-site stack as a biased sample with the reason;
//   - safepoint: the poll-site stack, biased by construction (reason taken_at_poll);
//   - for both, once, the safepoint latency (signal -> served at this poll).
// A failed request (the thread was not in Java) is a FailedSample for both. Everything
// goes to the thread's own event buffer, as compact (Method*, bci) traces.
#include "runtime/code_unloading.h"
#include "runtime/stack_walker.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

class CooperativeClient : public runtime::PollClient {
 public:
  void on_poll(runtime::Thread* t) override {
    ThreadSampling* st = sampling_of(t);
    if (st == nullptr) return;
    SampleRequest r;
    bool walked = false;
    std::vector<runtime::Frame> frames;
    while (st->ring.pop(r)) {
      if (!walked) {
        frames = runtime::frames_from_anchor(t);
        walked = true;
      }
      uint64_t served = now_ns();
      EventBuffer& b = st->events;
      if (r.kind == RequestKind::failed) {
        std::lock_guard<std::mutex> lock(b.mutex);
        record_request_failure(b, r.reason, r, st->thread_id);
        continue;
      }
      bool cooperative = g_state.wants(SamplerId::cooperative), safepoint = g_state.wants(SamplerId::safepoint);
      // Compact traces (Method*, bci): hashed and interned without a string in sight.
      CompactTrace trace;
      std::optional<Reason> failure = cooperative ? reconstruct(r, frames, trace) : std::nullopt;
      std::lock_guard<std::mutex> lock(b.mutex);  // its own: hardly ever contended
      uint32_t poll_site = (safepoint || failure) ? b.intern(compact_trace(frames, 0)) : 0;
      uint32_t used = poll_site;  // the stack the latency event names
      if (cooperative) {
        // The request's raw pcs checked against the code freed since the interruption.
        if ((r.pc != 0 && runtime::pc_freed_since(r.pc, r.freed_seq)) ||
            (r.caller_pc != 0 && runtime::pc_freed_since(r.caller_pc, r.freed_seq)))
          b.part.stats[SamplerId::cooperative].freed_code++;
        if (!failure) used = b.intern(trace);
        record_sample(b, SamplerId::cooperative, r.id, r.ticks, r.held_ns, st->thread_id, used, failure, false);
      }
      if (safepoint)
        record_sample(b, SamplerId::safepoint, r.id, r.ticks, r.held_ns, st->thread_id, poll_site,
                      biased_by_construction(SamplerId::safepoint), false);
      record_latency(b, r, st->thread_id, used, served);
    }
  }
};

CooperativeClient g_client;

}  // namespace

runtime::PollClient& poll_client() { return g_client; }

}  // namespace sampler
