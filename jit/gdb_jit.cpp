#include "jit/gdb_jit.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "jit/gdb_jit_protocol.h"

extern "C" {

// gdb sets its breakpoint here. noinline and an asm statement keep the call and the
// function itself from being optimized away.
__attribute__((noinline, used)) void __jit_debug_register_code() { asm volatile("" ::: "memory"); }

__attribute__((used)) jit_descriptor __jit_debug_descriptor = {1, JIT_NOACTION, nullptr, nullptr};

}  // extern "C"

namespace jit {

namespace {

std::atomic<bool> g_enabled{false};

struct Entry {
  jit_code_entry link{};
  std::vector<uint8_t> object;
};

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, std::unique_ptr<Entry>> by_begin;
  size_t bytes = 0;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: compiler threads may register during exit
  return *r;
}

// With the registry's mutex held: tells the debugger about `entry`.
void notify(JitAction action, Entry* entry) {
  __jit_debug_descriptor.relevant_entry = &entry->link;
  __jit_debug_descriptor.action_flag = action;
  __jit_debug_register_code();
  __jit_debug_descriptor.action_flag = JIT_NOACTION;
  __jit_debug_descriptor.relevant_entry = nullptr;
}

// With the mutex held: unlinks and forgets the entry at `it`.
void remove(Registry& r, std::map<uintptr_t, std::unique_ptr<Entry>>::iterator it) {
  Entry* e = it->second.get();
  jit_code_entry& link = e->link;
  if (link.prev_entry != nullptr) link.prev_entry->next_entry = link.next_entry;
  else __jit_debug_descriptor.first_entry = link.next_entry;
  if (link.next_entry != nullptr) link.next_entry->prev_entry = link.prev_entry;
  notify(JIT_UNREGISTER_FN, e);
  r.bytes -= e->object.size();
  r.by_begin.erase(it);
}

}  // namespace

void gdb_jit_enable() { g_enabled.store(true); }
bool gdb_jit_enabled() { return g_enabled.load(std::memory_order_relaxed); }

void gdb_jit_register(uintptr_t begin, std::vector<uint8_t> object) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto old = r.by_begin.find(begin); old != r.by_begin.end()) remove(r, old);
  auto entry = std::make_unique<Entry>();
  Entry* e = entry.get();
  e->object = std::move(object);
  e->link.symfile_addr = reinterpret_cast<const char*>(e->object.data());
  e->link.symfile_size = e->object.size();
  e->link.next_entry = __jit_debug_descriptor.first_entry;
  if (e->link.next_entry != nullptr) e->link.next_entry->prev_entry = &e->link;
  __jit_debug_descriptor.first_entry = &e->link;
  r.bytes += e->object.size();
  r.by_begin.emplace(begin, std::move(entry));
  notify(JIT_REGISTER_FN, e);
}

void gdb_jit_unregister(uintptr_t begin) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.by_begin.find(begin); it != r.by_begin.end()) remove(r, it);
}

GdbJitStats gdb_jit_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return {r.by_begin.size(), r.bytes};
}

}  // namespace jit
