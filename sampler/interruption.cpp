// The interruption: where a sample begins. The sampler thread sent SIGPROF to a thread in
// Java; its handler runs here, on that thread, with the interrupted registers. It does
// only what is async-signal-safe: the handler walks of async and oracle (into the
// thread's frame arena), the sample request for cooperative and safepoint (stored for
// the thread's next poll, which it arms), or, when the sampler thread must hold the
// thread (classical, --suspend=handshake), publishing the registers and waiting.
#include <sched.h>
#include <ucontext.h>

#include <cerrno>

#include "runtime/code_blob.h"
#include "runtime/code_unloading.h"
#include "runtime/frame.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/return_barrier.h"
#include "runtime/thread.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

Registers registers_of(const ucontext_t* uc, const runtime::Thread* t) {
  const greg_t* g = uc->uc_mcontext.gregs;
  Registers regs{uintptr_t(g[REG_RIP]), uintptr_t(g[REG_RSP]), uintptr_t(g[REG_RBP]),
                 uintptr_t(g[REG_RBX]), uintptr_t(g[REG_R13]), uintptr_t(g[REG_RAX]),
                 uintptr_t(g[REG_RCX]), uintptr_t(g[REG_RDX]), uintptr_t(g[REG_R14]),
                 uintptr_t(g[REG_R10]), t->core.barrier_target};
  // Inside the return barrier the thread has returned and is on its way to its real
  // return pc: it is sampled in the frame it returns to, at the call it returned from (pc
  // - 1 lies in the call instruction; an interpreted caller's exact bcp is its frame's
  // copy, stored at the call). Nothing else ever sees a pc in the barrier.
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  // In the VM's own C++ on a thread marked in_java: a builtin that never leaves Java
  // (nanotime), or either end of a runtime call, whose transitions run in C++. The
  // generated caller's anchor is up until it clears it after the return and says exactly
  // where its Mini frame is: the thread is sampled there, at the call, as HotSpot's
  // samplers prefer the last Java frame to the context. (With no anchor, the thread is
  // starting or ending, and its pc stays unknown.)
  if (blob == nullptr && t->has_anchor()) {
    regs.sp = t->core.anchor.sp.load(std::memory_order_relaxed);
    regs.fp = t->core.anchor.fp;
    regs.pc = runtime::real_return_pc(t->core, t->core.anchor.pc) - 1;
    regs.in_vm_code = true;
    blob = runtime::find_blob(regs.pc);
    MVM_ASSERT(blob != nullptr, "an anchor's pc is a return address in generated code");
    if (blob != nullptr && blob->kind == runtime::BlobKind::interpreter)
      regs.r13 = stack_word(regs.fp + runtime::kInterpFrameBcpOffset);
    return regs;
  }
  if (blob != nullptr && blob->kind == runtime::BlobKind::return_barrier) {
    uintptr_t target = runtime::target_in_barrier(t->core, regs.pc, regs.r10);
    regs.pc = target - 1;
    const runtime::CodeBlob* caller = runtime::find_blob(regs.pc);
    if (caller != nullptr && caller->kind == runtime::BlobKind::interpreter)
      regs.r13 = stack_word(regs.fp + runtime::kInterpFrameBcpOffset);
  }
  return regs;
}

// Frames of a walk into the thread's arena.
class ArenaSink : public FrameSink {
 public:
  ArenaSink(ThreadSampling* st, uint64_t& cursor) : st_(st), cursor_(cursor) {}
  bool put(const CompactFrame& f) override { return st_->walks->arena.put(cursor_, f); }

 private:
  ThreadSampling* st_;
  uint64_t& cursor_;
};

// Where the handler's next walk goes in the arena (0 when no sampler walks there).
uint64_t arena_cursor(const ThreadSampling* st) { return st->walks != nullptr ? st->walks->arena.cursor() : 0; }

}  // namespace

void catch_poll_in_flight(runtime::Thread* t, ucontext_t* uc) {
  uintptr_t pc = uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
  const runtime::CodeBlob* blob = runtime::find_blob(pc);
  const runtime::PollSite* poll = blob != nullptr ? blob->find_poll(pc) : nullptr;
  if (poll == nullptr) return;
  if (poll->stub == 0)
    uc->uc_mcontext.gregs[REG_R10] = greg_t(t->core.poll_word.load(std::memory_order_acquire));
  else if (runtime::poll_armed(t))
    uc->uc_mcontext.gregs[REG_RIP] = greg_t(poll->stub);
}

