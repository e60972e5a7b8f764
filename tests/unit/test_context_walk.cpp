// The pieces of the samplers that walk from an interrupted context: crash protection,
// the frame arena. (The walks themselves: test_walkers.cpp on hand-built stacks, and
// tests/test_profiler.py against the oracle on real interruptions.)
#include <catch2/catch.hpp>
#include <cstdint>

#include "runtime/signals.h"
#include "sampler/frame_arena.h"

namespace {
void read_null(void*) {
  volatile const uintptr_t* p = nullptr;
  (void)*p;
}
void read_ok(void* arg) { *static_cast<int*>(arg) = 42; }
}  // namespace

TEST_CASE("crash protection: a fault in a protected call is a failure, not a crash, and protection nests") {
  runtime::install_signal_handlers();
  unsigned long before = runtime::protected_crash_count();
  CHECK_FALSE(runtime::protected_call(&read_null, nullptr));
  CHECK(runtime::protected_crash_count() == before + 1);
  int v = 0;
  CHECK(runtime::protected_call(&read_ok, &v));
  CHECK(v == 42);
  // Inside a protected call, a nested one that crashes returns to the inner sigsetjmp.
  struct Nest {
    static void outer(void* arg) { *static_cast<bool*>(arg) = runtime::protected_call(&read_null, nullptr); }
  };
  bool inner_ok = true;
  CHECK(runtime::protected_call(&Nest::outer, &inner_ok));
  CHECK_FALSE(inner_ok);
  CHECK(runtime::protected_crash_count() == before + 2);
}

TEST_CASE("frame arena: a full arena refuses frames until the consumer releases them") {
  sampler::FrameArena arena(8);
  uint64_t cur = arena.cursor();
  sampler::CompactFrame f;
  for (int i = 0; i < 8; i++) {
    f.bci = i;
    REQUIRE(arena.put(cur, f));
  }
  CHECK_FALSE(arena.put(cur, f));
  arena.commit(cur);
  CHECK(arena.at(3).bci == 3);
  arena.release_to(5);
  f.bci = 100;
  REQUIRE(arena.put(cur, f));
  CHECK(arena.at(8).bci == 100);
  CHECK(arena.at(0).bci == 100);  // the slot wrapped around
}
