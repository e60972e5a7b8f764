// Cooperative reconstruction on hand-built stacks: the sampled frame is found, the
// frames called after the sample are skipped, the pc correction expands inlined scopes,
// interpreted frames are matched by fp, and what cannot be matched says why.
#include <catch2/catch.hpp>

#include "jit/baseline_compiler.h"
#include "runtime/compiled_code.h"
#include "runtime/stubs.h"
#include "sampler/reconstruct.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using runtime::Frame;
using runtime::FrameKind;
using sampler::RequestKind;
using sampler::SampleRequest;

namespace {

Frame interp_frame(size_t fn, int32_t bci, uintptr_t fp) {
  Frame f;
  f.kind = FrameKind::interp;
  f.method = fixture_vm().method(fn);
  f.bci = bci;
  f.line = f.method->function->line_at(uint32_t(bci));
  f.pos = {fp - 64, fp, 0};
  return f;
}

Frame jit_frame(size_t fn, const runtime::CompiledCode* code, uintptr_t fp) {
  Frame f;
  f.kind = FrameKind::jit;
  f.method = fixture_vm().method(fn);
  f.bci = 0;
  f.pos = {fp - 64, fp, code->begin + 1};
  return f;
}

// A pc of `code` whose debug info says `bci` of its own method (the last desc for it).
uintptr_t pc_at_bci(const runtime::CompiledCode* code, int32_t bci) {
  for (auto& d : code->pc_descs)
    if (d.scope_count == 1 && code->scopes[d.scope_begin].bci == bci) return code->begin + d.pc_offset;
  FAIL("no pc for bci " << bci);
  return 0;
}

}  // namespace

TEST_CASE("reconstruct: compiled request skips callee frames and corrects the pc") {
  const runtime::CompiledCode* sum = jit::compile_method(fixture_vm().method(kSumTo), {});
  const runtime::CompiledCode* fib = jit::compile_method(fixture_vm().method(kFib), {});
  // At the poll: fib (called after the sample) over sum_to (sampled) over busy.
  std::vector<Frame> frames = {jit_frame(kFib, fib, 0x1000), jit_frame(kSumTo, sum, 0x2000),
                               interp_frame(kBusy, 6, 0x3000)};
  SampleRequest r;
  r.kind = RequestKind::compiled;
  r.pc = pc_at_bci(sum, 23);  // inside sum_to's loop body: the iadd (its load of i has no code of its own)
  r.sp = 0x1fc0;              // below sum_to's fp, above fib's real fp (0x1010)
  sampler::StackTrace out;
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 2);
  CHECK(out[0].function == "sum_to");
  CHECK(out[0].bci == 23);  // the sampled pc's bci, not where the frame was at the poll
  CHECK(out[0].kind == sampler::FrameKind::jit);
  CHECK(out[1].function == "busy");
  CHECK(out[1].bci == 6);
}

TEST_CASE("reconstruct: a compiled frame that escaped is reported, not guessed") {
  const runtime::CompiledCode* sum = jit::compile_method(fixture_vm().method(kSumTo), {});
  const runtime::CompiledCode* fib = jit::compile_method(fixture_vm().method(kFib), {});
  std::vector<Frame> frames = {jit_frame(kFib, fib, 0x2000), interp_frame(kBusy, 6, 0x3000)};
  SampleRequest r;
  r.kind = RequestKind::compiled;
  r.pc = pc_at_bci(sum, 23);
  r.sp = 0x1fc0;  // the first frame above is fib's, not sum_to's
  sampler::StackTrace out;
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::frame_escaped);
  r.sp = 0x4000;  // above everything
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::frame_not_found);
}

TEST_CASE("reconstruct: inlined scopes at the sampled pc are expanded") {
  const runtime::CompiledCode* outer = jit::compile_method(fixture_vm().method(kOuter), {});
  uintptr_t inlined_pc = 0;
  for (auto& d : outer->pc_descs)
    if (d.scope_count == 2) inlined_pc = outer->begin + d.pc_offset;
  REQUIRE(inlined_pc != 0);
  std::vector<Frame> frames = {jit_frame(kOuter, outer, 0x2000), interp_frame(kBusy, 6, 0x3000)};
  SampleRequest r;
  r.kind = RequestKind::compiled;
  r.pc = inlined_pc;
  r.sp = 0x1f00;
  sampler::StackTrace out;
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 3);
  CHECK(out[0].function == "sum_to_inl");
  CHECK(out[0].kind == sampler::FrameKind::inlined);
  CHECK(out[1].function == "outer");
  CHECK(out[1].kind == sampler::FrameKind::jit);
  CHECK(out[2].function == "busy");
}

