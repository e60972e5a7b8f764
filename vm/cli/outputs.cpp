#include "vm/cli/outputs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace cli {

std::string unwritable_reason(const std::string& path) {
  if (path == "-") return "";
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (access(path.c_str(), W_OK) != 0) return std::string("cannot write: ") + std::strerror(errno);
    return "";
  }
  if (errno != ENOENT) return std::string("cannot write: ") + std::strerror(errno);
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) return "no such directory: " + dir;
  if (!S_ISDIR(st.st_mode)) return "not a directory: " + dir;
  if (access(dir.c_str(), W_OK | X_OK) != 0) return "cannot create a file in " + dir + ": " + std::strerror(errno);
  return "";
}

bool flush_stdout() {
  std::cout.flush();
  errno = 0;
  bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  if (!ok) {
    const char* why = errno != 0 ? std::strerror(errno) : "a write failed";
    std::fprintf(stderr, "minivm: error writing standard output: %s\n", why);
  }
  return ok;
}

}  // namespace cli
