// The walks from an interrupted context (sampler/context_walk.h) on hand-built stacks:
// the guessing walk of `classical` and `async`, the exact walk of `oracle`, and the
// step out of one frame that the exact walk and the request builder share. Every frame
// kind a walk yields (interpreted, compiled, inlined, stub), every special pc range of
// the interpreter and of compiled code, and every failure reason, at pcs of the real
// generated code.
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "runtime/signals.h"
#include "vm/opcodes.h"
#include "tests/unit/sampled_stack.h"

using namespace fixtures;
using runtime::FrameRow;
using sampler::Registers;

namespace {

struct Walks {
  sampler::WalkResult guess, exact;
  std::string guess_frames, exact_frames;
};

Walks walk_both(Scene& s, const Registers& regs) {
  VectorSink g, e;
  Walks w;
  w.guess = sampler::walk_guess(&s.stack.thread, regs, g);
  w.exact = sampler::walk_exact(&s.stack.thread, regs, e);
  w.guess_frames = describe(g.frames);
  w.exact_frames = describe(e.frames);
  return w;
}


}  // namespace

// --- frame kinds ---------------------------------------------------------------------

TEST_CASE("walkers: an interpreted frame: the guess reads the frame's saved bcp, the exact walk the live one") {
  ensure_generated_code();
  Scene s;
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  Registers regs = s.regs(template_pc("iadd"), s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(method(kSumTo)->code + 18);
  std::string busy = at("busy", s.busy_call_bci, "interp");

  Walks w = walk_both(s, regs);
  CHECK(reason_of(w.guess) == "");
  CHECK(w.guess.depth == 2);
  CHECK_FALSE(w.guess.truncated);
  CHECK(w.guess_frames == at("sum_to", 12, "interp") + ", " + busy);
  CHECK(reason_of(w.exact) == "");
  CHECK(w.exact_frames == at("sum_to", 18, "interp") + ", " + busy);

  // Right after a call returns r13 is the callee's: the exact walk takes the frame's copy.
  regs.r13 = reinterpret_cast<uintptr_t>(method(kFib)->code + 3);
  CHECK(walk_both(s, regs).exact_frames == at("sum_to", 12, "interp") + ", " + busy);

  // Neither the live bcp nor the frame's copy is in the frame's method.
  s.stack.store(s.top_fp + runtime::kInterpFrameBcpOffset, method(kFib)->code);
  CHECK(reason_of(walk_both(s, regs).exact) == "bad_bcp");
}

TEST_CASE("walkers: the guess counts the saved bcp stale when the pc runs another bytecode's template") {
  ensure_generated_code();
  Scene s;
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  vm::Op saved = vm::Op(method(kSumTo)->code[12]);
  std::string other = vm::op_info(saved).name == "iadd" ? "isub" : "iadd";
  std::string busy = at("busy", s.busy_call_bci, "interp");

  // The pc in the saved instruction's own template: the frame's position may be exact.
  Walks same = walk_both(s, s.regs(template_pc(vm::op_info(saved).name), s.top_fp - 40, s.top_fp));
  CHECK(reason_of(same.guess) == "");
  CHECK_FALSE(same.guess.biased);
  // In another bytecode's template: the frame names an instruction that already ran. The
  // sample keeps the frame's position, counted biased; the exact walk is never biased.
  Walks lag = walk_both(s, s.regs(template_pc(other) + 1, s.top_fp - 40, s.top_fp));
  CHECK(reason_of(lag.guess) == "");
  CHECK(reason_of(lag.guess.biased) == "stale_bcp");
  CHECK(lag.guess_frames == at("sum_to", 12, "interp") + ", " + busy);
  CHECK_FALSE(lag.exact.biased);
  // Every bytecode's template says which bytecode it runs, from its first pc to its last.
  const runtime::CodeBlob& interp = interpreter_blob();
  for (const runtime::BytecodeTemplate& t : interp.templates) {
    CHECK(interp.bytecode_at(t.begin) == t.opcode);
    CHECK(interp.bytecode_at(t.end - 1) == t.opcode);
  }
  CHECK(interp.templates.size() == size_t(vm::kOpCount));
  CHECK(interp.bytecode_at(template_pc("method_entry")) == -1);
}

TEST_CASE("walkers: a compiled frame, from its first complete pc and from a poll site") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  REQUIRE_FALSE(sum->polls.empty());
  std::string busy = at("busy", fixtures::first_call_bci(kBusy), "interp");
  for (uintptr_t pc : {sum->begin + sum->frame_complete_offset, sum->polls.front().pc}) {
    INFO("pc " << sum->name << "+" << pc - sum->begin);
    Scene s;
    s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
    Walks w = walk_both(s, s.regs(pc, s.top_fp - sum->frame_bytes, s.top_fp));
    std::string expected = at("sum_to", bci_at(sum, pc), "jit") + ", " + busy;
    CHECK(reason_of(w.guess) == "");
    CHECK(w.guess_frames == expected);
    CHECK(reason_of(w.exact) == "");
    CHECK(w.exact_frames == expected);
  }
}

