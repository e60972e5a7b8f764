// Runs code that is meant to abort (a broken invariant) in a child process, so the test
// process lives on to judge what the child wrote and how it ended.
#pragma once
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>

// Runs `broken` in a child process; its stderr and how it ended (waitpid's status).
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
