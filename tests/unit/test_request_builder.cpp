// The request builder (sampler/sample_request.h) on hand-built contexts, and the
// cooperative reconstruction of each request at a later poll (sampler/reconstruct.h):
// what a signal handler records for every frame kind and every special pc range, and
// the stack the thread then rebuilds from its own frames, including the cases where the
// sampled frame escaped or is not found.
#include <catch2/catch.hpp>

#include "tests/unit/sampled_stack.h"

using namespace fixtures;
using sampler::Registers;
using sampler::RequestKind;
using sampler::SampleRequest;

namespace {

const uint8_t* bcp(size_t fn, int32_t bci) { return method(fn)->code + bci; }

// The stack rebuilt at the poll from `frames`, or "failed: REASON".
std::string rebuilt(const SampleRequest& r, const std::vector<runtime::Frame>& frames) {
  sampler::CompactTrace out;
  std::optional<sampler::Reason> failure = sampler::reconstruct(r, frames, out);
  return failure ? "failed: " + reason_of(failure) : describe(out);
}

const char* kind_name(RequestKind k) {
  switch (k) {
    case RequestKind::compiled: return "compiled";
    case RequestKind::interpreted: return "interpreted";
    case RequestKind::compiled_over_caller: return "compiled_over_caller";
    case RequestKind::interpreted_over_caller: return "interpreted_over_caller";
    case RequestKind::unparsable: return "unparsable";
    case RequestKind::stub: return "stub";
    case RequestKind::failed: return "failed";
  }
  return "?";
}

// Every pc of `range` (a frame half built or half torn down) makes an
// interpreted_over_caller request from `regs`; the request made at its first pc.
SampleRequest over_caller_at_every_pc(const runtime::PcRange& range, Registers regs) {
  for (uintptr_t pc = range.begin; pc < range.end; pc++) {
    regs.pc = pc;
    CHECK(kind_name(sampler::build_request(regs).kind) == std::string("interpreted_over_caller"));
  }
  regs.pc = range.begin;
  return sampler::build_request(regs);
}

}  // namespace

// --- frames in their normal shape -----------------------------------------------------

TEST_CASE("request builder: interpreted code records the frame's fp and the live bcp") {
  ensure_generated_code();
  Scene s;
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  Registers regs = s.regs(template_pc("iadd"), s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(bcp(kSumTo, 18));
  SampleRequest r = sampler::build_request(regs);
  CHECK(kind_name(r.kind) == std::string("interpreted"));
  CHECK(r.method == method(kSumTo));
  CHECK(r.fp == s.top_fp);
  CHECK(r.bcp == bcp(kSumTo, 18));
  // At the poll the frame is still there (at another bci): the request's bcp wins.
  std::string busy = at("busy", s.busy_call_bci, "interp");
  CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.top_fp)) == at("sum_to", 18, "interp") + ", " + busy);
  // The frame has returned by the poll: not found, never guessed.
  CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.busy_fp)) == "failed: frame_not_found");
  // A bcp outside the frame's method.
  SampleRequest other = r;
  other.bcp = bcp(kFib, 0);
  CHECK(rebuilt(other, s.frames_from(template_pc("iadd"), s.top_fp)) == "failed: bad_bcp");

  // Right after a call returned r13 is the callee's: the frame's copy is the exact bcp.
  regs.r13 = reinterpret_cast<uintptr_t>(bcp(kFib, 3));
  CHECK(sampler::build_request(regs).bcp == bcp(kSumTo, 12));
}

TEST_CASE("request builder: compiled code records pc and sp, and the poll skips later callees and corrects the pc") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  const runtime::CompiledCode* fib = compiled(kFib);
  uintptr_t pc = sum->polls.front().pc;
  Scene s;
  s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
  uintptr_t sp = s.top_fp - sum->frame_bytes;
  SampleRequest r = sampler::build_request(s.regs(pc, sp, s.top_fp));
  CHECK(kind_name(r.kind) == std::string("compiled"));
  CHECK(r.pc == pc);
  CHECK(r.sp == sp);
  CHECK(r.caller_fp == 0);

  // At the poll sum_to is elsewhere and has called fib, whose frame lies below the
  // sampled sp: skipped, and sum_to's position is the sampled pc's.
  uintptr_t fib_fp = s.stack.at(250);
  int32_t later = bci_at(sum, sum->polls.back().pc);
  s.stack.link(fib_fp, s.top_fp, compiled_return_pc(sum, later));
  std::vector<runtime::Frame> frames = s.frames_from(fib->begin + fib->frame_complete_offset, fib_fp);
  REQUIRE(frames.size() == 3);
  CHECK(rebuilt(r, frames) == at("sum_to", bci_at(sum, pc), "jit") + ", " + at("busy", s.busy_call_bci, "interp"));

  // The sampled frame escaped: the first frame above the sampled sp is another method's.
  CHECK(rebuilt(r, s.frames_from(s.interp_return_pc, s.busy_fp)) == "failed: frame_escaped");
  // No frame lies above the sampled sp at all.
  SampleRequest above = r;
  above.sp = s.stack.at(510);
  CHECK(rebuilt(above, frames) == "failed: frame_not_found");
}