TEST_CASE("walkers: inlined scopes at the interrupted pc come before their compiled frame") {
  ensure_generated_code();
  const runtime::CompiledCode* outer = compiled(kOuter);
  const runtime::PcDesc* inlined = nullptr;
  for (const runtime::PcDesc& d : outer->pc_descs)
    if (d.scope_count == 2 && outer->begin + d.pc_offset >= outer->begin + outer->frame_complete_offset) inlined = &d;
  REQUIRE(inlined != nullptr);
  uintptr_t pc = outer->begin + inlined->pc_offset;
  REQUIRE(outer->special_at(pc) == nullptr);
  Scene s;
  s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
  Walks w = walk_both(s, s.regs(pc, s.top_fp - outer->frame_bytes, s.top_fp));
  std::string expected = at("sum_to_inl", outer->scopes[inlined->scope_begin].bci, "inlined") + ", " +
                         at("outer", outer->scopes[inlined->scope_begin + 1].bci, "jit") + ", " +
                         at("busy", s.busy_call_bci, "interp");
  CHECK(w.guess_frames == expected);
  CHECK(w.exact_frames == expected);
}

TEST_CASE("walkers: an interpreted frame called from compiled code") {
  ensure_generated_code();
  const runtime::CompiledCode* busy = compiled(kBusy);
  Scene s;
  int32_t call = first_call_bci(kBusy);
  s.stack.link(s.busy_fp, s.stack.at(500), s.entry_return_pc);  // busy compiled: only the link
  s.stack.interp_frame(s.top_fp, s.busy_fp, compiled_return_pc(busy, call), kSumTo, 12);
  Registers regs = s.regs(template_pc("iadd"), s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(method(kSumTo)->code + 12);
  Walks w = walk_both(s, regs);
  std::string expected = at("sum_to", 12, "interp") + ", " + at("busy", call, "jit");
  CHECK(w.guess_frames == expected);
  CHECK(w.exact_frames == expected);
}

TEST_CASE("walkers: a frameless stub: the guess fails, the exact walk steps out with the stub's frame table") {
  ensure_generated_code();
  const jit::IntrinsicStub& stub = jit::intrinsic_stubs().arraycopy;
  const runtime::CompiledCode* sum = compiled(kSumTo);
  REQUIRE_FALSE(stub.blob.stub_frames.empty());
  int32_t bci = bci_at(sum, sum->polls.front().pc);
  std::string expected = "arraycopy stub, " + at("sum_to", bci, "jit") + ", " + at("busy", first_call_bci(kBusy), "interp");
  // Each range of the stub's table keeps its return address at another offset from rsp.
  for (const runtime::StubFrame& f : stub.blob.stub_frames) {
    INFO("stub pc +" << f.begin - stub.blob.begin << ", return address at rsp+" << f.ret_sp_offset);
    Scene s;
    s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);  // sum_to compiled, calling the stub
    uintptr_t sp = s.top_fp - sum->frame_bytes - 64;
    s.stack.store(sp + uintptr_t(f.ret_sp_offset), compiled_return_pc(sum, bci));
    Walks w = walk_both(s, s.regs(f.begin, sp, s.top_fp));
    CHECK(reason_of(w.guess) == "pc_in_stub");
    CHECK(w.guess.depth == 0);
    CHECK(reason_of(w.exact) == "");
    CHECK(w.exact_frames == expected);
  }
}

