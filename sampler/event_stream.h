// The .jsonl profile written while the program runs. Each recording thread keeps its
// events in its own EventBuffer; the dump thread makes their lines and appends what every
// buffer holds at least every kStreamFlushNs (and when a dump or the end of the run asks),
// so events are never kept in memory until exit, a run killed with SIGKILL keeps every
// event older than that bound, and the Mini threads and the sampler thread spend no time
// on JSON. Blocks of different threads interleave; within a thread, lines keep their order.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace sampler {

// How old an event's line may get before it is in the file (dump_thread.cpp); how many
// bytes of lines (or .jfr events) a write gathers at most; and how many .jsonl events a
// buffer holds before its recording thread makes their lines and appends them itself
// (the dump thread is behind: about half a second of events at 10 kHz under
// --sampler=all, a couple of MB).
inline constexpr uint64_t kStreamFlushNs = 100'000'000;
inline constexpr size_t kStreamBlock = size_t(1) << 16;
inline constexpr size_t kStreamPendingEvents = size_t(1) << 15;

// Opens `path` for a profile written as it comes ("-": standard output, where
// standard_output_fd() says, profile/report.h); a descriptor, or -1 with errno.
int open_profile_output(const std::string& path);

class JsonlStream {
 public:
  // Creates (or truncates) `path` ("-": standard output); false with "--profile-out PATH:
  // why" in `error`.
  bool open(const std::string& path, std::string& error);
  bool is_open() const { return open_.load(std::memory_order_acquire); }
  // Writes `lines` (whole lines only) to the file now, with write(2) and no buffer of its
  // own, so the file always ends at the end of a line: a reader, or what a killed run
  // leaves, never has half of one (but while a write is under way; the next read then
  // has all of it).
  void append(std::string_view lines);
  // Closes; false with the message in `error` if a write failed (a full disk).
  bool close(std::string& error);
  // --profile-max-size (JFR's maxsize): the file stops growing at `bytes` (0: no cap), at
  // the end of the last whole line that fits; the lines after it are counted, not written.
  void set_max_bytes(uint64_t bytes) { max_bytes_ = bytes; }
  // What the cap left out ("" when nothing), said on stderr at exit.
  std::string cap_note();

 private:
  std::mutex mutex_;
  int fd_ = -1;
  std::atomic<bool> open_{false};
  std::string path_;
  int write_errno_ = 0;  // the first write error; nothing is written after it
  uint64_t max_bytes_ = 0, written_ = 0;
  uint64_t lines_left_out_ = 0;  // once the cap is reached, every later line
};

}  // namespace sampler
