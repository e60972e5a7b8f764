// DWARF call-frame information (CFI) for generated code, registered with LLVM libunwind,
// so that `unw_step` walks from C++ called by Mini code through interpreted and compiled
// Mini frames, the call stub and the safepoint blob, down to the thread's start.
//
// One CIE + one FDE per code range, in .eh_frame format, handed to libunwind's
// `__unw_add_dynamic_fde` (what its `__register_frame` calls: one FDE, unlike libgcc's
// `__register_frame`, which takes a whole .eh_frame section).
//
// LLVM libunwind is loaded with dlopen(RTLD_LOCAL) and only its `unw_*` and
// `__unw_add_dynamic_fde` entry points are used, through dlsym. Linking it into the
// binary would interpose its `_Unwind_*` on libstdc++'s (libgcc_s's), and that breaks C++
// exceptions (static link: every throw ends in std::terminate) or pthread_exit's forced
// unwind (dynamic link: a crash), so the C++ runtime keeps libgcc_s and never sees it.
//
// What is described (the shapes come from the code generators; each non-trivial region is
// recognised by its exact bytes, and if they ever change the region falls back to the
// plain rbp-frame rule instead of being described wrongly):
//   - compiled methods: entry (CFA = rsp+8), after `push rbp` (rsp+16, rbp saved), after
//     `mov rbp, rsp` (CFA = rbp+16) for the body; the out-of-line stack-overflow path
//     (no frame yet: rsp+8, then, once rsp is realigned, the anchor sp the path stored);
//     every `leave; ret...` epilogue; every OSR entry (which builds its own frame).
//   - the interpreter: rbp frames everywhere except method_entry before its
//     `mov rbp, rsp` (including the zeroing of the extra locals, where the return pc is
//     in rax), its stack-overflow path, the return sequences of ret/vret and the OSR
//     jump sequences of the backward-branch templates.
//   - the call stub and the safepoint blob, with the registers they save (the
//     safepoint blob is marked as a signal frame: the frame above it resumes at an exact
//     pc, not after a call). Intrinsic stubs get none: by design they carry no frame
//     metadata by default (DESIGN.md).
// Limits: the "CFA" of interpreter frames is rbp+16, not the caller's sp at the call
// (method_entry moves the return pc above the new locals); every caller of Mini code
// finds its own frame through rbp, so nothing reads that difference. LLVM libunwind
// applies a row to pc-1 ("return address" semantics) even for the top frame of a
// signal context; walk_native_stack_from() corrects for that.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"

namespace jit {

// DWARF register numbers (x86-64 psABI).
enum DwarfReg : uint8_t {
  kDwRax = 0, kDwRdx = 1, kDwRcx = 2, kDwRbx = 3, kDwRsi = 4, kDwRdi = 5, kDwRbp = 6, kDwRsp = 7,
  kDwR8 = 8, kDwR9 = 9, kDwR10 = 10, kDwR11 = 11, kDwR12 = 12, kDwR13 = 13, kDwR14 = 14, kDwR15 = 15,
  kDwRa = 16,  // the return address column
};

// How a register of the caller is recovered.
struct RegRule {
  enum Kind : uint8_t {
    same,      // unchanged (the default for every register but the return address)
    at_cfa,    // saved at [CFA + offset]
    in_reg,    // held in register `reg`
    at_expr,   // saved at the address computed by the DWARF expression `expr`
  };
  uint8_t reg = 0;  // which register this rule is for
  Kind kind = same;
  int32_t offset = 0;
  uint8_t other = 0;
  std::vector<uint8_t> expr;
  bool operator==(const RegRule&) const = default;
};

// The unwind state from pc offset `offset` on (until the next row).
struct UnwindRow {
  uint32_t offset = 0;
  uint8_t cfa_reg = kDwRsp;       // CFA = cfa_reg + cfa_offset ...
  int32_t cfa_offset = 8;
  std::vector<uint8_t> cfa_expr;  // ... or, when not empty, this DWARF expression
  std::vector<RegRule> regs;      // not listed: same value; the return address defaults to [CFA-8]