TEST_CASE("walkers: a pc outside generated code (a thread in native or VM code) is not walked") {
  ensure_generated_code();
  Scene s;
  Walks w = walk_both(s, s.regs(reinterpret_cast<uintptr_t>(&walk_both), s.top_fp - 40, s.top_fp));
  CHECK(reason_of(w.guess) == "unknown_pc");
  CHECK(reason_of(w.exact) == "unknown_pc");
}

// --- special pc ranges ---------------------------------------------------------------

TEST_CASE("walkers: the guess refuses every pc of every prologue and epilogue range") {
  ensure_generated_code();
  Scene s;
  struct Case {
    const runtime::CodeBlob* blob;
    const char* range;
    const char* failure;
  };
  const runtime::CodeBlob* sum = compiled(kSumTo);
  const runtime::CodeBlob* interp = &interpreter_blob();
  for (Case c : {Case{sum, "prologue", "pc_in_prologue"}, Case{sum, "epilogue", "pc_in_epilogue"},
                 Case{sum, "epilogue_left", "pc_in_epilogue"}, Case{interp, "interp_entry", "pc_in_prologue"},
                 Case{interp, "interp_entry_framed", "pc_in_prologue"}, Case{interp, "interp_epilogue", "pc_in_epilogue"},
                 Case{interp, "interp_epilogue_left", "pc_in_epilogue"},
                 Case{interp, "interp_osr_left", "pc_in_epilogue"}}) {
    INFO(c.range);
    std::vector<runtime::PcRange> ranges = ranges_named(*c.blob, c.range);
    REQUIRE_FALSE(ranges.empty());
    size_t pcs = 0, refused = 0;
    for (const runtime::PcRange& r : ranges)
      for (uintptr_t pc = r.begin; pc < r.end; pc++, pcs++) {
        VectorSink sink;
        refused += reason_of(sampler::walk_guess(&s.stack.thread, s.regs(pc, s.top_fp - 40, s.top_fp), sink)) == c.failure;
      }
    CHECK(pcs > 0);
    CHECK(refused == pcs);
  }
  // Prologues end at the frame-complete offset: the next pc is walked (see above).
  CHECK(range_named(*sum, "prologue").end == sum->begin + compiled(kSumTo)->frame_complete_offset);
}

TEST_CASE("walkers: the exact walk parses a compiled method's prologues and epilogues") {
  ensure_generated_code();
  const runtime::CompiledCode* sum = compiled(kSumTo);
  std::string busy = at("busy", first_call_bci(kBusy), "interp");
  SECTION("prologue (method entry and OSR entries): rbp is still the caller's, the return address at [rsp]") {
    for (const runtime::PcRange& r : ranges_named(*sum, "prologue")) {
      INFO("prologue at +" << r.begin - sum->begin);
      Scene s;
      uintptr_t sp = s.top_fp + 8;  // just called: the return address is the only thing pushed
      s.stack.store(sp, s.interp_return_pc);
      Walks w = walk_both(s, s.regs(r.begin, sp, s.busy_fp));
      CHECK(reason_of(w.exact) == "");
      CHECK(w.exact_frames == at("sum_to", bci_at(sum, r.begin), "jit") + ", " + busy);
    }
  }
  SECTION("epilogue: after the return poll, rbp still this frame's") {
    for (const runtime::PcRange& r : ranges_named(*sum, "epilogue")) {
      Scene s;
      s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
      Walks w = walk_both(s, s.regs(r.begin, s.top_fp - sum->frame_bytes, s.top_fp));
      CHECK(reason_of(w.exact) == "");
      CHECK(w.exact_frames == at("sum_to", bci_at(sum, r.begin), "jit") + ", " + busy);
    }
  }
  SECTION("epilogue_left: the frame is gone, rbp the caller's, the return address at [rsp]") {
    for (const runtime::PcRange& r : ranges_named(*sum, "epilogue_left")) {
      Scene s;
      uintptr_t sp = s.top_fp + 8;
      s.stack.store(sp, s.interp_return_pc);
      Walks w = walk_both(s, s.regs(r.begin, sp, s.busy_fp));
      CHECK(reason_of(w.exact) == "");
      CHECK(w.exact_frames == at("sum_to", bci_at(sum, r.begin), "jit") + ", " + busy);
    }
  }
}