TEST_CASE("request builder: a compiled prologue needs nothing special: by the poll the frame is complete") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  for (const runtime::PcRange& range : ranges_named(*sum, "prologue")) {
    INFO("prologue at +" << range.begin - sum->begin);
    Scene s;
    uintptr_t sp = s.top_fp + 8;  // just called
    s.stack.store(sp, s.interp_return_pc);
    for (uintptr_t pc = range.begin; pc < range.end; pc++)
      CHECK(kind_name(sampler::build_request(s.regs(pc, sp, s.busy_fp)).kind) == std::string("compiled"));
    SampleRequest r = sampler::build_request(s.regs(range.begin, sp, s.busy_fp));
    s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);  // the frame the prologue builds
    CHECK(rebuilt(r, s.frames_from(sum->polls.front().pc, s.top_fp)) ==
          at("sum_to", bci_at(sum, range.begin), "jit") + ", " + at("busy", s.busy_call_bci, "interp"));
  }
}

TEST_CASE("request builder: inlined scopes at the sampled pc are expanded at the poll") {
  ensure_generated_code();
  const runtime::CompiledCode* outer = compiled(kOuter);
  const runtime::PcDesc* inlined = nullptr;
  for (const runtime::PcDesc& d : outer->pc_descs)
    if (d.scope_count == 2 && d.pc_offset >= outer->frame_complete_offset) inlined = &d;
  REQUIRE(inlined != nullptr);
  Scene s;
  s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
  SampleRequest r = sampler::build_request(s.regs(outer->begin + inlined->pc_offset, s.top_fp - 64, s.top_fp));
  CHECK(kind_name(r.kind) == std::string("compiled"));
  CHECK(rebuilt(r, s.frames_from(outer->polls.back().pc, s.top_fp)) ==
        at("sum_to_inl", outer->scopes[inlined->scope_begin].bci, "inlined") + ", " +
            at("outer", outer->scopes[inlined->scope_begin + 1].bci, "jit") + ", " + at("busy", s.busy_call_bci, "interp"));
}

// --- frames being torn down or built: rebuilt over the caller ---------------------------

TEST_CASE("request builder: after a compiled return poll the method goes on top of its caller, at its call") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  int32_t call = first_call_bci(kBusy);
  struct Case {
    const char* range;
    bool frame_left;  // rbp is already the caller's
  };
  for (Case c : {Case{"epilogue", false}, Case{"epilogue_left", true}}) {
    for (const runtime::PcRange& range : ranges_named(*sum, c.range)) {
      INFO(c.range << " at +" << range.begin - sum->begin);
      Scene s;
      s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
      uintptr_t sp = c.frame_left ? s.top_fp + 8 : s.top_fp - sum->frame_bytes;
      if (c.frame_left) s.stack.store(sp, s.interp_return_pc);
      uintptr_t fp = c.frame_left ? s.busy_fp : s.top_fp;
      for (uintptr_t pc = range.begin; pc < range.end; pc++)
        CHECK(kind_name(sampler::build_request(s.regs(pc, sp, fp)).kind) == std::string("compiled_over_caller"));
      SampleRequest r = sampler::build_request(s.regs(range.begin, sp, fp));
      CHECK(r.caller_fp == s.busy_fp);
      CHECK(r.caller_pc == s.interp_return_pc);
      CHECK(r.caller_bcp == bcp(kBusy, call));
      // By the poll busy has moved on (its frame's bcp is later): the sample keeps it at the call.
      s.stack.store(s.busy_fp + runtime::kInterpFrameBcpOffset, bcp(kBusy, call + 3));
      std::vector<runtime::Frame> frames = s.frames_from(template_pc("iadd"), s.busy_fp);
      CHECK(rebuilt(r, frames) == at("sum_to", bci_at(sum, range.begin), "jit") + ", " + at("busy", call, "interp"));
      // The caller is gone too by the poll.
      CHECK(rebuilt(r, {}) == "failed: caller_not_found");
    }
  }
}

