// What the runtime needs to know about a JIT-compiled method to walk its frames: the
// method, the frame shape, and the debug info mapping every pc to a scope chain.
// jit/ fills it in and registers it; runtime/ and sampler/ only read it.
#pragma once
#include <cstdint>
#include <vector>

#include "base/frame_kind.h"
#include "runtime/code_blob.h"
#include "runtime/method.h"

namespace runtime {

using base::FrameKind;  // base/frame_kinds.def

// One scope of a pc: a method and the bci in it (innermost scope first in a chain).
struct Scope {
  const Method* method;
  int32_t bci;
};

// A run of code starting at `pc_offset` whose pcs map to `scopes` (innermost first),
// until the next entry's pc_offset.
struct PcDesc {
  uint32_t pc_offset;
  uint32_t scope_begin;  // index into CompiledCode::scopes
  uint16_t scope_count;
  bool safepoint;        // a poll or call site (kept with --debug-info=safepoints)
};

// The scope chain of one pc, innermost first: every scope but the last is a method
// inlined into the next one (FrameKind::inlined); the last is the compiled method's own
// frame (FrameKind::jit). Every walker expands a compiled frame into its scopes this way.
struct ScopeChain {
  const Scope* first = nullptr;
  uint32_t count = 0;
  const Scope& operator[](uint32_t k) const { return first[k]; }
  FrameKind kind(uint32_t k) const;
};

// Where a compiled frame holds arrays at a pc where its thread can be stopped for a
// collection (a stack map, HotSpot's OopMap): the resume pc of every poll, the return
// address of every call and runtime call. The JIT records one as it emits each such site.
struct GcSlot {
  static constexpr int8_t kFrame = -1;
  int8_t reg;           // kFrame: the slot [rbp + rbp_offset]; else a runtime::Reg that the
                        // safepoint blob saved (only at polls)
  int32_t rbp_offset;
};
struct GcMap {
  uint32_t pc_offset;
  uint32_t first;  // into CompiledCode::gc_slots
  uint32_t count;
};

struct CompiledCode : CodeBlob {
  const Method* method = nullptr;
  // Compiled frames: [rbp+8] return pc, [rbp] caller's rbp, arguments above the return
  // pc (argument 0 highest), the rest of the frame below rbp. The frame is complete
  // (rbp set, rsp lowered) from frame_complete_offset until epilogue_offset.
  uint32_t frame_complete_offset = 0;
  uint32_t epilogue_offset = 0;  // unused for now: each return tears the frame down itself
  uint32_t frame_bytes = 0;      // below rbp
  std::vector<PcDesc> pc_descs;  // sorted by pc_offset, first at 0: every pc is covered
  std::vector<Scope> scopes;
  // On-stack-replacement entries, one per loop header with an empty expression stack:
  // jumped to (not called) with rsp at the return pc and the arguments above it, as at
  // method entry, and the method's locals in the thread's OSR buffer.
  struct OsrEntry {
    uint32_t bci;
    uintptr_t pc;
  };
  std::vector<OsrEntry> osr_entries;
  uintptr_t osr_entry_for(uint32_t bci) const {
    for (auto& e : osr_entries)
      if (e.bci == bci) return e.pc;
    return 0;
  }

  std::vector<GcMap> gc_maps;  // sorted by pc_offset
  std::vector<GcSlot> gc_slots;
  // The stack map recorded for exactly `pc` (a resume or return address), or nullptr.
  const GcMap* gc_map_at(uintptr_t pc) const;

  // The pc desc covering `pc`, a pc inside the blob.
  const PcDesc& desc_at(uintptr_t pc) const;
  ScopeChain scope_chain(const PcDesc& d) const { return ScopeChain{scopes.data() + d.scope_begin, d.scope_count}; }
  // The scopes at `pc`, the address of an instruction about to run (a sampled pc).
  ScopeChain scopes_at(uintptr_t pc) const { return scope_chain(desc_at(pc)); }
  // The scopes of the call that `return_pc` returns from: a return (or resume) address
  // belongs to the instruction before it.
  ScopeChain scopes_at_return(uintptr_t return_pc) const { return scopes_at(return_pc - 1); }
};

}  // namespace runtime