TEST_CASE("walkers: the exact walk parses the interpreter's method entry and returns") {
  ensure_generated_code();
  const runtime::CodeBlob& interp = interpreter_blob();
  const runtime::Method* sum = method(kSumTo);
  std::string busy = at("busy", first_call_bci(kBusy), "interp");
  SECTION("interp_entry: the callee's Method* in rbx, rbp the caller's, the return address at [rsp]") {
    runtime::PcRange r = range_named(interp, "interp_entry");
    Scene s;
    uintptr_t sp = s.top_fp + 8;
    s.stack.store(sp, s.interp_return_pc);
    Registers regs = s.regs(r.begin, sp, s.busy_fp);
    regs.rbx = reinterpret_cast<uintptr_t>(method(kDepth));
    Walks w = walk_both(s, regs);
    CHECK(reason_of(w.exact) == "");
    CHECK(w.exact_frames == at("depth", 0, "interp") + ", " + busy);
  }
  SECTION("interp_entry_framed: rbp this frame's, Method* and bcp not stored yet") {
    runtime::PcRange r = range_named(interp, "interp_entry_framed");
    Scene s;
    s.stack.link(s.top_fp, s.busy_fp, s.interp_return_pc);
    Registers regs = s.regs(r.begin, s.top_fp, s.top_fp);
    regs.rbx = reinterpret_cast<uintptr_t>(method(kDepth));
    Walks w = walk_both(s, regs);
    CHECK(reason_of(w.exact) == "");
    CHECK(w.exact_frames == at("depth", 0, "interp") + ", " + busy);
  }
  SECTION("interp_epilogue: after the return poll, the frame intact, r13 at the return") {
    for (const runtime::PcRange& r : ranges_named(interp, "interp_epilogue")) {
      Scene s;
      s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
      Registers regs = s.regs(r.begin, s.top_fp - 32, s.top_fp);
      regs.r13 = reinterpret_cast<uintptr_t>(sum->code + 48);
      Walks w = walk_both(s, regs);
      CHECK(reason_of(w.exact) == "");
      CHECK(w.exact_frames == at("sum_to", 48, "interp") + ", " + busy);
    }
  }
  SECTION("interp_epilogue_left: rbp the caller's, the return address in rcx, r14 the returning frame's locals") {
    for (const runtime::PcRange& r : ranges_named(interp, "interp_epilogue_left")) {
      Scene s;
      s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
      Registers regs = s.regs(r.begin, s.top_fp - 32, s.busy_fp);
      regs.rcx = s.interp_return_pc;
      regs.r13 = reinterpret_cast<uintptr_t>(sum->code + 48);
      Walks w = walk_both(s, regs);
      CHECK(reason_of(w.exact) == "");
      CHECK(w.exact_frames == at("sum_to", 48, "interp") + ", " + busy);
      // r13 in no method: nothing says which method is returning.
      regs.r13 = 0x10;
      CHECK(reason_of(walk_both(s, regs).exact) == "bad_bcp");
    }
  }
}

// --- failure reasons -----------------------------------------------------------------

