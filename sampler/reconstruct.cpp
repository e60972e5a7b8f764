#include "sampler/reconstruct.h"

#include <algorithm>
#include <cstdint>

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/method.h"
#include "runtime/vm.h"
#include "sampler/mixed_stack.h"
#include "vm/builtins.h"
#include "vm/opcodes.h"

namespace sampler {

FrameRef frame_ref(const runtime::Method* m, int32_t bci, FrameKind kind) {
  FrameRef f;
  f.function = m->function->name;
  f.bci = bci;
  f.line = m->function->line_at(uint32_t(bci < 0 ? 0 : bci));
  f.kind = kind;
  return f;
}

StackTrace to_trace(const std::vector<runtime::Frame>& frames, size_t from) {
  StackTrace out;
  for (size_t i = from; i < frames.size(); i++)
    out.push_back(frame_ref(frames[i].method, frames[i].bci, frames[i].kind));
  return out;
}

namespace {

// Index of the first frame (scope) of the physical frame whose fp is `fp`, or npos.
size_t find_by_fp(const std::vector<runtime::Frame>& frames, uintptr_t fp) {
  for (size_t i = 0; i < frames.size(); i++)
    if (frames[i].pos.fp == fp) return i;
  return SIZE_MAX;
}

// The compiled frame that on-stack replacement made of an interpreted request's frame, or
// npos. After the back-edge's poll the interpreter turns its frame back into "just called"
// and jumps to the compiled OSR entry, which builds its frame under the same return
// address (interp/interp_masm.cpp, branch). The interpreted frame kept its extra locals
// above that return address, so the compiled frame's fp is higher by as many words. The
// same activation if that frame's root scope (under any inlined ones) is the same method.
size_t replaced_by_osr(const std::vector<runtime::Frame>& frames, const SampleRequest& r) {
  const runtime::Method* m = r.method != nullptr ? r.method : runtime::VM::get().method_containing(r.bcp);
  if (m == nullptr || !m->holds(r.bcp)) return SIZE_MAX;
  uintptr_t fp = r.fp + 8 * uintptr_t(m->extra_locals);
  size_t i = find_by_fp(frames, fp);
  if (i == SIZE_MAX) return SIZE_MAX;
  while (i + 1 < frames.size() && frames[i + 1].pos.fp == fp) i++;
  return frames[i].kind == runtime::FrameKind::jit && frames[i].method == m ? i : SIZE_MAX;
}

CompactFrame compact(const runtime::Method* m, int32_t bci, FrameKind kind) { return CompactFrame{m, nullptr, bci, kind}; }

void append_frames(CompactTrace& out, const std::vector<runtime::Frame>& frames, size_t from) {
  for (size_t i = from; i < frames.size(); i++) out.push_back(compact_frame(frames[i]));
}

void append_scopes(CompactTrace& out, const runtime::ScopeChain& scopes) {
  for (uint32_t k = 0; k < scopes.count; k++) out.push_back(compact(scopes[k].method, scopes[k].bci, scopes.kind(k)));
}

}  // namespace

namespace {

// The builtin a native-state thread is in: the instruction at its anchor frame's bcp.
std::string native_name(const runtime::Method* m, int32_t bci) {
  const uint8_t* p = m->code + bci;
  switch (vm::Op(*p)) {
    case vm::Op::native: return std::string(vm::native_info(vm::NativeId(vm::read_u16(p, vm::kOperandA))).name);
    case vm::Op::print: return "print";
    default: return std::string(vm::op_info(vm::Op(*p)).name);
  }
}

}  // namespace

FrameRef frame_ref(const CompactFrame& f) {
  if (f.kind == FrameKind::cpp || f.kind == FrameKind::native) {
    FrameRef r;
    r.function = f.kind == FrameKind::cpp ? symbolize(f.pc) : native_name(f.method, f.bci);
    r.kind = f.kind;
    return r;
  }
  if (f.kind == FrameKind::stub) {
    FrameRef top;
    top.function = f.stub != nullptr ? f.stub : "stub";
    top.kind = FrameKind::stub;
    return top;
  }
  return frame_ref(f.method, f.bci, f.kind);
}

StackTrace named(const CompactTrace& t) {
  StackTrace out;
  out.reserve(t.size());
  for (const CompactFrame& f : t) out.push_back(frame_ref(f));
  return out;
}

std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, StackTrace& out) {
  CompactTrace t;
  std::optional<Reason> failure = reconstruct(r, frames, t);
  if (!failure) out = named(t);
  return failure;
}

std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, CompactTrace& out) {
  size_t from = 0;
  std::optional<Reason> failure = reconstruct(r, frames, out, from);
  if (!failure) append_frames(out, frames, from);
  return failure;
}

