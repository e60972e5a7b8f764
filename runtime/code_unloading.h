// Code unloading: when compiled code that has been replaced may be freed, and the log of
// what was freed.
//
// The JIT retires code once nothing new can enter it (its method's entry and `compiled`
// already point at the replacement). Retired code is freed only inside a global safepoint
// operation (runtime/safepoint.h), never by guessing: with every Mini thread stopped where
// its stack is walkable, every physical frame's pc and return address of every thread is
// collected, and so is every raw pc that someone else still holds and will resolve later
// (CodeRootClient: the sampler's pending requests). A retired blob that none of these pcs
// lies in is unregistered, logged and handed back to its freer; the others wait for a
// later safepoint. If some thread's stack cannot be walked to its entry, nothing is freed.
//
// Why that is enough: a thread in Java is stopped at a poll, inside the code it runs; a
// thread in native code, blocked or in the VM returns only through frames on its stack;
// a call loads Method::entry and jumps with no poll in between, and an OSR entry is handed
// to a thread in the VM that jumps to it before its next poll, so no thread can hold an
// old entry across a safepoint without a frame of it on its stack.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace runtime {

struct CodeBlob;
struct CompiledCode;
struct Method;

// One freed range of code, in the order of freeing (seq counts from 0).
struct FreedCode {
  uintptr_t begin = 0, end = 0;
  const Method* method = nullptr;
  uint64_t seq = 0;
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
};

// How many ranges have been freed: the seq the next one gets (frees past the log's 16M
// entries are not logged). Async-signal-safe.
uint64_t freed_code_count();
// Entry `seq` of the log (seq < freed_code_count()). Async-signal-safe.
FreedCode freed_code(uint64_t seq);
// Whether pc lies in a range freed with a seq >= since: a pc taken when
// freed_code_count() was `since` and used now names freed code. Async-signal-safe; costs
// the number of ranges freed since.
bool pc_freed_since(uintptr_t pc, uint64_t since);

// Whether pc lies in any range ever freed: for a pc that no registered blob holds, whether
// it names freed code rather than no code at all. Async-signal-safe.
bool pc_in_freed_code(uintptr_t pc);

// Holders of raw pcs outside the stacks (sample requests waiting for a thread's poll).
// Called inside the safepoint operation, with every Mini thread stopped.
class CodeRootClient {
 public:
  virtual ~CodeRootClient() = default;
  virtual void add_pcs_in_use(std::vector<uintptr_t>& pcs) = 0;
};
void register_code_root_client(CodeRootClient* client);

// Frees a blob's code and metadata once the runtime has unregistered it (jit/ provides it).
using CodeFreer = void (*)(const CompiledCode* code);
// Hands over replaced code, still registered: it is freed by a later
// free_unreferenced_code once no pc lies in it.
void retire_code(const CompiledCode* code, CodeFreer freer);

// The decision on its own: the indices of `retired` that no pc lies in. A return address
// may equal its blob's end (a call as the last instruction), so a pc at end counts too.
std::vector<size_t> unreferenced_blobs(const std::vector<const CodeBlob*>& retired, std::vector<uintptr_t> pcs);

// Every pc in use: each thread's physical frames from its anchor, then every client's.
// False when some thread's walk stopped before its entry (its deeper frames are unknown).
bool collect_pcs_in_use(std::vector<uintptr_t>& pcs);

struct UnloadRound {
  size_t freed = 0;     // blobs freed now
  size_t kept = 0;      // retired blobs still in use, left for a later round
  bool walkable = true;  // false: a stack could not be walked, nothing was freed
};
// Frees every retired blob nothing uses. Runs inside a run_at_safepoint operation.
UnloadRound free_unreferenced_code();

// Totals since the process started (reports).
struct UnloadTotals {
  uint64_t retired = 0, freed = 0, rounds = 0, unwalkable_rounds = 0;
  uint64_t kept_in_use = 0;  // summed over rounds: retired blobs a pc still lay in
  size_t waiting = 0;        // retired, not yet freed
};
UnloadTotals unload_totals();

}  // namespace runtime
