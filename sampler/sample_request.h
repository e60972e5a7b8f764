// SampleRequest: what an interruption records about a thread in Java (JEP 518's
// (pc, sp, bcp, ticks)), built from the interrupted registers in a few instructions and
// nothing else: no stack walk, no allocation, no locks.
#pragma once
#include <cstdint>

#include "sampler/profile/reasons.h"

namespace runtime {
struct Method;
}

namespace sampler {

enum class RequestKind : uint8_t {
  // pc in a compiled method with its frame in place (or being built): at the poll, the
  // sampled frame is the first whose real fp (runtime::real_fp) lies above `sp`; its pc becomes
  // `pc` (the bias correction).
  compiled,
  // pc in an interpreted method: at the poll, the frame whose fp is `fp`; its position
  // becomes `bcp`.
  interpreted,
  // The sampled frame is going away (after its return poll) or not built yet (method
  // entry): at the poll it no longer or not yet exists, so the sample is that method on
  // top of its caller, the frame whose fp is `caller_fp`. The top is `pc` in compiled
  // code, or `method` at `bcp` (bci 0 when bcp is null) in the interpreter.
  compiled_over_caller,
  interpreted_over_caller,
  // Nothing usable: `reason` says why (a biased sample from the poll site).
  unparsable,
  // pc in a frameless stub described by --stub-metadata: `pc` is the stub's return
  // address in its compiled caller and `sp` the caller's sp; rebuilt as the caller at
  // that call with a `stub` frame (`stub_name`) on top.
  stub,
  // No sample at all (e.g. the thread had left Java when the signal landed): a
  // FailedSample with `reason`, recorded at the thread's next poll.
  failed,
};

struct SampleRequest {
  uint64_t id = 0;        // the interruption's number (the `sample` field of events)
  uint64_t ticks = 0;     // CLOCK_MONOTONIC ns at the interruption
  uint64_t cpu_ticks = 0; // the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) ns, read just after
  uint64_t held_ns = 0;   // how long the thread was held for it
  uint64_t freed_seq = 0; // runtime::freed_code_count() at the interruption: code freed
                          // after it and named by pc or caller_pc was freed under the request
  RequestKind kind = RequestKind::unparsable;
  Reason reason = Reason::unknown_request;  // unparsable, failed: why
  uintptr_t pc = 0, sp = 0, fp = 0, caller_fp = 0;
  const uint8_t* bcp = nullptr;
  const runtime::Method* method = nullptr;
  const char* stub_name = nullptr;  // for stub requests: lives as long as the blob
  // *_over_caller: where the caller was at the interruption (its return address, and its
  // saved bcp when interpreted). By the poll it may have moved on; the sample must show
  // it at the call.
  uintptr_t caller_pc = 0;
  const uint8_t* caller_bcp = nullptr;
  bool in_vm_code = false;  // Registers::in_vm_code: with --native-frames, C/C++ frames the poll cannot see
};

// The interrupted registers the request needs.
struct Registers {
  uintptr_t pc, sp, fp, rbx, r13, rax, rcx = 0, rdx = 0, r14 = 0, r10 = 0;
  // The thread's ThreadCore::barrier_target at the interruption: what a return pc equal to
  // the return barrier's entry stands for (runtime::real_return_pc).
  uintptr_t barrier_target = 0;
  // The signal landed in the VM's own C++ on a thread marked in Java, and these are its
  // anchor's registers instead (registers_of): the C/C++ frames above that Mini frame are
  // only in a walk at the interruption.
  bool in_vm_code = false;
};

// An interpreted frame interrupted in its body (its fp in rbp): its method, and its
// position: the live bcp (r13), which is exact, unlike the frame's copy, except right
// after a call returns: the callee clobbered r13 and, until the interpreter reloads it,
// the frame's copy (stored at the call) is the exact one. Async-signal-safe.
struct InterpPosition {
  const runtime::Method* method;
  const uint8_t* bcp;  // may lie outside the method when neither copy is usable
};
InterpPosition interrupted_interp_position(const Registers& regs);

// Classifies an interrupted context. Async-signal-safe: reads the registers, the code
// blob registry and a frame's own slots above rsp.
SampleRequest build_request(const Registers& regs, bool stub_metadata = false);

}  // namespace sampler
