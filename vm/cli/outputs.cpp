#include "vm/cli/outputs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>

#include "runtime/natives.h"

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

namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId&) const = default;
};

// The file `path` names ("-": standard output), if it exists.
std::optional<FileId> file_id(const std::string& path) {
  struct stat st;
  if ((path == "-" ? fstat(STDOUT_FILENO, &st) : stat(path.c_str(), &st)) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// Whether standard output is a regular file (which a second writer would truncate).
bool stdout_is_a_file() {
  struct stat st;
  return fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode);
}

// The absolute path a file not created yet will have.
std::string future_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : p.string();
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" && b == "-") return true;
  std::optional<FileId> ia = file_id(a), ib = file_id(b);
  if (ia && ib) return *ia == *ib && file_id("/dev/null") != ia;
  if (ia || ib || a == "-" || b == "-") return false;  // one exists, or stdout is closed
  return future_path(a) == future_path(b);
}

std::string clashing_outputs_reason(const std::string& program, const std::vector<NamedFile>& outputs) {
  for (size_t i = 0; i < outputs.size(); i++) {
    const NamedFile& out = outputs[i];
    if (out.path != "-" && same_file(out.path, program))
      return out.option + " " + out.path + " is the program being run (" + program +
             "): writing there would destroy it";
    if (out.path != "-" && stdout_is_a_file() && same_file(out.path, "-"))
      return out.option + " " + out.path +
             " is where standard output goes: writing there would overwrite the program's output";
    for (size_t j = 0; j < i; j++) {
      const NamedFile& other = outputs[j];
      if (!same_file(other.path, out.path)) continue;
      if (other.path == "-" && out.path == "-")
        return other.option + " - and " + out.option +
               " - both write to standard output, where the two would run together: give one of them a file";
      return other.option + " " + other.path + " and " + out.option + " " + out.path +
             " are the same file: one would overwrite the other";
    }
  }
  return "";
}

bool flush_stdout() {
  // The first flush that fails says why (cout writes through stdout's buffer); a failed
  // write drops the buffer, so a second flush succeeds and says nothing.
  errno = 0;
  std::cout.flush();
  int flush_errno = errno;
  bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  if (flush_errno == 0) flush_errno = errno;
  if (!ok) {
    int first = runtime::print_write_errno() != 0 ? runtime::print_write_errno() : flush_errno;
    const char* why = first != 0 ? std::strerror(first) : "a write failed";
    std::fprintf(stderr, "minivm: error writing standard output: %s\n", why);
  }
  return ok;
}

std::string expand_output_name(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); i++) {
    if (path[i] != '%' || i + 1 == path.size() || (path[i + 1] != 'p' && path[i + 1] != 't')) {
      out += path[i];
      continue;
    }
    if (path[++i] == 'p') {
      out += std::to_string(getpid());
    } else {
      time_t now = time(nullptr);
      tm local{};
      localtime_r(&now, &local);
      char stamp[32];
      strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
      out += stamp;
    }
  }
  return out;
}

}  // namespace cli
