// A JFR chunk (the format JDK 17's and JDK 25's `jfr` tool, JMC and IntelliJ read) of a
// profile's events: minivm's events as JDK events where JFR has them, as its own event
// types where it does not, with their stack traces, methods, classes and threads in
// constant pools and every type declared in the chunk's metadata. What maps to what:
// sampler/profile/README.md ("`.jfr`"). A chunk is written as
//   header (68 bytes) | events | checkpoint event (the constant pools) | metadata event
// so the events can be written first, as they come (sampler/jfr_stream.h), and the
// header, which names the size and where the other two start, last.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/profile/profile.h"

namespace sampler {

// JFR's fixed chunk header size; events start right after it.
inline constexpr uint64_t kJfrHeaderSize = 68;

class JfrChunkWriter {
 public:
  // `naming`: the profile whose program and files name the classes of plain functions.
  // `primary`: the sampler whose samples become jdk.ExecutionSample and
  // jdk.NativeMethodSample; every other sampler's are minivm.ExecutionSample and
  // minivm.NativeMethodSample (JFR tools show one stream of method samples).
  JfrChunkWriter(const Profile& naming, SamplerId primary);

  // The key of `trace` in the stack-trace pool (from 1), interning it and its methods.
  // Keys stay valid for every chunk this writer finishes: each chunk's pools hold every
  // trace interned so far.
  uint64_t stack_id(const StackTrace& trace, bool truncated);
  // Appends `e` as one event whose stack is `stack_key` (stack_id's; ignored for events
  // without a stack). Safe to call from several threads at once, and beside stack_id.
  void append_event(std::string& out, const Event& e, uint64_t stack_key);
  // Appends one collection as jdk.GarbageCollection, between the jdk.SafepointBegin and
  // jdk.SafepointEnd of its safepoint (none for one that shares the previous one's). Safe
  // beside append_event.
  void append_gc(std::string& out, const GcPause& gc);

  // Ticks are CLOCK_MONOTONIC nanoseconds, the clock of Event::time_ns.
  struct Times {
    uint64_t start_ticks = 0, end_ticks = 0;
    uint64_t start_epoch_ns = 0;  // the wall-clock time at start_ticks
  };
  // What goes around `events_size` bytes of events to make a whole chunk: the header, and
  // (after the events) the checkpoint with every constant pool and the metadata.
  void finish(uint64_t events_size, const Times& times, bool final_chunk, std::string& header,
              std::string& tail) const;

 private:
  void see_thread(int thread);  // the thread pool holds every thread an event names
  uint64_t symbol(const std::string& s);
  uint64_t method(const FrameRef& f);
  std::string checkpoint(uint64_t ticks) const;

  SamplerId primary_;
  std::string program_;
  std::vector<std::string> files_;
  std::unordered_map<std::string, uint16_t> function_files_;
  std::atomic<int> max_thread_{-1};
  // The pools, each a vector indexed by key - 1 (keys start at 1) and a lookup.
  uint64_t descriptor_ = 0;  // the descriptor every method shares, "()V": Mini's profiles carry no signatures
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, uint64_t> symbol_ids_;
  std::vector<uint64_t> classes_;  // class key - 1 -> its name's symbol
  std::unordered_map<uint64_t, uint64_t> class_ids_;
  struct Method {
    uint64_t klass, name;
  };
  std::vector<Method> methods_;
  std::unordered_map<std::string, uint64_t> method_ids_;  // "class\nname"
  struct Frame {
    uint64_t method;
    uint32_t line;
    int32_t bci;
    FrameKind kind;
  };
  struct Trace {
    bool truncated;
    std::vector<Frame> frames;
  };
  std::vector<Trace> traces_;        // key - 1 = the trace's id in repository_
  StackTraceRepository repository_;  // interns the traces this writer saw
};

// A chunk's times from `start_ticks` to now, with the wall-clock time of its start.
JfrChunkWriter::Times jfr_times_since(uint64_t start_ticks);  // report_jfr.cpp

// The class and method names a frame gets in a .jfr: `Class.method` is class `Class`,
// method `method`; a plain function (or a lambda `f$fn@3`) is a method of the class
// named after its file, without directory or extension (`prog` for prog.mini), as
// Kotlin names a file's top-level functions; a frame outside Mini code is a method of
// `[native]`, `[stub]` or `[cpp]`, by its kind.
std::pair<std::string, std::string> jfr_class_and_method(const FrameRef& f, const std::string& file);
// The JFR frame type of a kind: Interpreted, JIT compiled, Inlined, Native (a builtin or
// C/C++ code), Stub (an intrinsic stub; JFR itself never shows one).
const char* jfr_frame_type(FrameKind kind);

}  // namespace sampler
