// Hand-built sampled contexts for the tests of the walkers (sampler/context_walk.h) and
// the request builder (sampler/sample_request.h): a thread stack laid out slot by slot
// in a buffer, registers chosen by the test, and pcs taken from the real generated code
// (the interpreter's templates, compiled fixtures, the intrinsic stubs, the runtime
// stubs), so that every case runs the same way every time.
//
// The names of pc ranges and of failure reasons are compared as text through
// `range_named` and `reason_of`, the only two places that know how they are spelled.
#pragma once
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "interp/template_interpreter.h"
#include "jit/baseline_compiler.h"
#include "jit/intrinsic_stubs.h"
#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "sampler/context_walk.h"
#include "sampler/reconstruct.h"
#include "sampler/sample_request.h"
#include "tests/unit/vm_fixture.h"

namespace fixtures {

// --- the two spellings -----------------------------------------------------------------

// A walk's failure, a request's reason or a reconstruction's failure, as its name ("" for none).
inline std::string reason_of(const std::optional<sampler::Reason>& r) { return r ? sampler::reason_name(*r) : ""; }
inline std::string reason_of(const sampler::WalkResult& r) { return reason_of(r.failure); }
// A request's reason counts only when it could not be parsed (or failed before the poll).
inline std::string reason_of(const sampler::SampleRequest& r) {
  bool has_reason = r.kind == sampler::RequestKind::unparsable || r.kind == sampler::RequestKind::failed;
  return has_reason ? sampler::reason_name(r.reason) : "";
}

// Every special pc range of `blob` with the given name ("prologue", "interp_epilogue_left", ...).
inline std::vector<runtime::PcRange> ranges_named(const runtime::CodeBlob& blob, std::string_view what) {
  std::vector<runtime::PcRange> out;
  for (const runtime::PcRange& r : blob.special)
    if (what == r.info().name) out.push_back(r);
  return out;
}
// The first of them (the test fails when there is none).
inline runtime::PcRange range_named(const runtime::CodeBlob& blob, std::string_view what) {
  std::vector<runtime::PcRange> all = ranges_named(blob, what);
  if (all.empty()) FAIL("no special range " << what << " in " << blob.name);
  return all.front();
}

// --- real code -------------------------------------------------------------------------

// The interpreter, the call stub, the safepoint blob and the intrinsic stubs generated
// (each blob carries the frame rows its generator recorded).
inline void ensure_generated_code() {
  fixture_vm();
  interp::TemplateInterpreter::get();
  jit::intrinsic_stubs();
}

inline const runtime::CodeBlob& interpreter_blob() { return interp::TemplateInterpreter::get().blob(); }

inline const runtime::CodeBlob& blob_of_kind(runtime::BlobKind kind) {
  for (const runtime::CodeBlob* b : runtime::all_blobs())
    if (b->kind == kind) return *b;
  FAIL("no blob of kind " << runtime::blob_kind_name(kind));
  return interpreter_blob();
}

// The first pc of an interpreter template ("iadd", "method_entry", ...).
inline uintptr_t template_pc(std::string_view name) {
  for (auto& t : interp::TemplateInterpreter::get().templates())
    if (t.name == name) return interpreter_blob().begin + t.offset;
  FAIL("no template " << name);
  return 0;
}

// Compiled once per test process (the code cache keeps every compilation alive).
inline const runtime::Method* method(size_t fn) { return fixture_vm().method(fn); }

// The bci of the innermost scope at a compiled pc.
inline int32_t bci_at(const runtime::CompiledCode* code, uintptr_t pc) {
  const runtime::PcDesc& d = code->desc_at(pc);
  return code->scopes[d.scope_begin].bci;
}

inline const runtime::CompiledCode* compiled(size_t fn) {
  static const runtime::CompiledCode* cache[16] = {};
  if (cache[fn] == nullptr) cache[fn] = jit::compile_method(fixture_vm().method(fn), {});
  return cache[fn];
}

// A pc of `code` whose own scope (no inlining) is at `bci`.
inline uintptr_t compiled_pc_at_bci(const runtime::CompiledCode* code, int32_t bci) {
  for (const runtime::PcDesc& d : code->pc_descs)
    if (d.scope_count == 1 && code->scopes[d.scope_begin].bci == bci) return code->begin + d.pc_offset;
  FAIL("no pc for bci " << bci << " in " << code->name);
  return 0;
}

// A return address in `code` that belongs to bci (walkers look up return address - 1).
inline uintptr_t compiled_return_pc(const runtime::CompiledCode* code, int32_t bci) {
  return compiled_pc_at_bci(code, bci) + 1;
}

// The bci of the first `call` in a method's bytecode.
inline int32_t first_call_bci(size_t fn) {
  const runtime::Method* m = fixture_vm().method(fn);
  for (uint32_t bci = 0; bci < m->code_size; bci += vm::op_info(vm::Op(m->code[bci])).length)
    if (vm::Op(m->code[bci]) == vm::Op::call) return int32_t(bci);
  FAIL("no call in " << m->function->name);
  return -1;
}

// --- a hand-built stack ----------------------------------------------------------------

// A thread whose stack is a buffer of 8-byte slots; frames are written into it at fps the
// test chooses (higher slot = older frame, as on a real stack).
struct HandStack {
  static constexpr size_t kSlots = 512;
  alignas(16) uintptr_t slots[kSlots] = {};
  runtime::Thread thread;