  // At a call's target, nothing pushed: CFA = rsp+8, return address at [CFA-8].
  static UnwindRow entry(uint32_t offset);
  // Right after `push rbp`: CFA = rsp+16, caller's rbp at [CFA-16].
  static UnwindRow rbp_pushed(uint32_t offset);
  // After `mov rbp, rsp`: CFA = rbp+16, caller's rbp at [CFA-16].
  static UnwindRow rbp_frame(uint32_t offset);
  // Sets (or replaces) the rule for one register.
  UnwindRow& with(RegRule rule);
  UnwindRow& saved_at(uint8_t reg, int32_t cfa_offset) { return with({reg, RegRule::at_cfa, cfa_offset, 0, {}}); }
  UnwindRow& held_in(uint8_t reg, uint8_t other) { return with({reg, RegRule::in_reg, 0, other, {}}); }
  UnwindRow& saved_at_expr(uint8_t reg, std::vector<uint8_t> e) { return with({reg, RegRule::at_expr, 0, 0, std::move(e)}); }
};

// Whether LLVM libunwind could be loaded (registration is a no-op without it).
bool unwind_support_available();

// Registers CFI for [begin, end): CFA = rsp+8 before `frame_setup_end_offset`, then
// CFA = rbp+16 with the return address at CFA-8 and the caller's rbp at CFA-16. Correct at
// every call site of code that builds an rbp frame in its first instructions and keeps it;
// the few pcs between `push rbp` and `mov rbp, rsp` are described as if nothing were pushed.
bool register_unwind_info(const char* name, uintptr_t begin, uintptr_t end, uint32_t frame_setup_end_offset);
// Registers CFI built from `rows` (sorted by offset; the first at 0). `signal_frame`
// marks the CIE with 'S': the frame above resumes at an exact pc, not after a call.
bool register_unwind_rows(const char* name, uintptr_t begin, uintptr_t end, const std::vector<UnwindRow>& rows,
                          bool signal_frame = false);

// The CFI encoded for rows, as .eh_frame bytes: CIE, FDE, zero terminator (for tests).
std::vector<uint8_t> encode_eh_frame(uintptr_t begin, uintptr_t end, const std::vector<UnwindRow>& rows,
                                     bool signal_frame = false);

// The descriptions of minivm's code shapes (see the header comment). A region whose
// bytes do not match the expected shape is left out (rbp-frame rule) and counted in
// `*unmatched` when given.
std::vector<UnwindRow> compiled_code_unwind_rows(const runtime::CompiledCode& code, int* unmatched = nullptr);
std::vector<UnwindRow> interpreter_unwind_rows(const runtime::CodeBlob& blob, size_t method_entry_offset,
                                               size_t method_entry_size, int* unmatched = nullptr);
std::vector<UnwindRow> call_stub_unwind_rows(const runtime::CodeBlob& blob, int* unmatched = nullptr);
std::vector<UnwindRow> safepoint_blob_unwind_rows(const runtime::CodeBlob& blob, int* unmatched = nullptr);

// The rows in the form the runtime's blobs carry for the oracle sampler
// (runtime::FrameRow); rules no shape of ours uses become `undescribed`.
std::vector<runtime::FrameRow> frame_rows_from(const std::vector<UnwindRow>& rows);

// --- Registration with external tools (unwinders always, perf with --perf-map) ---

// A named sub-range of a blob (the interpreter's templates).
struct CodeRange {
  std::string name;
  size_t offset = 0, size = 0;
};

// A new compiled method: its frame rows on the blob and unwind info always; a perf map line and jitdump records (with
// pc -> line info) when perf support is enabled. Called by compile_method.
void register_code_with_tools(const runtime::CompiledCode& code);
// The runtime's generated blobs present now (interpreter, call stub, safepoint blob;
// intrinsic stubs only for perf): unwind info always, perf records when enabled. The
// interpreter's templates name its perf symbols (minivm::interpreter::iadd, ...) and
// locate method_entry. Idempotent per blob. Called by the CLI after the interpreter is
// generated (and by tests).
void register_runtime_blobs_with_tools(const std::vector<CodeRange>& interpreter_templates);

// --- Walking native stacks with LLVM libunwind ---

struct NativeFrame {
  uintptr_t pc = 0;  // frame 0 of a context walk: the interrupted pc; otherwise a return address
  uintptr_t sp = 0;  // the frame's rsp
  uintptr_t fp = 0;  // the frame's rbp
};
enum class WalkEnd : uint8_t {
  end_of_stack,  // unw_step returned 0: the outermost frame (or a pc without unwind info)
  error,         // unw_step failed
  truncated,     // `max` frames filled
  unavailable,   // no LLVM libunwind
};
struct NativeWalk {
  size_t count = 0;
  WalkEnd end = WalkEnd::unavailable;
};
// Walks the calling thread's stack with unw_getcontext/unw_init_local/unw_step; frame 0
// is the caller of this function.
NativeWalk walk_native_stack(NativeFrame* frames, size_t max);
// Walks from an interrupted context (a signal handler's `ucontext_t*`); frame 0 is the
// interrupted pc, described exactly (not as a return address).
NativeWalk walk_native_stack_from(const void* ucontext, NativeFrame* frames, size_t max);

}  // namespace jit
