#include "runtime/natives.h"

#include <time.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/errors.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/method.h"
#include "runtime/runtime_calls.h"
#include "runtime/thread.h"
#include "runtime/value_format.h"
#include "runtime/vm.h"
#include "vm/builtins.h"

namespace runtime {

namespace {
std::atomic<int> g_print_errno{0};
}

int print_write_errno() { return g_print_errno.load(std::memory_order_relaxed); }

int64_t native_nanotime() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void native_sleep_ms(Thread* t, int64_t ms) {
  ThreadInVM native(t, ThreadState::in_native);
  if (ms <= 0) return;
  timespec ts{time_t(ms / 1000), long(ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void native_spin_ns(Thread* t, int64_t ns) {
  ThreadInVM native(t, ThreadState::in_native);
  int64_t end = native_nanotime() + ns;
  while (native_nanotime() < end) {
  }
}

namespace {

std::mutex g_join_mutex;  // every Thread::joining

// The threads of the cycle that t joining `target` would close, t first: following whom
// each thread waits for in join leads from target back to t. Empty when it does not. A
// cycle is never recorded (its last join reports it instead), so every walk ends.
std::vector<Thread*> join_cycle(Thread* t, Thread* target) {
  std::vector<Thread*> cycle{t};
  for (Thread* u = target; u != nullptr; u = u->joining) {
    if (u == t) return cycle;
    cycle.push_back(u);
  }
  return {};
}

// A cycle of joins can never end: every thread in it waits for one that waits too. The
// others are blocked in their join with their anchors set, and stay so.
[[noreturn]] void report_deadlock(Thread* t, const std::vector<Thread*>& cycle) {
  std::string message = "deadlock: every thread in a cycle of joins is waiting for the next: thread " +
                        std::to_string(t->id) + " joins thread " + std::to_string(cycle[1]->id);
  std::vector<ThreadInError> others;
  for (size_t i = 1; i < cycle.size(); i++) {
    Thread* next = i + 1 < cycle.size() ? cycle[i + 1] : t;
    message += ", which joins thread " + std::to_string(next->id);
    others.push_back({cycle[i], "waiting in join for thread " + std::to_string(next->id)});
  }
  throw_runtime_error(t, message, others);
}

}  // namespace

void native_join(Thread* t, int64_t handle) {
  Thread* target = VM::get().thread_by_handle(handle);
  if (target == nullptr) throw_runtime_error(t, "join of unknown thread handle " + std::to_string(handle));
  if (target == t) throw_runtime_error(t, "thread " + std::to_string(handle) + " cannot join itself");
  ThreadInVM blocked(t, ThreadState::blocked);
  std::vector<Thread*> cycle;
  {
    std::lock_guard<std::mutex> lock(g_join_mutex);
    cycle = join_cycle(t, target);
    if (cycle.empty()) t->joining = target;
  }
  if (!cycle.empty()) report_deadlock(t, cycle);
  VM::get().join_thread(target);
  std::lock_guard<std::mutex> lock(g_join_mutex);
  t->joining = nullptr;
}

static std::string range_text(int64_t from, int64_t n) {
  // n >= 0 here: from + n fits in uint64_t when from >= 0, and in int64_t when from < 0.
  std::string end = from >= 0 ? std::to_string(uint64_t(from) + uint64_t(n)) : std::to_string(from + n);
  return "[" + std::to_string(from) + ", " + end + ")";
}

void native_arraycopy(Thread* t, Array* src, int64_t src_pos, Array* dst, int64_t dst_pos, int64_t n) {
  if (src == nullptr || dst == nullptr) throw_null_reference(t, NullUse::arraycopy);
  if (n < 0) throw_runtime_error(t, "arraycopy: negative length " + std::to_string(n));
  if (src_pos < 0 || src_pos > src->length - n)
    throw_runtime_error(t, "arraycopy: source range " + range_text(src_pos, n) + " out of bounds for length " +
                               std::to_string(src->length));
  if (dst_pos < 0 || dst_pos > dst->length - n)
    throw_runtime_error(t, "arraycopy: destination range " + range_text(dst_pos, n) +
                               " out of bounds for length " + std::to_string(dst->length));
  std::memmove(dst->data + dst_pos, src->data + src_pos, size_t(n) * 8);
  if (dst->kind == ArrayKind::Ref) mark_card(dst);  // the write barrier (runtime/heap.h)
}

uint32_t crc32_of_low_bytes(const int64_t* data, int64_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> tab{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      tab[i] = c;
    }
    return tab;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (int64_t i = 0; i < n; i++) crc = table[(crc ^ uint8_t(data[i])) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

int64_t native_crc32(Thread* t, Array* a, int64_t from, int64_t to) {
  if (a == nullptr) throw_null_reference(t, NullUse::crc32);
  if (from < 0 || to > a->length || from > to)
    throw_runtime_error(t, "crc32: range [" + std::to_string(from) + ", " + std::to_string(to) +
                               ") out of bounds for length " + std::to_string(a->length));
  return int64_t(crc32_of_low_bytes(a->data + from, to - from));
}

}  // namespace runtime

using namespace runtime;

extern "C" int64_t* minivm_rt_newarray(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  {
    ThreadInVM in_vm(t);
    // newarray's kind operand (0 int, 1 float, 2 bool: stored as int), or anewarray's references.
    ArrayKind kind = vm::Op(bcp[0]) == vm::Op::anewarray ? ArrayKind::Ref : bcp[1] == 1 ? ArrayKind::Float : ArrayKind::Int;
    t->vm_result = reinterpret_cast<int64_t>(allocate_array(t, kind, sp[0]));
  }
  // Back in Java, where no collection runs until the next poll. On the way back the
  // thread may have stopped for one: the frame's stack map still says sp[0] is the
  // length, so the new array was rooted by vm_result meanwhile.
  sp[0] = t->vm_result;
  t->vm_result = 0;
  return sp;
}

extern "C" int64_t* minivm_rt_native(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  auto id = vm::NativeId(vm::read_u16(bcp, vm::kOperandA));
  auto arr = [](int64_t slot) { return reinterpret_cast<Array*>(slot); };
  switch (id) {
    case vm::NativeId::nanotime:
      sp[-1] = native_nanotime();
      return sp - 1;
    case vm::NativeId::sleep_ms:
      native_sleep_ms(t, sp[0]);
      return sp + 1;
    case vm::NativeId::native_spin_ns:
      native_spin_ns(t, sp[0]);
      return sp + 1;
    case vm::NativeId::join:
      native_join(t, sp[0]);
      return sp + 1;
    case vm::NativeId::arraycopy: {
      ThreadInVM native(t, ThreadState::in_native);
      native_arraycopy(t, arr(sp[4]), sp[3], arr(sp[2]), sp[1], sp[0]);
      return sp + 5;
    }
    case vm::NativeId::crc32: {
      int64_t crc;
      {
        ThreadInVM native(t, ThreadState::in_native);
        crc = native_crc32(t, arr(sp[2]), sp[1], sp[0]);
      }
      // Stored back in Java: a collection may read this frame's slots while the thread
      // is in native, and sp[2] is the array until then.
      sp[2] = crc;
      return sp + 2;
    }
    case vm::NativeId::count:
      break;
  }
  MVM_ASSERT(false, "the verifier admits only natives of vm/builtins");
  throw_runtime_error(t, "internal error: unknown native " + std::to_string(int(id)));
}

extern "C" int64_t* minivm_rt_print(Thread* t, const uint8_t* bcp, int64_t* sp, Method* m) {
  ThreadInVM native(t, ThreadState::in_native);
  const vm::Function& fn = *m->function;
  const vm::PrintDescriptor& d = fn.prints[vm::read_u16(bcp, vm::kOperandA)];
  uint16_t n = d.value_count();
  std::string line;
  int64_t* arg = sp + n - 1;  // the first value argument
  bool first = true;
  for (const vm::PrintItem& item : d.items) {
    if (!first) line += ' ';
    first = false;
    if (item.type == vm::Type::Void)
      line += fn.strings[item.string_index];
    else
      append_value(line, item.type, *arg--);
  }
  line += '\n';
  errno = 0;
  // One locked write: lines never interleave.
  if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() && errno != 0) {
    int none = 0;
    g_print_errno.compare_exchange_strong(none, errno, std::memory_order_relaxed);
  }
  return sp + n;
}

extern "C" int64_t* minivm_rt_spawn(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  Method* callee = VM::get().method(vm::read_u16(bcp, vm::kOperandA));
  uint16_t n = callee->param_count;
  int64_t handle;
  {
    ThreadInVM in_vm(t);
    std::vector<int64_t> args(n);
    for (uint16_t i = 0; i < n; i++) args[i] = sp[n - 1 - i];
    handle = VM::get().start_thread(callee, args.data())->id;
  }
  // Stored back in Java: the handle goes where the first argument was, which the stack
  // map still names (it may be an array) while the thread can stop on its way back.
  int64_t* out = sp + n - 1;
  out[0] = handle;
  return out;
}

extern "C" void minivm_rt_throw_div_zero(Thread* t) {
  t->set_state(ThreadState::in_vm);
  throw_runtime_error(t, "division by zero");
}

extern "C" void minivm_rt_throw_index(Thread* t, int64_t index, int64_t length) {
  t->set_state(ThreadState::in_vm);
  throw_runtime_error(t, "index " + std::to_string(index) + " out of bounds for length " + std::to_string(length));
}

extern "C" void minivm_rt_throw_stack_overflow(Thread* t) {
  t->set_state(ThreadState::in_vm);
  throw_runtime_error(t, "stack overflow");
}

extern "C" void minivm_rt_throw_bad_opcode(Thread* t, int opcode) {
  t->set_state(ThreadState::in_vm);
  throw_runtime_error(t, "internal error: bad opcode " + std::to_string(opcode));
}