namespace {

// JEP 518's handshake (and JFR's classical suspension): publish the context and wait
// while the sampler thread does its part (sampler_thread.cpp, held_sample). Only for a
// signal this handler took as kSentHold: the sampler then waits for this publication
// however long it takes, and lets the thread go once it has read it.
void publish_and_wait(runtime::Thread* t, ThreadSampling* st, const Registers& regs, bool in_java, uint64_t start,
                      uint64_t start_cpu, const void* context) {
  MVM_ASSERT(st->handshake.load(std::memory_order_acquire) == ThreadSampling::kIdle,
             "a held handler starts idle: the sampler let the last one go before it sent this signal");
  st->regs = regs;
  st->regs_in_java = in_java;
  st->handler_entry_ns = start;
  st->handler_entry_cpu_ns = start_cpu;
  st->pending_cursor = arena_cursor(st);
  st->pending_count = walk_in_handler(t, st, regs, in_java, context, st->pending_cursor, st->pending);
  // A thread in native code, held for --native-frames: the sampler thread merges this walk
  // with the Mini frames from its anchor (sampler_thread.cpp, sample_native).
  if (!in_java && st->native != nullptr)
    st->native->handler_walk = jit::walk_native_stack_from(context, st->native->handler, kNativeWalkMax, &t->core);
  st->handshake.store(ThreadSampling::kPublished, std::memory_order_release);
  // sched_yield is async-signal-safe; on a machine with fewer cores than threads the
  // sampler thread needs the core to finish the request.
  while (st->handshake.load(std::memory_order_acquire) == ThreadSampling::kPublished) sched_yield();
}

}  // namespace

WalkResult walk_interrupted(SamplerId sampler, runtime::Thread* t, const Registers& regs, bool in_java,
                            FrameSink& sink) {
  if (!in_java) return WalkResult{Reason::not_in_java};
  return walk_protected(/*exact=*/sampler == SamplerId::oracle, t, regs, sink, depth_limit(sampler));
}

int walk_in_handler(runtime::Thread* t, ThreadSampling* st, const Registers& regs, bool in_java, const void* context,
                    uint64_t& cursor, WalkRecord out[kHandlerWalks]) {
  int n = 0;
  size_t native = 0;  // classified frames of the libunwind walk, taken once for every sampler
  bool native_ok = false;
  // Only for the samplers that walk here (async, oracle): cooperative and safepoint take
  // their mixed stacks at the poll.
  if (st->native != nullptr && in_java && g_state.plan().want_handler_walks) {
    NativeWalkBuffers& nb = *st->native;
    // A frameless intrinsic stub has no unwind info (DESIGN.md): its frame table steps out
    // of it exactly, as the oracle does, and libunwind walks on from its caller.
    const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
    const runtime::StubFrame* sf =
        blob != nullptr && blob->kind == runtime::BlobKind::stub ? blob->stub_frame_at(regs.pc) : nullptr;
    if (sf != nullptr) {
      runtime::FramePos caller = step_out_of_stub(*sf, regs);
      nb.handler_walk = jit::walk_native_stack_from_caller(context, caller.pc, caller.sp, caller.fp, nb.handler,
                                                           kNativeWalkMax, &t->core);
      nb.classified[0] = CompactFrame{nullptr, nullptr, -1, FrameKind::jit};  // the stub's own frame
      native = 1;
    } else {
      nb.handler_walk = jit::walk_native_stack_from(context, nb.handler, kNativeWalkMax, &t->core);
    }
    native_ok = nb.handler_walk.end == jit::WalkEnd::end_of_stack;
    if (native_ok) native += classify(nb.handler, nb.handler_walk.count, sf == nullptr, nb.classified + native);
  }
  for (size_t i = 0; i < kSamplerCount; i++) {
    SamplerId id = SamplerId(i);
    if (stack_taken(id) != StackTaken::in_handler || !g_state.plan().wants(id)) continue;
    WalkRecord& w = out[n++];
    w = WalkRecord{};
    w.sampler = id;
    w.begin = cursor;
    ArenaSink sink(st, cursor);
    WalkResult r = walk_interrupted(id, t, regs, in_java, sink);
    w.failure = r.failure;
    w.biased = r.biased;
    w.truncated = r.truncated;
    w.freed_code = r.freed_code;
    if (r.failure) cursor = w.begin;  // a failed walk keeps no frames
    w.count = r.failure ? 0 : r.depth;
    if (st->native == nullptr || r.failure) continue;
    w.native_failed = !native_ok;
    for (size_t k = 0; k < native && !w.native_failed; k++) {
      if (!sink.put(st->native->classified[k])) {
        cursor = w.begin;
        w.count = 0;
        w.failure = Reason::arena_full;
        break;
      }
      w.native_count++;
    }
  }
  return n;
}

void push_walks(ThreadSampling* st, WalkRecord* recs, int n, uint64_t id, uint64_t ticks, uint64_t held,
                uint64_t cursor) {
  if (st->walks == nullptr) return;  // no sampler walks in the handler
  st->walks->arena.commit(cursor);
  for (int i = 0; i < n; i++) {
    recs[i].id = id;
    recs[i].ticks = ticks;
    recs[i].held_ns = held;
    if (!st->walks->records.push(recs[i]) && !st->pass_on({id, ticks, recs[i].sampler}))
      st->walks_full[size_t(recs[i].sampler)].fetch_add(1, std::memory_order_relaxed);
  }
}

