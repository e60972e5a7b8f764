// The template interpreter runs hand-built bytecode correctly (no front end involved).
#include <catch2/catch.hpp>

#include "runtime/code_blob.h"
#include "runtime/frame.h"
#include "runtime/poll.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;

TEST_CASE("interp: while loop with locals and iinc") {
  REQUIRE(run1(kSumTo, 0) == 0);
  REQUIRE(run1(kSumTo, 1000) == 499500);
  REQUIRE(run1(kSumTo, 100000) == 4999950000);
}

TEST_CASE("interp: recursive calls return values through the stack convention") {
  REQUIRE(run1(kFib, 0) == 0);
  REQUIRE(run1(kFib, 1) == 1);
  REQUIRE(run1(kFib, 20) == 6765);
  REQUIRE(run1(kDepth, 50000) == 50000);
}

TEST_CASE("interp: every bytecode has a template and every poll site is a real poll") {
  const auto& ti = interp::TemplateInterpreter::get();
  REQUIRE(ti.templates().size() == size_t(vm::kOpCount) + 3);  // + method_entry, array_failures, bad_opcode
  const runtime::CodeBlob& blob = ti.blob();
  REQUIRE(blob.polls.size() > 0);
  REQUIRE(runtime::find_blob(blob.begin) == &blob);
  for (const runtime::PollSite& p : blob.polls) {
    // Golden encoding: mov r10, [r15 + 0] ; test dword [r10], eax
    const auto* insn = reinterpret_cast<const uint8_t*>(p.pc);
    static const uint8_t kLoad[] = {0x4D, 0x8B, 0x17};
    REQUIRE(std::memcmp(insn - 3, kLoad, 3) == 0);
    REQUIRE(std::memcmp(insn, runtime::kPollTestInsn, runtime::kPollTestLength) == 0);
    REQUIRE(p.resume_pc == p.pc + runtime::kPollTestLength);
    REQUIRE(blob.find_poll(p.pc) == &p);
  }
}

TEST_CASE("interp: frame layout golden table") {
  // runtime/frame.h documents these; the walker and every generator depend on them.
  REQUIRE(runtime::kFrameReturnPcOffset == 8);
  REQUIRE(runtime::kFrameSavedFpOffset == 0);
  REQUIRE(runtime::kInterpFrameMethodOffset == -8);
  REQUIRE(runtime::kInterpFrameBcpOffset == -16);
  REQUIRE(runtime::kInterpFrameLocalsOffset == -24);
  REQUIRE(runtime::kThreadPollWordOffset == 0);
}
