// Mixed stacks (sampler/mixed_stack.h): a libunwind walk's Mini markers replaced by the
// Mini walk's frames, counted from the bottom; disagreement is a failure, not a guess;
// C/C++ frames named from the ELF symbol tables.
#include <catch2/catch.hpp>
#include <string>

#include "sampler/mixed_stack.h"

using sampler::CompactFrame;
using sampler::CompactTrace;
using runtime::FrameKind;

namespace {

const runtime::Method* method(uintptr_t n) { return reinterpret_cast<const runtime::Method*>(n * 16); }
CompactFrame cpp(uintptr_t pc) { return CompactFrame{nullptr, nullptr, -1, FrameKind::cpp, pc}; }
CompactFrame marker() { return CompactFrame{nullptr, nullptr, -1, FrameKind::jit}; }
CompactFrame call_stub() { return CompactFrame{nullptr, "call_stub", -1, FrameKind::stub}; }
CompactFrame mini(uintptr_t m, FrameKind kind) { return CompactFrame{method(m), nullptr, 3, kind}; }

// "c<pc>" for cpp frames, "stub", "m<n>:<kind>" for Mini frames, top first.
std::string describe(const CompactTrace& t) {
  std::string s;
  for (const CompactFrame& f : t) {
    if (!s.empty()) s += ' ';
    if (f.kind == FrameKind::cpp)
      s += "c" + std::to_string(f.pc);
    else if (f.stub != nullptr)
      s += "stub";
    else
      s += "m" + std::to_string(reinterpret_cast<uintptr_t>(f.method) / 16) + ":" + runtime::frame_kind_name(f.kind);
  }
  return s;
}

// A thread's stack: start (c9 c8) call_stub, main (interp), f (compiled, g inlined), a
// native callback's C++ (c5) entering Mini code again through the call stub, h.
const CompactTrace kNative{marker(), call_stub(), cpp(5), marker(), marker(), call_stub(), cpp(8), cpp(9)};
const CompactTrace kMini{mini(4, FrameKind::interp), mini(3, FrameKind::inlined), mini(2, FrameKind::jit),
                         mini(1, FrameKind::interp)};

}  // namespace

TEST_CASE("mixed stacks: Mini markers are replaced by the Mini walk's frames, in order from the bottom") {
  CompactTrace out;
  REQUIRE(sampler::physical_frames(kMini) == 3);
  REQUIRE_FALSE(sampler::interleave(kNative, kMini, 3, 3, false, out));
  CHECK(describe(out) == "m4:interp stub c5 m3:inlined m2:jit m1:interp stub c8 c9");
}

TEST_CASE("mixed stacks: frames above the shared part come from the Mini walk's top") {
  // The sampled stack is g over f over main (rebuilt top: m7), the poll's own frames from f down.
  CompactTrace sampled{mini(7, FrameKind::interp), mini(2, FrameKind::jit), mini(1, FrameKind::interp)};
  CompactTrace out;
  REQUIRE_FALSE(sampler::interleave(kNative, sampled, 2, 3, false, out));
  // The poll's Mini frames above the shared ones (h) are dropped; the top is m7, where h
  // was, over the C++ that called it (the callback's).
  CHECK(describe(out) == "m7:interp stub c5 m2:jit m1:interp stub c8 c9");
}

TEST_CASE("mixed stacks: a thread in native code has what its native called above the native frame") {
  CompactTrace native{cpp(1), cpp(2), marker(), call_stub(), cpp(9)};
  CompactTrace frames{mini(6, FrameKind::native), mini(5, FrameKind::jit)};
  CompactTrace out;
  REQUIRE_FALSE(sampler::interleave(native, frames, 1, 1, true, out));
  CHECK(describe(out) == "c1 c2 m6:native m5:jit stub c9");
}

TEST_CASE("mixed stacks: walks that disagree on the Mini frames are a failure") {
  CompactTrace out;
  CHECK(sampler::interleave(kNative, kMini, 3, 4, false, out) == sampler::Reason::native_walk_mismatch);
  CompactTrace short_native{marker(), call_stub(), cpp(9)};
  CHECK(sampler::interleave(short_native, kMini, 3, 3, false, out) == sampler::Reason::native_walk_mismatch);
  CHECK(sampler::interleave(kNative, kMini, 4, 3, false, out) == sampler::Reason::native_walk_mismatch);
}

namespace {
__attribute__((noinline)) uintptr_t here() { return reinterpret_cast<uintptr_t>(__builtin_return_address(0)); }
}  // namespace

TEST_CASE("mixed stacks: a C++ pc is named by its function, demangled, without parameters") {
  uintptr_t pc = here();  // in this test's function, which Catch2 names C_A_T_C_H_T_E_S_T_<N>
  std::string name = sampler::symbolize(pc - 1);
  INFO(name);
  CHECK(name.find("C_A_T_C_H_T_E_S_T_") != std::string::npos);
  CHECK(name.find('(') == std::string::npos);
  CHECK(sampler::symbolize(reinterpret_cast<uintptr_t>(&sampler::physical_frames) + 1) == "sampler::physical_frames");
}

TEST_CASE("mixed stacks: a Mini walk cut at its depth limit is merged with the walk's top part only") {
  // The Mini walk kept h and f (with g inlined): the top two physical frames.
  CompactTrace cut{mini(4, FrameKind::interp), mini(3, FrameKind::inlined), mini(2, FrameKind::jit)};
  CompactTrace top = kNative;
  top.resize(sampler::through_top_markers(kNative, sampler::physical_frames(cut)));
  CompactTrace out;
  REQUIRE_FALSE(sampler::interleave(top, cut, 2, 2, false, out));
  CHECK(describe(out) == "m4:interp stub c5 m3:inlined m2:jit");
  // Merged whole, the counts disagree: the failure the cut stack had before.
  CHECK(sampler::interleave(kNative, cut, 2, 2, false, out) == sampler::Reason::native_walk_mismatch);
  CHECK(sampler::through_top_markers(kNative, 9) == kNative.size());
}
