// Code blobs: every range of generated machine code, with what it is and where its
// safepoint polls are. The registry answers "which blob holds this pc" without locks,
// so a signal handler may ask.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/frame_row.h"

namespace runtime {

enum class BlobKind : uint8_t {
  interpreter,     // the template interpreter: every frame in it is an interpreter frame
  call_stub,       // the C++ -> Mini entry; a walk ends here
  safepoint_blob,  // where a trapped poll resumes
  compiled,        // a JIT-compiled method
  stub,            // a frameless intrinsic stub
  return_barrier,  // where a frame under a stack watermark returns to (return_barrier.h)
};
const char* blob_kind_name(BlobKind k);

struct PollSite {
  // The instruction that decides: a trap poll's faulting `test`, a branch poll's `ja`. A
  // thread interrupted there has read its poll word already (sampler/interruption.cpp).
  uintptr_t pc;
  uintptr_t resume_pc;  // the instruction after it
  uintptr_t stub = 0;   // a branch poll's slow path (0: a trap poll)
};

// An implicit null check in compiled code: the instruction at pc reads or writes through
// a reference at a displacement below kImplicitNullLimit, so on null it faults in the
// first page, which is never mapped, and the SIGSEGV handler resumes at `handler`: the
// path that throws the contract's null error, as an explicit test's branch would reach.
struct ImplicitNull {
  uintptr_t pc;
  uintptr_t handler;
};
constexpr uintptr_t kImplicitNullLimit = 4096;

// The interpreter's code for one bytecode: the pcs [begin, end) run an instruction of
// `opcode` (HotSpot's interpreter codelets). What a sampled pc in the interpreter says of
// the instruction running, whatever the frame's saved bcp says.
struct BytecodeTemplate {
  uintptr_t begin, end;
  uint8_t opcode;
};

// A range of pcs where the top frame is not in its normal shape (runtime/pc_ranges.def).
enum class PcRangeKind : uint8_t {
#define PC_RANGE(name, phase, rbp, meaning) name,
#include "runtime/pc_ranges.def"
#undef PC_RANGE
};
struct PcRangeInfo {
  enum class Phase : uint8_t { entry, exit };
  enum class Rbp : uint8_t { own, callers, building };
  const char* name;
  Phase phase;
  Rbp rbp;
  const char* meaning;
};
const PcRangeInfo& pc_range_info(PcRangeKind k);

struct PcRange {
  uintptr_t begin, end;
  PcRangeKind kind;
  const PcRangeInfo& info() const { return pc_range_info(kind); }
};

// For a frameless stub: where its return address is, for the pcs [begin, end): at
// [rsp + ret_sp_offset]. Lets a sampler step out of the stub (--stub-metadata).
struct StubFrame {
  uintptr_t begin, end;
  int32_t ret_sp_offset;
};

struct CodeBlob {
  std::string name;
  BlobKind kind;
  std::string frame_name;           // stubs: the builtin a profile names ("arraycopy")
  std::vector<StubFrame> stub_frames;  // stubs: the return address for every pc
  uintptr_t begin = 0, end = 0;   // [begin, end)
  std::vector<PollSite> polls;    // sorted by pc; fixed once the blob is registered
  std::vector<PcRange> special;   // fixed once the blob is registered
  std::vector<ImplicitNull> implicit_nulls;  // sorted by pc; fixed once the blob is registered
  // The interpreter: one per bytecode, sorted by begin (not its method entry); fixed once
  // the blob is registered.
  std::vector<BytecodeTemplate> templates;

  // How to find the caller at every pc, sorted by offset, the first at 0, written by the
  // generator (runtime/frame_recorder.h); fixed once the blob is registered. Empty for
  // the frameless stubs (they use stub_frames).
  std::vector<FrameRow> frame_rows;

  CodeBlob() = default;
  CodeBlob(const CodeBlob&) = delete;
  CodeBlob& operator=(const CodeBlob&) = delete;

  bool contains(uintptr_t pc) const { return pc >= begin && pc < end; }
  // The row describing pc, or nullptr. Async-signal-safe.
  const FrameRow* frame_row_at(uintptr_t pc) const;
  // The poll whose trapping `test` is at pc, or whose resume pc is resume_pc (a thread
  // stopped at a poll has its anchor there). `polls` is sorted by pc, so by resume pc too.
  const PollSite* find_poll(uintptr_t pc) const;
  const PollSite* find_poll_resuming_at(uintptr_t resume_pc) const;
  // The implicit null check whose faulting instruction is at pc, or nullptr.
  // Async-signal-safe.
  const ImplicitNull* find_implicit_null(uintptr_t pc) const;
  // The bytecode whose template holds pc, or -1 (no template: not the interpreter, or its
  // method entry). Async-signal-safe.
  int bytecode_at(uintptr_t pc) const;
  // The stub frame description holding pc, or nullptr. Async-signal-safe.
  const StubFrame* stub_frame_at(uintptr_t pc) const {
    for (const StubFrame& f : stub_frames)
      if (pc >= f.begin && pc < f.end) return &f;
    return nullptr;
  }
  // The special range holding pc, or nullptr. Async-signal-safe.
  const PcRange* special_at(uintptr_t pc) const {
    for (const PcRange& r : special)
      if (pc >= r.begin && pc < r.end) return &r;
    return nullptr;
  }
};

// The code registry (code_registry.cpp). Writers (register, unregister) serialize on a
// lock and cost O(log N) amortized; lookups take no lock and are async-signal-safe.

// Registers a blob (after its polls are filled in). The blob must stay alive until it is
// unregistered and no thread can still be using a pointer find_blob returned for it
// (the registry does not know who holds such pointers; freeing code is the caller's
// protocol). Registered blobs never overlap; registering a blob object that is already
// registered replaces its entry (it is new code in a dead blob's memory). Safe to call
// concurrently with lookups.
void register_blob(const CodeBlob* blob);
// Makes a registered blob unfindable: every find_blob that starts after this returns
// misses it. A find_blob already running may still return it.
void unregister_blob(const CodeBlob* blob);
// The blob containing pc, or nullptr. Lock-free and async-signal-safe.
const CodeBlob* find_blob(uintptr_t pc);
// Every registered blob, in registration order.
std::vector<const CodeBlob*> all_blobs();

// The registry's own bookkeeping, for tests and benchmarks.
struct RegistryStats {
  size_t live = 0;           // registered blobs
  size_t dead_entries = 0;   // unregistered blobs still in a level, skipped by lookups
  size_t levels = 0;         // sorted arrays a lookup searches
  size_t retired = 0;        // snapshots waiting for their readers to leave
  uint64_t freed = 0;        // snapshots freed since the process started
};
RegistryStats registry_stats();

}  // namespace runtime
