#include "runtime/poll.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "runtime/invariant.h"
#include "runtime/safepoint.h"
#include "runtime/thread.h"

namespace runtime {

namespace {
PollPages make_pages() {
  long page = sysconf(_SC_PAGESIZE);
  void* mem = mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("minivm: mmap poll pages");
    std::abort();
  }
  void* bad = static_cast<char*>(mem) + page;
  mprotect(bad, page, PROT_NONE);
  return PollPages{mem, bad};
}

std::mutex g_clients_mutex;
// Copy-on-write list so the poll path reads without the lock.
std::atomic<std::vector<PollClient*>*> g_clients{new std::vector<PollClient*>()};
// Every list replaced so far, never freed: a poll may still be reading one, and
// clients are registered a handful of times per process. Kept here, they stay
// reachable (LeakSanitizer does not count them) and are bounded by the registrations.
std::vector<std::vector<PollClient*>*>* g_retired_clients = new std::vector<std::vector<PollClient*>*>();

// Publishes `next` as the client list; the caller holds g_clients_mutex.
void publish_clients(std::vector<PollClient*>* next) {
  g_retired_clients->push_back(g_clients.exchange(next, std::memory_order_acq_rel));
}
std::atomic<uint64_t> g_poll_traps{0};
}  // namespace

const PollPages& poll_pages() {
  static const PollPages pages = make_pages();
  return pages;
}

bool PollPages::is_bad_address(uintptr_t a) const {
  uintptr_t b = reinterpret_cast<uintptr_t>(bad);
  return a >= b && a < b + static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
}

void arm_poll(Thread* t) {
  t->core.poll_limit.store(kPollLimitArmed, std::memory_order_release);
  t->core.poll_word.store(poll_pages().bad, std::memory_order_release);
}
void disarm_poll(Thread* t) {
  t->core.poll_word.store(poll_pages().good, std::memory_order_release);
  t->core.poll_limit.store(kPollLimitDisarmed, std::memory_order_release);
}
bool poll_armed(const Thread* t) { return t->core.poll_word.load(std::memory_order_acquire) == poll_pages().bad; }

void register_poll_client(PollClient* c) {
  std::lock_guard<std::mutex> lock(g_clients_mutex);
  auto* next = new std::vector<PollClient*>(*g_clients.load());
  next->push_back(c);
  publish_clients(next);
}

void unregister_poll_client(PollClient* c) {
  std::lock_guard<std::mutex> lock(g_clients_mutex);
  auto* next = new std::vector<PollClient*>(*g_clients.load());
  next->erase(std::remove(next->begin(), next->end(), c), next->end());
  publish_clients(next);
}

uint64_t poll_trap_count() { return g_poll_traps.load(std::memory_order_relaxed); }

extern "C" void minivm_handle_poll(Thread* t, uintptr_t* blob_fp) {
  // The trap (or the branch poll's stub) marked the thread in_vm; the blob marks it
  // in_java on its way out.
  MVM_ASSERT(t == Thread::current() && t->get_state() == ThreadState::in_vm,
             "a poll is served on the polling thread, which the trap or the stub marked in_vm");
  // Strips compare the countdown unsigned; every charge stops at 0 before the next poll.
  MVM_ASSERT(t->core.strip_countdown >= 0, "the strip-mining countdown is not negative at a poll");
  g_poll_traps.fetch_add(1, std::memory_order_relaxed);
  // The polling frame is the last Mini frame: its fp and the poll pc are what the blob
  // saved; its sp is just above the fake return address.
  t->core.anchor.fp = blob_fp[0];
  t->core.anchor.pc = blob_fp[1];
  t->core.anchor.sp.store(reinterpret_cast<uintptr_t>(blob_fp + 2), std::memory_order_release);
  // Disarm before serving, so a request that arrives while we serve re-arms and is
  // served at the next poll rather than lost.
  disarm_poll(t);
  for (PollClient* c : *g_clients.load(std::memory_order_acquire)) c->on_poll(t);
  // Last, a global safepoint: the thread waits here, its stack walkable from the anchor.
  if (safepoint_pending()) block_at_safepoint(t, int(ThreadState::in_vm));
  t->core.anchor.sp.store(0, std::memory_order_release);
}

}  // namespace runtime
