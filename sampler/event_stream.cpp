// JsonlStream (event_stream.h): a FILE under a mutex, remembering its first write error.
#include "sampler/event_stream.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sampler {

bool JsonlStream::open(const std::string& path, std::string& error) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    error = fmt::format("--profile-out {}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  path_ = path;
  open_.store(true, std::memory_order_release);
  return true;
}

void JsonlStream::append(const std::string& lines) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ == nullptr || lines.empty()) return;
  if (std::fwrite(lines.data(), 1, lines.size(), file_) != lines.size() && write_errno_ == 0) write_errno_ = errno;
}

void JsonlStream::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ != nullptr && std::fflush(file_) != 0 && write_errno_ == 0) write_errno_ = errno;
}

bool JsonlStream::close(std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ == nullptr) return true;
  open_.store(false, std::memory_order_release);
  if (std::fclose(file_) != 0 && write_errno_ == 0) write_errno_ = errno;
  file_ = nullptr;
  if (write_errno_ == 0) return true;
  error = fmt::format("--profile-out {}: error while writing: {}", path_, std::strerror(write_errno_));
  return false;
}

}  // namespace sampler
