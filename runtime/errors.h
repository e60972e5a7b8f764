// Mini runtime errors and the orderly end of the process.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace runtime {

class Thread;

// What reads through a null reference, for the error "null reference: TEXT"
// (LANGUAGE.md, "v2 runtime errors"). Generated code passes one to minivm_rt_throw_null.
#define MINIVM_NULL_USES(X)                 \
  X(array_index, "index of a null array")   \
  X(string_index, "index of a null string") \
  X(length, "len of null")                  \
  X(substring, "substring of null")         \
  X(arraycopy, "arraycopy of a null array") \
  X(crc32, "crc32 of a null array")        \
  X(call, "call of a null function")
enum class NullUse : uint8_t {
#define X(name, text) name,
  MINIVM_NULL_USES(X)
#undef X
};
const char* null_use_text(NullUse use);
[[noreturn]] void throw_null_reference(Thread* t, NullUse use);

// Prints `error: MESSAGE` and the Mini stack trace of `t` (walked from its anchor, which
// the caller has set) on stderr, after flushing the program's output, and ends the whole
// program with exit status 1. An error in any thread ends the program this way; if two
// threads fail at once, the first one reports.
[[noreturn]] void throw_runtime_error(Thread* t, const std::string& message);

// Another thread an error is about (a deadlock's), and what it is doing ("waiting in join
// for thread 2"); stopped outside Mini code with its anchor set, so its stack can be walked.
struct ThreadInError {
  Thread* thread;
  std::string doing;
};
// As above, with each of `others`' Mini stack traces after t's, under a line naming it:
// "thread 1, waiting in join for thread 2:".
[[noreturn]] void throw_runtime_error(Thread* t, const std::string& message, const std::vector<ThreadInError>& others);

// Hooks run once, in registration order, before the process exits (normally or on a
// runtime error), e.g. to write a profile.
using ExitHook = void (*)();
void add_exit_hook(ExitHook hook);

// The other Mini threads, still running while the process ends, move to SCHED_IDLE: the
// exit's work (the profiler's merge and writes, on this thread and the profiler's own)
// would otherwise get a thousandth of a core beside a thousand busy threads and take
// many seconds. They run on, at that priority, until the process ends. exit_vm and
// exit_vm_by_signal call it; so does the end of main before it writes the profile.
void idle_other_mini_threads();

// Flushes output, runs the exit hooks and ends the process with `code`.
[[noreturn]] void exit_vm(int code);
// The same, but the process ends by `sig` with its default action (status 128+sig in a
// shell), as it would have if nobody had caught it: for a signal caught only so that the
// exit hooks (a profile) run first. Call it in ordinary context, never in a handler. If
// another thread is already ending the process it returns at once and leaves it to that
// one (whose exit hooks may be waiting for the caller).
void exit_vm_by_signal(int sig);

// The Mini stack trace of `t` from its anchor, one "  at f (file:line)" line per frame.
std::string format_stack_trace(Thread* t, size_t max_frames = 1024);

}  // namespace runtime
