// Global safepoints: every Mini thread stopped where its stack is walkable and consistent,
// while one operation (a collection, freeing code) runs.
//
// The protocol, as HotSpot's: the requester marks a safepoint as pending and arms every
// thread's poll. A thread in Java stops at its next poll (the poll handler blocks it); a
// thread in native code or blocked (join, sleep) is already safe and stays so, because
// its way back to Java (transition_to_java) waits while a safepoint is pending; a thread
// in the VM is waited for until it leaves (to Java, where it blocks, or to a safe state).
// A stopped thread is `blocked` with its last-Java-frame anchor set. The pending flag and
// each thread's state are sequentially consistent on both sides, so a thread cannot slip
// back into Java after the requester saw it safe.
#pragma once
#include <cstdint>
#include <functional>

namespace runtime {

class Thread;

// How long the threads took to stop, and who was last.
struct SafepointStats {
  uint64_t id = 0;                    // the safepoints' count when it ended: 1, 2, ...
  uint64_t start_ns = 0;              // the request (monotonic_ns, runtime/clock.h)
  uint64_t end_ns = 0;                // the threads resumed
  uint64_t time_to_safepoint_ns = 0;  // from the request until every thread was safe
  uint64_t operation_ns = 0;          // how long `op` ran with the threads stopped
  int threads = 0;                    // threads that had to be safe (the requester and ended ones excluded)
  int slowest_thread = -1;            // the id of the last one to become safe (-1: all were safe when armed)
  // Of the time to safepoint, the last one's time on a CPU from its poll's arming until
  // it was seen safe; the rest it waited for a core (0 when its clock could not be read).
  uint64_t slowest_cpu_ns = 0;
  uintptr_t slowest_pc = 0;           // where it stopped: its anchor pc (a poll site, a call)
};

// Runs `op` at a global safepoint and resumes every thread. Called from outside Java: a
// thread in the VM (itself excluded from the wait) or a thread that is not a Mini thread.
// One safepoint at a time; a second requester waits for the first to finish, and a Mini
// thread waits as `blocked`, so the first one's safepoint does not wait for it. The
// time to safepoint counts from the call, that wait included.
SafepointStats run_at_safepoint(const std::function<void()>& op);

// The running safepoint's statistics (time to safepoint, the last thread to stop), for
// its operation to read; valid only inside `op`.
const SafepointStats& current_safepoint();

// Whether a safepoint is pending or running (read by the poll handler and transitions).
bool safepoint_pending();
// Blocks the calling thread (state `blocked`, anchor set) while a safepoint is pending,
// then restores `resume_state`. Called by the poll handler and by transition_to_java.
void block_at_safepoint(Thread* t, int resume_state);

// How many global safepoints have completed (tests, reports).
uint64_t safepoint_count();

}  // namespace runtime
