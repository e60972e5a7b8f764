// What the runtime needs to know about a JIT-compiled method to walk its frames: the
// method, the frame shape, and the debug info mapping every pc to a scope chain.
// jit/ fills it in and registers it; runtime/ and sampler/ only read it.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/code_blob.h"
#include "runtime/method.h"

namespace runtime {

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

  // The pc desc covering `pc` (which must be inside the blob).
  const PcDesc& desc_at(uintptr_t pc) const;
};

}  // namespace runtime
