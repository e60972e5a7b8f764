// Safepoint polls: the good and bad poll pages, arming a thread, and the VM-side poll
// handler that the safepoint blob calls in ordinary (not signal) context.
//
// Two kinds of poll, both armed by arm_poll (runtime/poll_asm.h emits them): the
// interpreter's trap poll, which faults on the bad page once armed, and compiled code's
// branch poll, which branches to its stub once armed; either way the thread enters the
// safepoint blob, which calls handle_poll() below. Their instructions and the way from
// an armed poll to the blob: docs/architecture.md, section 3.
#pragma once
#include <cstdint>

namespace runtime {

class Thread;

// Poll-site machine code, shared by every code generator (and checked by a golden test).
inline constexpr uint8_t kPollTestInsn[] = {0x41, 0x85, 0x02};  // test dword [r10], eax
inline constexpr int kPollTestLength = 3;
inline constexpr uint8_t kPollBranchInsn[] = {0x0F, 0x87};  // ja rel32 (to the stub)
inline constexpr int kPollBranchLength = 6;
// ThreadCore::poll_limit: rsp is above 0 always and above all ones never.
inline constexpr uintptr_t kPollLimitArmed = 0;
inline constexpr uintptr_t kPollLimitDisarmed = ~uintptr_t(0);

struct PollPages {
  void* good;  // readable
  void* bad;   // PROT_NONE
  bool is_bad_address(uintptr_t a) const;
};
const PollPages& poll_pages();  // created on first use

void arm_poll(Thread* t);     // make t's next poll trap
void disarm_poll(Thread* t);
bool poll_armed(const Thread* t);

// What the poll handler serves, in registration order (the sampler registers its
// request processing here at start-up; tests register their own). Called on the
// polling thread, in VM state, with its anchor at the polling frame.
class PollClient {
 public:
  virtual ~PollClient() = default;
  virtual void on_poll(Thread* t) = 0;
};
void register_poll_client(PollClient* c);
void unregister_poll_client(PollClient* c);

// Called by the safepoint blob. `blob_fp` is the blob's frame pointer: [blob_fp] holds
// the polling frame's rbp and [blob_fp + 8] the poll's resume pc.
extern "C" void minivm_handle_poll(Thread* t, uintptr_t* blob_fp);

// Counts for tests and reports.
uint64_t poll_trap_count();

}  // namespace runtime
