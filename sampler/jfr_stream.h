// The .jfr profile written while the program runs, as the .jsonl one is (event_stream.h):
// each recording thread encodes its events into its own EventBuffer and appends them here
// a block at a time, and the dump thread appends what every buffer holds every
// kStreamFlushNs. A JFR chunk names its size and where its constant pools are in its
// header, so the events of the chunk under way go to a file of their own beside the output
// (created and at once unlinked: it leaves nothing behind); each dump and the end of the run
// end the chunk, appending it whole to the .jfr: header, events, the constant pools of every
// stack, method and thread so far, and the metadata. So the .jfr is a sequence of
// finished chunks that `jfr` reads at any time (but while one is being appended), and
// memory holds the distinct stacks, not the events.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sampler/profile/jfr_chunk.h"

namespace sampler {

class JfrStream {
 public:
  // Creates (or truncates) `path` ("-": standard output, the chunk under way's events then
  // in $TMPDIR); false with "--profile-out PATH: why" in `error`.
  // `naming` names the frames' classes (jfr_chunk.h); `primary`'s samples are JDK's events;
  // `start_ticks` (CLOCK_MONOTONIC ns) is when the first chunk starts.
  bool open(const std::string& path, const Profile& naming, SamplerId primary, uint64_t start_ticks,
            std::string& error);
  bool is_open() const { return open_.load(std::memory_order_acquire); }
  // The key of a stack in every chunk's pools, interned under the stream's lock: each
  // buffer remembers the keys of its stacks, so this runs once per buffer and stack.
  uint64_t stack_id(const StackTrace& trace, bool truncated);
  // Encodes one event into `out` (no lock: any thread, its own buffer).
  void encode(std::string& out, const Event& e, uint64_t stack_key) { writer_->append_event(out, e, stack_key); }
  // Encodes one collection with its safepoint's events into `out` (no lock).
  void encode_gc(std::string& out, const GcPause& gc) { writer_->append_gc(out, gc); }
  // Writes whole events to the chunk under way.
  void append(std::string_view events);
  // Ends the chunk under way (at a dump): appends it to the .jfr; later events start another.
  void end_chunk() { end_chunk_locked(/*final_chunk=*/false); }
  // Ends the last chunk and closes; false with the message in `error` if a write failed.
  bool close(std::string& error);

 private:
  void end_chunk_locked(bool final_chunk);
  void write_all(int fd, std::string_view data);

  std::mutex mutex_;
  std::unique_ptr<JfrChunkWriter> writer_;
  int fd_ = -1;         // the .jfr: finished chunks only
  int events_fd_ = -1;  // the chunk under way's events (unlinked)
  uint64_t events_size_ = 0;
  uint64_t chunk_start_ticks_ = 0;
  std::atomic<bool> open_{false};
  std::string path_;
  int write_errno_ = 0;  // the first write error; nothing is written after it
};

}  // namespace sampler