TEST_CASE("request builder: a compiled caller of a returning method is kept at its call's pc") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  const runtime::CompiledCode* busy = compiled(kBusy);
  int32_t call = first_call_bci(kBusy);
  runtime::PcRange range = range_named(*sum, "epilogue");
  Scene s;
  s.stack.link(s.busy_fp, s.stack.at(500), s.entry_return_pc);
  s.stack.link(s.top_fp, s.busy_fp, compiled_return_pc(busy, call));
  SampleRequest r = sampler::build_request(s.regs(range.begin, s.top_fp - sum->frame_bytes, s.top_fp));
  CHECK(kind_name(r.kind) == std::string("compiled_over_caller"));
  CHECK(r.caller_pc == compiled_return_pc(busy, call));
  CHECK(r.caller_bcp == nullptr);
  // At the poll busy is at its loop's poll.
  std::vector<runtime::Frame> frames = s.frames_from(busy->polls.front().pc, s.busy_fp);
  REQUIRE(frames.size() == 1);
  CHECK(rebuilt(r, frames) == at("sum_to", bci_at(sum, range.begin), "jit") + ", " + at("busy", call, "jit"));
}

TEST_CASE("request builder: in the interpreter's method entry the callee (rbx) goes on top of its caller") {
  ensure_generated_code();
  int32_t call = first_call_bci(kBusy);
  for (const char* name : {"interp_entry", "interp_entry_framed"}) {
    INFO(name);
    runtime::PcRange range = range_named(interpreter_blob(), name);
    bool framed = std::string(name) == "interp_entry_framed";
    Scene s;
    uintptr_t sp = framed ? s.top_fp : s.top_fp + 8;
    uintptr_t fp = framed ? s.top_fp : s.busy_fp;
    if (framed)
      s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
    else
      s.stack.store(sp, s.interp_return_pc);
    Registers regs = s.regs(range.begin, sp, fp);
    regs.rbx = reinterpret_cast<uintptr_t>(method(kDepth));
    SampleRequest r = over_caller_at_every_pc(range, regs);
    CHECK(r.method == method(kDepth));
    CHECK(r.bcp == nullptr);
    CHECK(r.caller_fp == s.busy_fp);
    CHECK(r.caller_pc == s.interp_return_pc);
    CHECK(r.caller_bcp == bcp(kBusy, call));
    CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.busy_fp)) ==
          at("depth", 0, "interp") + ", " + at("busy", call, "interp"));
  }
}

TEST_CASE("request builder: after an interpreted return poll the method (from r13) goes on top of its caller") {
  ensure_generated_code();
  int32_t call = first_call_bci(kBusy);
  for (const char* name : {"interp_epilogue", "interp_epilogue_left"}) {
    bool left = std::string(name) == "interp_epilogue_left";
    for (const runtime::PcRange& range : ranges_named(interpreter_blob(), name)) {
      INFO(name << " at +" << range.begin - interpreter_blob().begin);
      Scene s;
      s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
      Registers regs = s.regs(range.begin, s.top_fp - 32, left ? s.busy_fp : s.top_fp);
      regs.rcx = s.interp_return_pc;  // once the frame is left, the return address is in rcx
      regs.r13 = reinterpret_cast<uintptr_t>(bcp(kSumTo, 48));
      SampleRequest r = over_caller_at_every_pc(range, regs);
      CHECK(r.bcp == bcp(kSumTo, 48));
      CHECK(r.caller_fp == s.busy_fp);
      CHECK(r.caller_pc == s.interp_return_pc);
      CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.busy_fp)) ==
            at("sum_to", 48, "interp") + ", " + at("busy", call, "interp"));
      // r13 in no method: the returning method cannot be named.
      SampleRequest lost = r;
      lost.bcp = reinterpret_cast<const uint8_t*>(0x10);
      CHECK(rebuilt(lost, s.frames_from(template_pc("iadd"), s.busy_fp)) == "failed: bad_bcp");
    }
  }
}

