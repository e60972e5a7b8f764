// MVM_ASSERT (runtime/invariant.h): a broken invariant in a checking build writes what
// must hold, the condition and where, and aborts; a Release build does not evaluate it.
#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "runtime/invariant.h"
#include "tests/unit/in_child.h"

TEST_CASE("invariant: a broken one says what must hold, the condition and where, and aborts") {
  int two = 2;
  auto [err, status] = in_child([&] { MVM_ASSERT(two + two == 5, "arithmetic on this machine is sound"); });
  if (runtime::kInvariantsChecked) {
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGABRT);
    CHECK(err.find("minivm: internal error: invariant broken: arithmetic on this machine is sound\n") == 0);
    CHECK(err.find("(two + two == 5 is false at ") != std::string::npos);
    CHECK(err.find("test_invariant.cpp:") != std::string::npos);
  } else {
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(err.empty());
  }
}

TEST_CASE("invariant: a holding one is silent, and Release builds do not evaluate the condition") {
  int evaluated = 0;
  MVM_ASSERT(++evaluated > 0, "the counter counts");
  CHECK(evaluated == (runtime::kInvariantsChecked ? 1 : 0));
}