TEST_CASE("walkers: runtime stubs and pcs whose caller is not in the registers") {
  ensure_generated_code();
  Scene s;
  const runtime::CodeBlob& call_stub = blob_of_kind(runtime::BlobKind::call_stub);
  const runtime::CodeBlob& safepoint = blob_of_kind(runtime::BlobKind::safepoint_blob);
  Walks w = walk_both(s, s.regs(call_stub.begin, s.top_fp - 40, s.top_fp));
  CHECK(reason_of(w.guess) == "pc_in_runtime_stub");
  CHECK(reason_of(w.exact) == "pc_in_call_stub");
  // The safepoint blob's first instruction: its return address is still in the thread.
  w = walk_both(s, s.regs(safepoint.begin, s.top_fp - 40, s.top_fp));
  CHECK(reason_of(w.guess) == "pc_in_runtime_stub");
  CHECK(reason_of(w.exact) == "no_frame_description");
  // The interpreter's out-of-line stack-overflow path after it realigned rsp: its CFA is
  // the anchor sp it stored.
  const FrameRow* from_anchor = nullptr;
  for (const FrameRow& r : interpreter_blob().frame_rows)
    if (r.cfa == FrameRow::Cfa::anchor_sp) from_anchor = &r;
  REQUIRE(from_anchor != nullptr);
  Registers regs = s.regs(interpreter_blob().begin + from_anchor->offset, s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(method(kSumTo)->code);
  VectorSink sink;
  CHECK(reason_of(sampler::walk_exact(&s.stack.thread, regs, sink)) == "no_frame_description");
}

TEST_CASE("walkers: the guess's safe-for-sender checks") {
  ensure_generated_code();
  Scene s;
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  uintptr_t pc = template_pc("iadd");
  auto guess = [&](const Registers& regs) {
    VectorSink sink;
    return sampler::walk_guess(&s.stack.thread, regs, sink);
  };
  SECTION("bad_top_fp: off the thread's stack, misaligned, or below sp") {
    CHECK(reason_of(guess(s.regs(pc, s.top_fp - 40, 0x1000))) == "bad_top_fp");
    CHECK(reason_of(guess(s.regs(pc, s.top_fp - 40, s.top_fp + 4))) == "bad_top_fp");
    CHECK(reason_of(guess(s.regs(pc, s.top_fp + 8, s.top_fp))) == "bad_top_fp");
  }
  SECTION("bad_sender_fp: the caller's fp below the frame's, or off the stack") {
    uintptr_t lower = s.stack.at(200);
    s.stack.interp_frame(lower, s.busy_fp, s.entry_return_pc, kBusy, s.busy_call_bci);
    s.stack.link(s.top_fp, lower, s.interp_return_pc);
    sampler::WalkResult r = guess(s.regs(pc, s.top_fp - 40, s.top_fp));
    CHECK(reason_of(r) == "bad_sender_fp");
    CHECK(r.depth == 1);
    s.stack.link(s.top_fp, 0x10, s.interp_return_pc);
    CHECK(reason_of(guess(s.regs(pc, s.top_fp - 40, s.top_fp))) == "bad_sender_fp");
  }
  SECTION("bad_sender_pc: the return address in no generated code") {
    s.stack.link(s.top_fp, s.busy_fp, reinterpret_cast<uintptr_t>(&walk_both));
    sampler::WalkResult r = guess(s.regs(pc, s.top_fp - 40, s.top_fp));
    CHECK(reason_of(r) == "bad_sender_pc");
    CHECK(r.depth == 1);
  }
  SECTION("sender_not_walkable: the return address in a stub") {
    s.stack.link(s.top_fp, s.busy_fp, jit::intrinsic_stubs().crc32.blob.begin + 1);
    CHECK(reason_of(guess(s.regs(pc, s.top_fp - 40, s.top_fp))) == "sender_not_walkable");
  }
  SECTION("bad_method: an interpreter frame whose Method* is none of the VM's") {
    runtime::Method fake{};
    const runtime::Method* busy = method(kBusy);
    fake.code = busy->code;
    fake.code_size = busy->code_size;
    fake.function = busy->function;
    s.stack.store(s.busy_fp + runtime::kInterpFrameMethodOffset, &fake);
    sampler::WalkResult r = guess(s.regs(pc, s.top_fp - 40, s.top_fp));
    CHECK(reason_of(r) == "bad_method");
    CHECK(r.depth == 1);
  }
  SECTION("the depth limit cuts the stack and marks it truncated; it is a sample, not a failure") {
    VectorSink sink;
    sampler::WalkResult r = sampler::walk_guess(&s.stack.thread, s.regs(pc, s.top_fp - 40, s.top_fp), sink, 1);
    CHECK(reason_of(r) == "");
    CHECK(r.truncated);
    CHECK(r.depth == 1);
    CHECK(describe(sink.frames) == at("sum_to", 12, "interp"));
  }
}

TEST_CASE("walkers: a full sink ends either walk as arena_full") {
  ensure_generated_code();
  Scene s;
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  Registers regs = s.regs(template_pc("iadd"), s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(method(kSumTo)->code + 12);
  for (size_t room : {0, 1}) {
    INFO("room for " << room << " frames");
    VectorSink g, e;
    g.capacity = e.capacity = room;
    sampler::WalkResult rg = sampler::walk_guess(&s.stack.thread, regs, g);
    sampler::WalkResult re = sampler::walk_exact(&s.stack.thread, regs, e);
    CHECK(reason_of(rg) == "arena_full");
    CHECK(reason_of(re) == "arena_full");
    CHECK(rg.depth == room);
    CHECK(re.depth == room);
  }
}

TEST_CASE("walkers: a fault while reading the stack ends a protected walk as crashed_in_walk") {
  ensure_generated_code();
  runtime::install_signal_handlers();
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* none = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(none != MAP_FAILED);
  Scene s;
  s.stack.thread.stack_low = s.stack.thread.stack_high = 0;  // a thread without recorded bounds trusts any fp
  uintptr_t fp = reinterpret_cast<uintptr_t>(none) + page / 2;
  Registers regs = s.regs(template_pc("iadd"), fp - 40, fp);
  VectorSink sink;
  for (bool exact : {false, true}) {
    INFO("exact " << exact);
    CHECK(reason_of(sampler::walk_protected(exact, &s.stack.thread, regs, sink, sampler::kGuessDepthLimit)) ==
          "crashed_in_walk");
  }
  munmap(none, page);
}

// --- one step out ----------------------------------------------------------------------

TEST_CASE("walkers: step_out reads the caller's sp, return address and fp where each row kind says") {
  HandStack st;
  uintptr_t sp = st.at(100), fp = st.at(120), r14 = st.at(140);
  Registers regs{};
  regs.sp = sp;
  regs.fp = fp;
  regs.r14 = r14;
  regs.rax = 0xa0;
  regs.rcx = 0xc0;
  regs.rdx = st.at(300);
  regs.rbx = reinterpret_cast<uintptr_t>(fixture_vm().method(kSumTo));  // one parameter
  st.store(sp, 0x5b);            // [rsp]
  st.store(sp + 8, 0x5c);        // [rsp + 8]
  st.store(fp, st.at(200));      // [rbp]: the caller's fp
  st.store(fp + 8, 0xf8);        // [rbp + 8]: the return address
  uintptr_t cfa = 0, ra = 0, caller_fp = 0;
  auto step = [&](FrameRow row) { return sampler::step_out(row, regs, cfa, ra, caller_fp); };

  FrameRow entry;  // the defaults: just called
  REQUIRE(step(entry));
  CHECK(cfa == sp + 8);
  CHECK(ra == 0x5b);
  CHECK(caller_fp == fp);

  FrameRow framed = FrameRow::rbp_frame();
  REQUIRE(step(framed));
  CHECK(cfa == fp + 16);
  CHECK(ra == 0xf8);
  CHECK(caller_fp == st.at(200));

  FrameRow leaving = FrameRow::entry().with_cfa(FrameRow::Cfa::r14, 8).with_ra(FrameRow::Ra::in_rcx);
  REQUIRE(step(leaving));
  CHECK(cfa == r14 + 8);
  CHECK(ra == 0xc0);
  CHECK(caller_fp == fp);

  FrameRow entering =
      FrameRow::entry().with_cfa(FrameRow::Cfa::r14_less_params, 16).with_ra(FrameRow::Ra::in_rax).with_rbp_in_rdx();
  REQUIRE(step(entering));
  CHECK(cfa == r14 - 8 + 16);
  CHECK(ra == 0xa0);
  CHECK(caller_fp == st.at(300));

  FrameRow at_rsp = FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 16).with_ra(FrameRow::Ra::at_rsp);
  REQUIRE(step(at_rsp));
  CHECK(cfa == sp + 16);
  CHECK(ra == 0x5b);

  // What the thread holds, not its registers: not stepped out of from a context.
  CHECK_FALSE(step(FrameRow::entry().with_cfa(FrameRow::Cfa::anchor_sp, 0)));
  CHECK_FALSE(step(FrameRow::entry().with_ra(FrameRow::Ra::at_resume_pc)));
}