TEST_CASE("request builder: in an OSR jump after the interpreted frame is gone, the method (from r13) goes on top of "
          "its caller") {
  ensure_generated_code();
  int32_t call = first_call_bci(kBusy);
  std::vector<runtime::PcRange> ranges = ranges_named(interpreter_blob(), "interp_osr_left");
  REQUIRE_FALSE(ranges.empty());  // one per back-edge template
  for (const runtime::PcRange& range : ranges) {
    INFO("interp_osr_left at +" << range.begin - interpreter_blob().begin);
    Scene s;
    // "Just called" again: the return address at rsp, rbp the caller's; the interpreted
    // frame's slots below rsp are the old frame's and are not read.
    uintptr_t sp = s.top_fp + 8;
    s.stack.store(sp, s.interp_return_pc);
    Registers regs = s.regs(range.begin, sp, s.busy_fp);
    regs.r13 = reinterpret_cast<uintptr_t>(bcp(kSumTo, 12));  // the loop header
    SampleRequest r = over_caller_at_every_pc(range, regs);
    CHECK(r.bcp == bcp(kSumTo, 12));
    CHECK(r.caller_fp == s.busy_fp);
    CHECK(r.caller_pc == s.interp_return_pc);
    CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.busy_fp)) ==
          at("sum_to", 12, "interp") + ", " + at("busy", call, "interp"));
  }
}

// --- stubs and what cannot be parsed --------------------------------------------------

TEST_CASE("request builder: a pc in a stub is biased without --stub-metadata, the stub over its caller with it") {
  ensure_generated_code();
  const jit::IntrinsicStub& stub = jit::intrinsic_stubs().crc32;
  const runtime::CompiledCode* sum = compiled(kSumTo);
  int32_t bci = bci_at(sum, sum->polls.front().pc);
  for (const runtime::StubFrame& f : stub.blob.stub_frames) {
    INFO("stub pc +" << f.begin - stub.blob.begin);
    Scene s;
    s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
    uintptr_t sp = s.top_fp - sum->frame_bytes - 64;
    s.stack.store(sp + uintptr_t(f.ret_sp_offset), compiled_return_pc(sum, bci));
    Registers regs = s.regs(f.begin, sp, s.top_fp);

    SampleRequest plain = sampler::build_request(regs);
    CHECK(kind_name(plain.kind) == std::string("unparsable"));
    CHECK(reason_of(plain) == "pc_in_stub");
    CHECK(rebuilt(plain, {}) == "failed: pc_in_stub");

    SampleRequest r = sampler::build_request(regs, /*stub_metadata=*/true);
    CHECK(kind_name(r.kind) == std::string("stub"));
    CHECK(r.pc == compiled_return_pc(sum, bci));
    CHECK(r.sp == sp + uintptr_t(f.ret_sp_offset) + 8);
    CHECK(std::string(r.stub_name) == "crc32");
    std::vector<runtime::Frame> frames = s.frames_from(sum->polls.back().pc, s.top_fp);
    CHECK(rebuilt(r, frames) == "crc32 stub, " + at("sum_to", bci, "jit") + ", " + at("busy", s.busy_call_bci, "interp"));

    // A stub's return address must be in compiled code (only compiled code calls stubs).
    SampleRequest odd = r;
    odd.pc = s.interp_return_pc;
    CHECK(rebuilt(odd, frames) == "failed: stub_caller_not_compiled");
  }
}

TEST_CASE("request builder: runtime stubs and unknown pcs are unparsable, with their reason") {
  ensure_generated_code();
  Scene s;
  struct Case {
    uintptr_t pc;
    const char* reason;
  };
  for (Case c : {Case{blob_of_kind(runtime::BlobKind::call_stub).begin, "pc_in_runtime_stub"},
                 Case{blob_of_kind(runtime::BlobKind::safepoint_blob).begin, "pc_in_runtime_stub"},
                 Case{reinterpret_cast<uintptr_t>(&rebuilt), "unknown_pc"}}) {
    INFO(c.reason);
    SampleRequest r = sampler::build_request(s.regs(c.pc, s.top_fp - 40, s.top_fp));
    CHECK(kind_name(r.kind) == std::string("unparsable"));
    CHECK(reason_of(r) == c.reason);
    CHECK(rebuilt(r, s.frames_from(template_pc("iadd"), s.busy_fp)) == std::string("failed: ") + c.reason);
  }
  // A request that failed before the poll is never rebuilt either.
  SampleRequest failed = sampler::build_request(s.regs(reinterpret_cast<uintptr_t>(&rebuilt), 0, 0));
  failed.kind = RequestKind::failed;
  CHECK(rebuilt(failed, s.frames_from(template_pc("iadd"), s.busy_fp)) == "failed: unknown_pc");
}
