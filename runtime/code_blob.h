// Code blobs: every range of generated machine code, with what it is and where its
// safepoint polls are. The registry answers "which blob holds this pc" without locks,
// so a signal handler may ask.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

enum class BlobKind : uint8_t {
  interpreter,     // the template interpreter: every frame in it is an interpreter frame
  call_stub,       // the C++ -> Mini entry; a walk ends here
  safepoint_blob,  // where a trapped poll resumes
  compiled,        // a JIT-compiled method (issue 3)
  stub,            // a frameless intrinsic stub (issue 3)
};
const char* blob_kind_name(BlobKind k);

struct PollSite {
  uintptr_t pc;         // the faulting `test` instruction
  uintptr_t resume_pc;  // the instruction after it
};

// A range of pcs where the top frame is not in its normal shape: a prologue before the
// frame is complete, an epilogue after the return poll. Samplers must not read the frame
// there the normal way (`what` names the case: "prologue", "epilogue", "interp_entry",
// "interp_epilogue").
struct PcRange {
  uintptr_t begin, end;
  const char* what;
};

// For a frameless stub: where its return address is, for the pcs [begin, end): at
// [rsp + ret_sp_offset]. Lets a sampler step out of the stub (--stub-metadata).
struct StubFrame {
  uintptr_t begin, end;
  int32_t ret_sp_offset;
};

// Where the caller of the frame at a pc is, exactly, for every pc of a blob (the blob's
// unwind description in a form a signal handler can read): from `offset` on, the
// canonical frame address (the caller's sp) is CFA = reg + cfa_offset, where reg is rsp,
// rbp or r14 (the interpreter's locals pointer; in method entry less 8 bytes per
// parameter of the callee in rbx); the return address is at [CFA + ra_offset], at
// [rsp], or in rax or rcx; the caller's rbp is at [CFA + rbp_offset], in rdx, or still
// in rbp. The oracle sampler steps out of the interrupted frame with it.
struct FrameRow {
  enum class Cfa : uint8_t { rsp, rbp, r14, r14_less_params, undescribed };
  enum class Ra : uint8_t { at_cfa, at_rsp, in_rax, in_rcx, undescribed };
  enum class Rbp : uint8_t { same, saved, in_rdx };
  uint32_t offset = 0;
  Cfa cfa = Cfa::rsp;
  Ra ra = Ra::at_cfa;
  Rbp rbp = Rbp::same;
  int32_t cfa_offset = 8;
  int32_t ra_offset = -8;
  int32_t rbp_offset = 0;
};

struct CodeBlob {
  std::string name;
  BlobKind kind;
  std::string frame_name;           // stubs: the builtin a profile names ("arraycopy")
  std::vector<StubFrame> stub_frames;  // stubs: the return address for every pc
  uintptr_t begin = 0, end = 0;   // [begin, end)
  std::vector<PollSite> polls;    // sorted by pc; fixed once the blob is registered
  std::vector<PcRange> special;   // fixed once the blob is registered

  // Sorted by offset, the first at 0; published once (by the JIT's registration with
  // the unwinders), never changed after. Null: no exact description (stubs use
  // stub_frames).
  mutable std::atomic<const std::vector<FrameRow>*> frame_rows{nullptr};

  CodeBlob() = default;
  CodeBlob(const CodeBlob&) = delete;
  CodeBlob& operator=(const CodeBlob&) = delete;

  bool contains(uintptr_t pc) const { return pc >= begin && pc < end; }
  // The row describing pc, or nullptr. Async-signal-safe.
  const FrameRow* frame_row_at(uintptr_t pc) const;
  const PollSite* find_poll(uintptr_t pc) const;
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

// Registers a blob (after its polls are filled in); the blob must live for the rest of
// the process. Safe to call concurrently with lookups.
void register_blob(const CodeBlob* blob);
// The blob containing pc, or nullptr. Async-signal-safe.
const CodeBlob* find_blob(uintptr_t pc);
// Every registered blob, in registration order.
std::vector<const CodeBlob*> all_blobs();

}  // namespace runtime
