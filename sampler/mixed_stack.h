// Mixed stacks (--native-frames): the C/C++ frames of a thread (the VM's runtime, natives,
// libc, the thread's start) interleaved with its Mini frames, top first.
//
// Two walks of the same stack are merged, never guessed from a pc alone:
//   - an LLVM libunwind walk (jit/native_walk.h), which steps through generated code with
//     the CFI the JIT registers, so it sees every physical frame but cannot name a Mini one;
//   - the sampler's own Mini walk (exact: the reconstruction at the poll, the oracle's
//     frame rows, the walk from the anchor), which names each Mini frame with its line.
// `classify` turns the libunwind walk into frames: a pc in no code blob is a `cpp` frame
// (symbolized at the merge or report, `symbolize`), the call stub a stub frame, and a pc
// in Mini code (interpreter, compiled method, intrinsic stub) a *Mini marker*: one physical
// Mini frame whose scopes the Mini walk supplies. `interleave` replaces each marker,
// counting from the bottom of the stack, by the Mini walk's physical frame at the same
// depth; when the two walks do not have the same number of Mini frames the sample is a
// failure (`native_walk_mismatch`), never a guess.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "jit/native_walk.h"
#include "sampler/profile/reasons.h"
#include "sampler/reconstruct.h"

namespace sampler {

// The most frames a libunwind walk in a signal handler keeps (a deeper stack ends as
// native_walk_failed); a walk at the poll grows its buffer instead.
inline constexpr size_t kNativeWalkMax = 2048;

// A physical Mini frame in a classified libunwind walk.
inline bool is_mini_marker(const CompactFrame& f) {
  return f.method == nullptr && f.stub == nullptr && f.kind == FrameKind::jit;
}

// The libunwind walk `frames[0, n)` (top first) as frames into `out` (room for n): cpp
// frames, the call stub, Mini markers; the safepoint blob and the return barrier are the
// VM's own and left out. `first_exact`: frames[0].pc is an interrupted pc (a signal
// context), not a return address. Returns how many it wrote. Async-signal-safe.
size_t classify(const jit::NativeFrame* frames, size_t n, bool first_exact, CompactFrame* out);

// The index of the first frame below the safepoint blob, or `n` when no frame is in it: a
// thread walking its own stack at a poll drops the frames above (the profiler's own).
size_t below_safepoint_blob(const jit::NativeFrame* frames, size_t n);

// The physical frames of a Mini trace: each frame but inlined scopes (which share their
// compiled frame's).
size_t physical_frames(const CompactTrace& mini);

// Merges a classified libunwind walk `native` with the Mini trace `mini` (both top first)
// into `out`. The bottom `shared` physical frames of `mini` are those the walk's markers
// stand for, in order from the bottom; `mini`'s frames above them (a reconstructed top,
// the native a thread is in) go on top. `markers`: how many Mini markers the walk must hold
// (the physical Mini frames of the walked stack, which may be more than `shared` when it
// has frames above the sampled one: those and the frames between them are dropped).
// `native_on_top`: the C/C++ frames above the last shared marker go above `mini`'s top
// (a thread in a native: what the native called) instead of under it. Returns
// native_walk_mismatch when the counts disagree.
std::optional<Reason> interleave(const CompactTrace& native, const CompactTrace& mini, size_t shared, size_t markers,
                                 bool native_on_top, CompactTrace& out);

// The length of `native`'s top part that ends with its `markers`-th Mini marker from the
// top (all of it when it has fewer): a Mini walk its depth limit cut holds only the top
// `markers` physical frames, which that part's markers stand for, so it is merged with
// that part alone and stays marked truncated.
size_t through_top_markers(const CompactTrace& native, size_t markers);

// A cpp frame's name (symbolize.cpp): the demangled function without its parameters
// (`runtime::native_spin_ns`), from the ELF symbol table of the object the pc lies in (its
// .symtab, else that of its separate debug file, /usr/lib/debug/.build-id/, else its
// dynamic symbols), else `object+0xoffset`, else the pc in hex. Cached; called when
// stacks are named (merge, reports), never in a signal handler.
std::string symbolize(uintptr_t pc);

}  // namespace sampler
