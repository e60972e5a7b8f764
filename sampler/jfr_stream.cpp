// JfrStream (jfr_stream.h): the chunk under way's events in an unlinked file, each ended
// chunk appended to the .jfr whole.
#include "sampler/jfr_stream.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "sampler/event_stream.h"

namespace sampler {

bool JfrStream::open(const std::string& path, const Profile& naming, SamplerId primary, uint64_t start_ticks,
                     std::string& error) {
  fd_ = open_profile_output(path);
  // Beside the .jfr, or for standard output in the temporary directory.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string events_path = path != "-" ? path + ".events-XXXXXX"
                                        : std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/minivm-jfr-XXXXXX";
  if (fd_ >= 0) {
    events_fd_ = mkostemp(events_path.data(), O_APPEND | O_CLOEXEC);
    if (events_fd_ < 0) {
      ::close(fd_);
      fd_ = -1;
    } else {
      unlink(events_path.c_str());
    }
  }
  if (fd_ < 0) {
    error = fmt::format("--profile-out {}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  writer_ = std::make_unique<JfrChunkWriter>(naming, primary);
  chunk_start_ticks_ = start_ticks;
  path_ = path;
  open_.store(true, std::memory_order_release);
  return true;
}

uint64_t JfrStream::stack_id(const StackTrace& trace, bool truncated) {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_->stack_id(trace, truncated);
}

void JfrStream::write_all(int fd, std::string_view data) {
  // After a failed write the file may end inside an event: nothing more is added to it.
  while (fd >= 0 && write_errno_ == 0 && !data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0)
      data.remove_prefix(size_t(n));
    else if (n == 0)
      write_errno_ = EIO;
    else if (errno != EINTR)
      write_errno_ = errno;
  }
}

void JfrStream::append(std::string_view events) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_all(events_fd_, events);
  events_size_ += events.size();
}

void JfrStream::end_chunk_locked(bool final_chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  std::string header, tail;
  JfrChunkWriter::Times times = jfr_times_since(chunk_start_ticks_);
  writer_->finish(events_size_, times, final_chunk, header, tail);
  write_all(fd_, header);
  // The events, copied from their file in blocks.
  std::string block(size_t(1) << 16, '\0');
  for (uint64_t at = 0; at < events_size_ && write_errno_ == 0;) {
    ssize_t n = pread(events_fd_, block.data(), block.size(), off_t(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_errno_ = n < 0 ? errno : EIO;
      break;
    }
    write_all(fd_, std::string_view(block.data(), size_t(n)));
    at += uint64_t(n);
  }
  write_all(fd_, tail);
  if (ftruncate(events_fd_, 0) != 0 && write_errno_ == 0) write_errno_ = errno;
  events_size_ = 0;
  chunk_start_ticks_ = times.end_ticks;
}

bool JfrStream::close(std::string& error) {
  end_chunk_locked(/*final_chunk=*/true);
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return true;
  open_.store(false, std::memory_order_release);
  if (::close(fd_) != 0 && write_errno_ == 0) write_errno_ = errno;
  ::close(events_fd_);
  fd_ = events_fd_ = -1;
  if (write_errno_ == 0) return true;
  error = fmt::format("--profile-out {}: error while writing{}: {}", path_, path_ == "-" ? " standard output" : "",
                      std::strerror(write_errno_));
  return false;
}

}  // namespace sampler
