// The runtime's part of function values (vm/opcodes.def: newclosure, spawnvalue).
#include "runtime/closures.h"

#include <unordered_map>
#include <vector>

#include "runtime/errors.h"
#include "runtime/method.h"
#include "runtime/runtime_calls.h"
#include "runtime/strings.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "vm/opcodes.h"

using namespace runtime;

namespace runtime {

const Array* function_value(uint32_t index) {
  static std::unordered_map<uint32_t, const Array*> values;  // loading a module is single-threaded
  auto it = values.find(index);
  if (it != values.end() && reinterpret_cast<Method*>(it->second->data[0]) == VM::get().method(uint16_t(index))) return it->second;
  auto* c = reinterpret_cast<Array*>(permanent_room(object_bytes(ArrayKind::Closure, 1)));
  c->kind = ArrayKind::Closure;
  c->reserved = index;
  c->length = 1;
  c->data[0] = reinterpret_cast<int64_t>(VM::get().method(uint16_t(index)));
  values[index] = c;
  return c;
}

}  // namespace runtime

extern "C" int64_t* minivm_rt_newclosure(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  uint16_t f = vm::read_u16(bcp, vm::kOperandA);
  auto n = int64_t(VM::get().module().functions[f]->captures.size());
  {
    ThreadInVM in_vm(t);
    Array* c = allocate_array(t, ArrayKind::Closure, 1 + n);
    c->reserved = f;
    c->data[0] = reinterpret_cast<int64_t>(VM::get().method(f));
    for (int64_t i = 0; i < n; i++) c->data[1 + i] = sp[n - 1 - i];  // the first capture is the deepest
    t->vm_result = reinterpret_cast<int64_t>(c);
  }
  // Pushed once back in Java: vm_result roots it while the thread may stop on its way.
  int64_t* out = sp + n - 1;
  out[0] = t->vm_result;
  t->vm_result = 0;
  return out;
}

extern "C" int64_t* minivm_rt_spawn_value(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  uint16_t n = vm::read_u16(bcp, vm::kOperandB);
  const auto* closure = reinterpret_cast<const Array*>(sp[n]);
  if (closure == nullptr) {
    t->set_state(ThreadState::in_vm);
    throw_null_reference(t, NullUse::call);
  }
  auto* callee = reinterpret_cast<Method*>(closure->data[0]);
  int64_t handle;
  {
    ThreadInVM in_vm(t);
    std::vector<int64_t> args;
    if (callee->param_count == n + 1) args.push_back(sp[n]);  // a lambda's closure
    for (uint16_t i = 0; i < n; i++) args.push_back(sp[n - 1 - i]);
    handle = VM::get().start_thread(callee, args.data())->id;
  }
  // The handle goes where the function value was, which the stack map still names.
  int64_t* out = sp + n;
  out[0] = handle;
  return out;
}
