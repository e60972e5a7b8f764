// DWARF call-frame information (CFI) for generated code, in .eh_frame format: one CIE and
// one FDE for a code range, made from the frame rows its generator recorded
// (runtime/frame_row.h). This is the form LLVM libunwind, perf and debuggers read.
//
// The interpreter's "CFA" is rbp+16, not the caller's sp at the call (method entry moves
// the return pc above the new locals); every caller of Mini code finds its own frame
// through rbp, so nothing reads that difference.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/frame_row.h"

namespace jit {

// The CFI for [begin, end) described by `rows` (sorted by offset, the first at 0), as
// .eh_frame bytes: CIE, FDE, zero terminator. `signal_frame` marks the CIE with 'S': the
// frame above resumes at an exact pc, not after a call (the safepoint blob). The FDE's pc
// is absolute when `located_at` is 0 (what libunwind and gdb are handed), else relative to
// where its field will be when the bytes sit at `located_at` (DW_EH_PE_pcrel: perf's
// files place them after the code, at another address than the process's).
std::vector<uint8_t> encode_eh_frame(uintptr_t begin, uintptr_t end, const std::vector<runtime::FrameRow>& rows,
                                     bool signal_frame = false, uintptr_t located_at = 0);

// Whether rows can be encoded for a range of `size` bytes: sorted, the first at 0, all
// inside, and no rule DWARF cannot express.
bool frame_rows_valid(size_t size, const std::vector<runtime::FrameRow>& rows);

}  // namespace jit
