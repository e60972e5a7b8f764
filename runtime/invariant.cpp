#include "runtime/invariant.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace runtime {

namespace {

void put(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= size_t(w);
  }
}

}  // namespace

void invariant_failed(const char* what, const char* condition, const char* file, int line) {
  char number[16];
  int k = int(sizeof number) - 1;
  number[k] = '\0';
  unsigned v = line > 0 ? unsigned(line) : 0;
  do number[--k] = char('0' + v % 10);
  while ((v /= 10) != 0 && k > 0);
  put("minivm: internal error: invariant broken: ");
  put(what);
  put("\n  (");
  put(condition);
  put(" is false at ");
  put(file);
  put(":");
  put(number + k);
  put(")\n");
  std::abort();
}

}  // namespace runtime
