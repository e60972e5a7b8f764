// The .jsonl profile written while the program runs. Each recording thread formats its
// events' lines into its own EventBuffer and appends them here a block at a time (and
// when a dump or the end of the run asks), so events are never kept in memory until
// exit. Blocks of different threads interleave; within a thread, lines keep their order.
#pragma once
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace sampler {

class JsonlStream {
 public:
  // Creates (or truncates) `path`; false with "--profile-out PATH: why" in `error`.
  bool open(const std::string& path, std::string& error);
  bool is_open() const { return open_.load(std::memory_order_acquire); }
  void append(const std::string& lines);
  void flush();
  // Flushes and closes; false with the message in `error` if a write failed (a full disk).
  bool close(std::string& error);

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::atomic<bool> open_{false};
  std::string path_;
  int write_errno_ = 0;        // the first write error
};

}  // namespace sampler