TEST_CASE("reconstruct: interpreted request matches the frame by fp and takes its bcp") {
  std::vector<Frame> frames = {interp_frame(kFib, 0, 0x1000), interp_frame(kSumTo, 30, 0x2000),
                               interp_frame(kBusy, 6, 0x3000)};
  const runtime::Method* sum = fixture_vm().method(kSumTo);
  SampleRequest r;
  r.kind = RequestKind::interpreted;
  r.fp = 0x2000;
  r.bcp = sum->code + 18;
  sampler::StackTrace out;
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 2);
  CHECK(out[0].function == "sum_to");
  CHECK(out[0].bci == 18);
  CHECK(out[1].function == "busy");

  r.fp = 0x2500;
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::frame_not_found);
  r.fp = 0x2000;
  r.bcp = fixture_vm().method(kFib)->code;  // a bcp of another method
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::bad_bcp);
}

TEST_CASE("reconstruct: an interpreted frame moved into compiled code by OSR is the same activation") {
  // The interpreter's back-edge polls, then may jump to compiled code by OSR: its frame is
  // turned back into "just called" and the compiled OSR entry builds its own under the
  // same return address, so its fp is higher by the extra locals the interpreted frame
  // kept above that address (interp/interp_masm.cpp, branch). A request made between that
  // poll and the jump is served in the compiled frame.
  const runtime::CompiledCode* sum = jit::compile_method(fixture_vm().method(kSumTo), {});
  const runtime::Method* m = fixture_vm().method(kSumTo);
  REQUIRE(m->extra_locals > 0);
  const uintptr_t interpreted_fp = 0x2000, compiled_fp = interpreted_fp + 8 * m->extra_locals;
  std::vector<Frame> frames = {interp_frame(kFib, 0, 0x1000), jit_frame(kSumTo, sum, compiled_fp),
                               interp_frame(kBusy, 6, 0x3000)};
  SampleRequest r;
  r.kind = RequestKind::interpreted;
  r.fp = interpreted_fp;
  r.method = m;
  r.bcp = m->code + 18;
  sampler::StackTrace out;
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 2);
  CHECK(out[0].function == "sum_to");
  CHECK(out[0].bci == 18);
  CHECK(out[0].kind == sampler::FrameKind::interp);  // where it was when the signal came
  CHECK(out[1].function == "busy");

  // A frame the compiled one called since may stand at the interpreted fp: still found.
  frames[0] = interp_frame(kFib, 0, interpreted_fp);
  out.clear();
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  CHECK(out[0].function == "sum_to");
  CHECK(out[1].function == "busy");

  // A compiled frame of another method there is not the sampled activation, and neither
  // is one of the same method at the interpreted fp itself.
  const runtime::CompiledCode* fib = jit::compile_method(fixture_vm().method(kFib), {});
  frames = {interp_frame(kFib, 0, 0x1000), jit_frame(kFib, fib, compiled_fp), interp_frame(kBusy, 6, 0x3000)};
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::frame_not_found);
  frames[1] = jit_frame(kSumTo, sum, interpreted_fp);
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::frame_not_found);
}

TEST_CASE("reconstruct: a returning or entering method goes on top of its caller") {
  std::vector<Frame> frames = {interp_frame(kFib, 0, 0x1000), interp_frame(kBusy, 6, 0x3000)};
  SampleRequest r;
  r.kind = RequestKind::interpreted_over_caller;
  r.caller_fp = 0x3000;
  r.bcp = fixture_vm().method(kSumTo)->code + 48;  // sum_to's vret, found from the bcp
  sampler::StackTrace out;
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 2);
  CHECK(out[0].function == "sum_to");
  CHECK(out[0].bci == 48);
  CHECK(out[1].function == "busy");

  r.bcp = nullptr;  // method entry: the Method is known, bci 0
  r.method = fixture_vm().method(kDepth);
  out.clear();
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  CHECK(out[0].function == "depth");
  CHECK(out[0].bci == 0);

  r.caller_fp = 0x9999;
  out.clear();
  CHECK(sampler::reconstruct(r, frames, out) == sampler::Reason::caller_not_found);

  // A thread's first Mini frame, entered from the call stub: no Mini caller to find, and
  // none to report.
  r.caller_pc = runtime::call_stub_blob().begin + 1;
  out.clear();
  REQUIRE(sampler::reconstruct(r, frames, out) == std::nullopt);
  REQUIRE(out.size() == 1);
  CHECK(out[0].function == "depth");
}
