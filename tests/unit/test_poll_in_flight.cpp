// A thread interrupted at the instruction that decides its poll (a trap poll's `test`, a
// branch poll's `ja`) has read its poll word before the handler armed it: the handler
// makes that very poll see the arming (sampler/interruption.cpp), or the sampled frame
// could return before its request is served.
#include <ucontext.h>

#include <catch2/catch.hpp>

#include "interp/template_interpreter.h"
#include "jit/baseline_compiler.h"
#include "runtime/poll.h"
#include "sampler/profiler_state.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

ucontext_t interrupted_at(uintptr_t pc, uintptr_t r10) {
  ucontext_t uc{};
  uc.uc_mcontext.gregs[REG_RIP] = greg_t(pc);
  uc.uc_mcontext.gregs[REG_R10] = greg_t(r10);
  return uc;
}

uintptr_t good_page() { return reinterpret_cast<uintptr_t>(poll_pages().good); }

}  // namespace

TEST_CASE("poll in flight: a compiled poll interrupted at its jump goes to its stub once armed, and only then") {
  CompiledCode* code = jit::compile_method(fixture_vm().method(kSumTo), {});  // a loop header and a return
  REQUIRE(code->polls.size() == 2);
  Thread t;  // runs nothing: its poll word and limit are the test's
  for (const PollSite& p : code->polls) {
    REQUIRE(p.stub != 0);
    ucontext_t uc = interrupted_at(p.pc, 0x1234);
    sampler::catch_poll_in_flight(&t, &uc);
    CHECK(uintptr_t(uc.uc_mcontext.gregs[REG_RIP]) == p.pc);  // not armed: the poll passes
    arm_poll(&t);
    sampler::catch_poll_in_flight(&t, &uc);
    CHECK(uintptr_t(uc.uc_mcontext.gregs[REG_RIP]) == p.stub);
    CHECK(uintptr_t(uc.uc_mcontext.gregs[REG_R10]) == 0x1234);  // a branch poll has no page in r10
    disarm_poll(&t);
    // One instruction earlier the compare has not run yet: it will read the arming itself.
    arm_poll(&t);
    ucontext_t before = interrupted_at(p.pc - 4, 0x1234);  // `cmp rsp, [r15 + disp8]`
    sampler::catch_poll_in_flight(&t, &before);
    CHECK(uintptr_t(before.uc_mcontext.gregs[REG_RIP]) == p.pc - 4);
    disarm_poll(&t);
  }
}

TEST_CASE("poll in flight: an interpreter poll interrupted at its test gets the armed page in r10") {
  const CodeBlob& blob = interp::TemplateInterpreter::get().blob();
  REQUIRE(!blob.polls.empty());
  Thread t;
  const PollSite& p = blob.polls.front();
  REQUIRE(p.stub == 0);
  ucontext_t uc = interrupted_at(p.pc, good_page());
  sampler::catch_poll_in_flight(&t, &uc);
  CHECK(uintptr_t(uc.uc_mcontext.gregs[REG_R10]) == good_page());
  arm_poll(&t);
  sampler::catch_poll_in_flight(&t, &uc);
  CHECK(poll_pages().is_bad_address(uintptr_t(uc.uc_mcontext.gregs[REG_R10])));
  CHECK(uintptr_t(uc.uc_mcontext.gregs[REG_RIP]) == p.pc);  // the test itself traps
}
