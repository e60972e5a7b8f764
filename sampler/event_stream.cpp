// JsonlStream (event_stream.h): a file descriptor under a mutex, written whole lines at
// a time, remembering its first write error.
#include "sampler/event_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sampler/profile/report.h"

namespace sampler {

int open_profile_output(const std::string& path) {
  // "-": a descriptor of its own on the profile's standard output, which close() may close.
  if (path == "-") return fcntl(standard_output_fd(), F_DUPFD_CLOEXEC, 0);
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
}

bool JsonlStream::open(const std::string& path, std::string& error) {
  fd_ = open_profile_output(path);
  if (fd_ < 0) {
    error = fmt::format("--profile-out {}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  path_ = path;
  open_.store(true, std::memory_order_release);
  return true;
}

void JsonlStream::append(std::string_view lines) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (max_bytes_ > 0 && (lines_left_out_ > 0 || written_ + lines.size() > max_bytes_)) {
    // The whole lines that still fit; from the first that does not, none (a gap in the
    // middle of the file would read as a complete recording).
    size_t fit = lines_left_out_ > 0 ? 0 : size_t(max_bytes_ - written_);
    size_t end = lines.rfind('\n', fit == 0 ? 0 : fit - 1);
    size_t keep = fit == 0 || end == std::string_view::npos ? 0 : end + 1;
    for (char c : lines.substr(keep)) lines_left_out_ += c == '\n';
    lines = lines.substr(0, keep);
  }
  written_ += lines.size();
  // After a failed write the file may end inside a line: nothing more is added to it.
  while (fd_ >= 0 && write_errno_ == 0 && !lines.empty()) {
    ssize_t n = ::write(fd_, lines.data(), lines.size());
    if (n > 0)
      lines.remove_prefix(size_t(n));
    else if (n == 0)
      write_errno_ = EIO;  // a file that takes nothing: never seen, but not a reason to spin
    else if (errno != EINTR)
      write_errno_ = errno;
  }
}

std::string JsonlStream::cap_note() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lines_left_out_ == 0) return "";
  return fmt::format("--profile-out {}: stopped at --profile-max-size ({} bytes written): {} later events not written",
                     path_, written_, lines_left_out_);
}

bool JsonlStream::close(std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return true;
  open_.store(false, std::memory_order_release);
  if (::close(fd_) != 0 && write_errno_ == 0) write_errno_ = errno;
  fd_ = -1;
  if (write_errno_ == 0) return true;
  error = fmt::format("--profile-out {}: error while writing{}: {}", path_, path_ == "-" ? " standard output" : "",
                      std::strerror(write_errno_));
  return false;
}

}  // namespace sampler
