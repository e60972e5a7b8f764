#include "vm/cli/source_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "runtime/slowdown.h"
#include "vm/frontend.h"
#include "vm/text.h"

namespace cli {

bool read_source(const std::string& path, std::string& text, std::string& error) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = "cannot read '" + vm::shortened(path) + "': is a directory";
    return false;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "cannot open '" + vm::shortened(path) + "': " + std::strerror(errno);
    return false;
  }
  // Read in pieces up to one byte past the limit: a size from stat is not to be trusted
  // (/dev/zero, a pipe or a growing file has none).
  text.clear();
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0 && text.size() <= kMaxSourceBytes)
    text.append(buffer, std::min(n, kMaxSourceBytes + 1 - text.size()));
  bool failed = std::ferror(f);
  int read_errno = errno;
  std::fclose(f);
  if (failed) {
    error = "cannot read '" + vm::shortened(path) + "': " + std::strerror(read_errno);
    return false;
  }
  if (text.size() > kMaxSourceBytes) {
    error = "cannot read '" + vm::shortened(path) + "': larger than " + std::to_string(kMaxSourceBytes >> 20) +
            " MiB, the most a Mini source file may be";
    return false;
  }
  return true;
}

namespace {

// Why a slowdown went nowhere: no function of that name, or no code of its on that line.
std::string unplaced(const vm::Module& m, const vm::SlowdownSite& s) {
  const vm::Function* f = m.find(s.function);
  std::string what = "--slowdown=" + vm::shortened(vm::format_slowdown(s));
  if (f == nullptr) return fmt::format("{}: the program has no function '{}' (name a method Class.method)", what,
                                       vm::shortened(s.function));
  uint32_t first = UINT32_MAX, last = 0;
  for (const vm::LineEntry& e : f->lines) first = std::min(first, e.line), last = std::max(last, e.line);
  return fmt::format("{}: {} has no code on line {} (its code is on lines {} to {} of {})", what, f->name, s.line, first,
                     last, m.files[f->file]);
}

}  // namespace

std::unique_ptr<vm::Module> compile_or_exit(const std::string& path, std::vector<vm::SlowdownSite>& slowdowns) {
  std::string source, error;
  if (!read_source(path, source, error)) {
    std::fprintf(stderr, "minivm: %s\n", error.c_str());
    std::exit(2);
  }
  vm::CompileError compile_error;
  auto module = vm::compile_source(path, source, compile_error, read_source, &slowdowns);
  if (!module) {
    std::fprintf(stderr, "%s\n", compile_error.format().c_str());
    std::exit(2);
  }
  for (const vm::SlowdownSite& s : slowdowns) {
    if (s.placed == 0) {
      std::fprintf(stderr, "minivm: %s\n", unplaced(*module, s).c_str());
      std::exit(2);
    }
  }
  if (!slowdowns.empty()) runtime::calibrate_slowdown();
  return module;
}

}  // namespace cli
