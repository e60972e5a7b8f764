// Safepoint polls: the good and bad poll pages, arming a thread, and the VM-side poll
// handler that the safepoint blob calls in ordinary (not signal) context.
//
// A poll is `mov r10, [r15 + poll_word]; test [r10], eax`. Arming a thread stores the
// bad (PROT_NONE) page into its poll word; its next poll faults, the SIGSEGV handler
// sees a registered poll site and resumes the thread in the safepoint blob, which calls
// handle_poll() below.
#pragma once
#include <cstdint>

namespace runtime {

class Thread;

// Poll-site machine code, shared by every code generator (and checked by a golden test).
inline constexpr uint8_t kPollTestInsn[] = {0x41, 0x85, 0x02};  // test dword [r10], eax
inline constexpr int kPollTestLength = 3;

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