  HandStack() {
    thread.stack_low = base();
    thread.stack_high = base() + sizeof slots;
  }
  HandStack(const HandStack&) = delete;
  HandStack& operator=(const HandStack&) = delete;

  uintptr_t base() const { return reinterpret_cast<uintptr_t>(&slots[0]); }
  uintptr_t at(size_t slot) const { return base() + 8 * slot; }  // the address of a slot
  void store(uintptr_t addr, uintptr_t value) {
    if (addr < base() || addr + 8 > base() + sizeof slots) FAIL("store outside the hand-built stack");
    *reinterpret_cast<uintptr_t*>(addr) = value;
  }
  void store(uintptr_t addr, const void* value) { store(addr, reinterpret_cast<uintptr_t>(value)); }

  // rbp-chained: the caller's fp at [fp], the return pc at [fp + 8].
  void link(uintptr_t fp, uintptr_t caller_fp, uintptr_t return_pc) {
    store(fp + runtime::kFrameSavedFpOffset, caller_fp);
    store(fp + runtime::kFrameReturnPcOffset, return_pc);
  }
  // An interpreter frame (runtime/frame.h): the link, Method*, saved bcp and the locals
  // pointer (the first slot above the return pc).
  void interp_frame(uintptr_t fp, uintptr_t caller_fp, uintptr_t return_pc, size_t fn, int32_t saved_bci) {
    const runtime::Method* m = fixture_vm().method(fn);
    link(fp, caller_fp, return_pc);
    store(fp + runtime::kInterpFrameMethodOffset, m);
    store(fp + runtime::kInterpFrameBcpOffset, m->code + saved_bci);
    store(fp + runtime::kInterpFrameLocalsOffset, locals_of(fp));
  }
  static uintptr_t locals_of(uintptr_t fp) { return fp + 16; }  // one local: the argument
};

// The usual scene: busy (interpreted, at its call of sum_to, saved bci `kBusyCallBci`)
// entered from the call stub; the sampled method's frame is below it at `top_fp`.
struct Scene {
  HandStack stack;
  uintptr_t busy_fp, top_fp;
  int32_t busy_call_bci = first_call_bci(kBusy);
  // Where busy's frame returns: into the call stub, which ends every walk.
  uintptr_t entry_return_pc = blob_of_kind(runtime::BlobKind::call_stub).end - 1;
  // Where a callee of interpreted busy returns: the interpreter's call template.
  uintptr_t interp_return_pc = template_pc("call") + 1;

  Scene() : busy_fp(stack.at(400)), top_fp(stack.at(300)) {
    stack.interp_frame(busy_fp, stack.at(500), entry_return_pc, kBusy, busy_call_bci);
  }
  // Registers that leave every register a frame description may read pointing into the
  // stack (or, rbx, at a Method), so that any pc may be tried.
  sampler::Registers regs(uintptr_t pc, uintptr_t sp, uintptr_t fp) const {
    sampler::Registers r{};
    r.pc = pc;
    r.sp = sp;
    r.fp = fp;
    r.rbx = reinterpret_cast<uintptr_t>(fixture_vm().method(kSumTo));
    r.r13 = 0;
    r.rax = stack.at(10);
    r.rcx = stack.at(11);
    r.rdx = stack.at(12);
    r.r14 = HandStack::locals_of(top_fp);
    return r;
  }
  // The thread's frames at a later poll, walked from `fp` (a frame still on the stack).
  std::vector<runtime::Frame> frames_from(uintptr_t pc, uintptr_t fp) {
    std::vector<runtime::Frame> out;
    runtime::StackWalker w(&stack.thread, runtime::FramePos{fp - 64, fp, pc});
    runtime::Frame f;
    while (w.next(f)) out.push_back(f);
    return out;
  }
};

// --- what a walk or a reconstruction produced ------------------------------------------

struct VectorSink : sampler::FrameSink {
  std::vector<sampler::CompactFrame> frames;
  size_t capacity = SIZE_MAX;
  bool put(const sampler::CompactFrame& f) override {
    if (frames.size() >= capacity) return false;
    frames.push_back(f);
    return true;
  }
};

// "sum_to@18 interp, busy@7 interp": function (or stub name), bci and kind, top first.
inline std::string describe(const std::vector<sampler::CompactFrame>& frames) {
  std::string out;
  for (const sampler::CompactFrame& f : frames) {
    if (!out.empty()) out += ", ";
    if (f.kind == runtime::FrameKind::stub)
      out += std::string(f.stub != nullptr ? f.stub : "?") + " stub";
    else
      out += f.method->function->name + "@" + std::to_string(f.bci) + " " + runtime::frame_kind_name(f.kind);
  }
  return out;
}

inline std::string at(std::string_view fn, int32_t bci, std::string_view kind) {
  return std::string(fn) + "@" + std::to_string(bci) + " " + std::string(kind);
}

}  // namespace fixtures