SampleRequest request_for(const Registers& regs, bool in_java) {
  if (in_java) return build_request(regs, g_state.plan().options.stub_metadata);
  SampleRequest r;
  r.kind = RequestKind::failed;
  r.reason = Reason::not_in_java;
  return r;
}

void push_request(runtime::Thread* t, ThreadSampling* st, SampleRequest r, uint64_t id, uint64_t ticks,
                  uint64_t cpu_ticks, uint64_t held) {
  r.id = id;
  r.ticks = ticks;
  r.cpu_ticks = cpu_ticks;
  r.held_ns = held;
  r.freed_seq = runtime::freed_code_count();
  SampleRequest left_out;
  if (st->requests.offer(r, left_out) && !st->pass_on({left_out.id, left_out.ticks, std::nullopt}))
    st->ring_full.fetch_add(1, std::memory_order_relaxed);
  runtime::arm_poll(t);  // served at the thread's next poll (poll_client.cpp)
}

void on_sigprof(int, siginfo_t*, void* context) {
  int saved_errno = errno;
  uint64_t start = now_ns();
  runtime::Thread* t = runtime::Thread::current();
  ThreadSampling* st = t != nullptr ? sampling_of(t) : nullptr;
  // No state: the thread has ended, and counted this signal as thread_gone. Closed: the
  // profile is being merged, and counts it as signal_not_delivered.
  if (st == nullptr || g_state.signals.closed.load(std::memory_order_acquire)) {
    errno = saved_errno;
    return;
  }
  // Taken here, the interruption is this handler's to end, and no other signal is sent
  // until it returns (kInHandler, profiler_state.h). Not sent by the sampler, or withdrawn
  // (the sampler stopped waiting and ended it, hold_timed_out): no trace.
  int signal = st->signal.load(std::memory_order_acquire);
  bool ours;
  do {
    MVM_ASSERT(signal >= ThreadSampling::kNoSignal && signal <= ThreadSampling::kWithdrawn &&
                   signal != ThreadSampling::kInHandler,
               "the signal word holds a state, and no handler of it runs while this one starts");
    ours = signal == ThreadSampling::kSent || signal == ThreadSampling::kSentHold;
  } while (!st->signal.compare_exchange_weak(signal, ours ? ThreadSampling::kInHandler : ThreadSampling::kNoSignal,
                                             std::memory_order_acq_rel, std::memory_order_acquire));
  if (!ours) {
    errno = saved_errno;
    return;
  }
  // The thread runs its own code again once this returns: the sampler may signal it
  // (unless it already has: a hold for a native walk may be sent meanwhile).
  struct FreeOnReturn {
    ThreadSampling* st;
    ~FreeOnReturn() {
      int running = ThreadSampling::kInHandler;
      st->signal.compare_exchange_strong(running, ThreadSampling::kNoSignal, std::memory_order_acq_rel);
    }
  } free_on_return{st};
  if (uint64_t spin = g_state.plan().test_handler_spin_ns; spin > 0)
    while (now_ns() - start < spin) {
    }
  // The thread's CPU clock (a system call, where the wall clock is a vDSO read), only for
  // an interruption taken here and one that builds a request (whose latency it splits);
  // read after the wall clock, so the CPU interval lies within the wall one.
  uint64_t start_cpu = g_state.plan().want_request ? thread_cpu_ns() : 0;
  Registers regs = registers_of(static_cast<ucontext_t*>(context), t);
  // The thread may have left Java between the sampler's look and the signal: nothing to
  // sample, but the interruption is reported (a FailedSample for every sampler).
  bool in_java = t->get_state() == runtime::ThreadState::in_java;
  // Held: classical, --suspend=handshake, or a thread the sampler thread saw in native
  // code, signalled only to hold it for a --native-frames walk (it may have returned to
  // Java since: the sampler then lets it go).
  if (signal == ThreadSampling::kSentHold) {
    publish_and_wait(t, st, regs, in_java, start, start_cpu, context);
    if (in_java) catch_poll_in_flight(t, static_cast<ucontext_t*>(context));
    errno = saved_errno;
    return;
  }
  uint64_t cursor = arena_cursor(st);
  WalkRecord recs[kHandlerWalks];
  int n = walk_in_handler(t, st, regs, in_java, context, cursor, recs);
  SampleRequest r;
  if (g_state.plan().want_request) r = request_for(regs, in_java);
  uint64_t id = g_state.signals.next_sample.fetch_add(1, std::memory_order_relaxed);
  uint64_t held = now_ns() - start;
  push_walks(st, recs, n, id, start, held, cursor);
  if (g_state.plan().want_request) {
    push_request(t, st, r, id, start, start_cpu, held);
    if (in_java) catch_poll_in_flight(t, static_cast<ucontext_t*>(context));
  }
  errno = saved_errno;
}

}  // namespace sampler