std::optional<Reason> reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, CompactTrace& out,
                                  size_t& from) {
  switch (r.kind) {
    case RequestKind::unparsable:
    case RequestKind::failed:  // the poll records it as failed without asking; its reason
      return r.reason;
    case RequestKind::stub:
    case RequestKind::compiled: {
      const runtime::CodeBlob* blob = runtime::find_blob(r.pc);
      if (blob == nullptr || blob->kind != runtime::BlobKind::compiled) return Reason::stub_caller_not_compiled;
      auto* code = static_cast<const runtime::CompiledCode*>(blob);
      if (r.kind == RequestKind::stub) out.push_back(CompactFrame{nullptr, r.stub_name, -1, FrameKind::stub});
      // Step over frames while real_fp <= sp: they were called after the sample.
      for (size_t i = 0; i < frames.size(); i++) {
        if (i > 0 && frames[i].pos.fp == frames[i - 1].pos.fp) continue;  // same physical frame
        if (runtime::real_fp(frames[i].pos.fp) <= r.sp) continue;
        if (runtime::find_blob(frames[i].pos.pc) != code) return Reason::frame_escaped;
        size_t next = i;
        while (next < frames.size() && frames[next].pos.fp == frames[i].pos.fp) next++;
        // The bias correction: the sampled pc, not the poll's (a stub request's pc is the
        // stub's return address).
        append_scopes(out, r.kind == RequestKind::stub ? code->scopes_at_return(r.pc) : code->scopes_at(r.pc));
        from = next;
        return std::nullopt;
      }
      return Reason::frame_not_found;
    }
    case RequestKind::interpreted: {
      size_t i = find_by_fp(frames, r.fp);
      if (i == SIZE_MAX || frames[i].kind != runtime::FrameKind::interp || !frames[i].method->holds(r.bcp)) {
        size_t osr = replaced_by_osr(frames, r);
        if (osr != SIZE_MAX) {
          i = osr;
        } else if (i == SIZE_MAX || frames[i].kind != runtime::FrameKind::interp) {
          return Reason::frame_not_found;
        }
      }
      const runtime::Method* m = frames[i].method;
      if (!m->holds(r.bcp)) return Reason::bad_bcp;
      out.push_back(compact(m, int32_t(r.bcp - m->code), FrameKind::interp));
      from = i + 1;
      return std::nullopt;
    }
    case RequestKind::compiled_over_caller:
    case RequestKind::interpreted_over_caller: {
      size_t i = find_by_fp(frames, r.caller_fp);
      const runtime::CodeBlob* entered_from = r.caller_pc != 0 ? runtime::find_blob(r.caller_pc) : nullptr;
      // The thread's first Mini frame, called by the call stub, has no Mini caller to find.
      bool first_frame = entered_from != nullptr && entered_from->kind == runtime::BlobKind::call_stub;
      if (i == SIZE_MAX && !first_frame) return Reason::caller_not_found;
      if (r.kind == RequestKind::compiled_over_caller) {
        append_scopes(out, static_cast<const runtime::CompiledCode*>(runtime::find_blob(r.pc))->scopes_at(r.pc));
      } else {
        const runtime::Method* m = r.method != nullptr ? r.method : runtime::VM::get().method_containing(r.bcp);
        if (m == nullptr) return Reason::bad_bcp;
        int32_t bci = r.bcp != nullptr ? int32_t(r.bcp - m->code) : 0;
        out.push_back(compact(m, bci, FrameKind::interp));
      }
      from = frames.size();
      if (first_frame) return std::nullopt;
      // The caller as it was at the interruption: at its call, even if by the poll it
      // has returned from it and moved on.
      const runtime::CodeBlob* caller = r.caller_pc != 0 ? runtime::find_blob(r.caller_pc) : nullptr;
      if (caller != nullptr && caller->kind == runtime::BlobKind::compiled &&
          frames[i].kind != runtime::FrameKind::interp) {
        append_scopes(out, static_cast<const runtime::CompiledCode*>(caller)->scopes_at_return(r.caller_pc));
        while (i < frames.size() && frames[i].pos.fp == r.caller_fp) i++;
      } else if (caller != nullptr && caller->kind == runtime::BlobKind::interpreter &&
                 frames[i].kind == runtime::FrameKind::interp && frames[i].method->holds(r.caller_bcp)) {
        out.push_back(compact(frames[i].method, int32_t(r.caller_bcp - frames[i].method->code), FrameKind::interp));
        i++;
      }
      from = i;
      return std::nullopt;
    }
  }
  return Reason::unknown_request;
}


}  // namespace sampler
