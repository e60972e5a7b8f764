// MVM_ASSERT (runtime/invariant.h): a broken invariant in a checking build writes what
// must hold, the condition and where, and aborts; a Release build does not evaluate it.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "runtime/invariant.h"

namespace {

// Runs `broken` in a child process; its stderr and how it ended.
template <typename F>
std::pair<std::string, int> in_child(F broken) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    broken();
    _exit(0);
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {err, status};
}

}  // namespace

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
