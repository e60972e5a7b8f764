// Walking a thread's Mini stack from an interrupted context (its registers), the way the
// samplers that do not wait for a poll do it:
//   - guess (`classical` from the sampler thread while the thread is held, `async` in the
//     signal handler): HotSpot's frame-based walk. Trusts rbp as the frame pointer of the
//     top frame and refuses what it cannot parse — a pc in a stub, in a prologue before
//     the frame is complete, in an epilogue, or unknown — as a failure with that reason.
//     Safe-for-sender checks at every step (fp on the thread's stack, aligned and
//     growing; return pc in Mini code; Method* one of the VM's), a depth limit (the stack
//     is cut there and marked truncated), and the caller runs it under crash protection.
//     Like HotSpot's walkers it reads an interpreted frame's position from the bcp saved
//     in the frame (updated at calls and polls), not from the live bcp register; when the
//     interrupted pc is in the template of another bytecode than the saved bcp's, that
//     position lags the one running and the sample is biased, reason stale_bcp.
//   - exact (`oracle`): steps out of the top frame with the complete per-pc frame
//     description (the blobs' FrameRows, the stubs' frame tables), so every pc is
//     parsed and the top position is the interrupted pc (or the live bcp); cut at the
//     profile's depth limit like the others.
// Both are async-signal-safe: no allocation, no locks; frames go to a FrameSink.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "sampler/frame_arena.h"
#include "sampler/profile/reasons.h"
#include "sampler/sample_request.h"

#include "runtime/stack_walker.h"

namespace runtime {
class Thread;
struct FrameRow;
struct StubFrame;
}

namespace sampler {

// The word at a stack address (a saved register, a return address, a frame slot): what
// every walker reads there.
inline uintptr_t stack_word(uintptr_t addr) { return *reinterpret_cast<const uintptr_t*>(addr); }

// Where a walk puts its frames.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // False when there is no room: the walk ends as failure `arena_full`.
  virtual bool put(const CompactFrame& f) = 0;
};

struct WalkResult {
  std::optional<Reason> failure;  // none: a sample
  uint32_t depth = 0;             // frames put
  bool truncated = false;         // the depth limit cut the stack
  bool freed_code = false;        // a pc it used, in no blob, lies in code already freed
  std::optional<Reason> biased = std::nullopt;  // a sample whose top frame is not the interrupted one
};

inline constexpr uint32_t kGuessDepthLimit = 64;  // JFR's default stack depth

// Steps out of the frame at regs.pc with its exact description: the caller's sp (the
// CFA), its return address and its rbp. False where the row does not describe it.
bool step_out(const runtime::FrameRow& row, const Registers& regs, uintptr_t& cfa, uintptr_t& ra, uintptr_t& caller_fp);

// Steps out of a frameless stub with its frame table entry: its compiled caller's sp,
// fp and pc (the stub's return address).
runtime::FramePos step_out_of_stub(const runtime::StubFrame& sf, const Registers& regs);

WalkResult walk_guess(runtime::Thread* t, const Registers& regs, FrameSink& sink, uint32_t depth_limit = kGuessDepthLimit);
WalkResult walk_exact(runtime::Thread* t, const Registers& regs, FrameSink& sink, uint32_t depth_limit = UINT32_MAX);

// Either walk under crash protection (runtime/signals.h): a crash while reading the
// stack ends the walk as failure `crashed_in_walk`. Frames beyond `depth_limit` are cut.
WalkResult walk_protected(bool exact, runtime::Thread* t, const Registers& regs, FrameSink& sink,
                          uint32_t depth_limit);

}  // namespace sampler
