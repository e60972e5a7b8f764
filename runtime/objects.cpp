// The runtime's part of the object operations (vm/opcodes.def: newobject, getfield,
// putfield, invokevirtual, checkcast): the allocation slow path and the errors.
#include <string>

#include "runtime/classes.h"
#include "runtime/errors.h"
#include "runtime/heap.h"
#include "runtime/method.h"
#include "runtime/runtime_calls.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "vm/opcodes.h"

using namespace runtime;

extern "C" int64_t* minivm_rt_newobject(Thread* t, const uint8_t* bcp, int64_t* sp, Method*) {
  uint16_t c = vm::read_u16(bcp, vm::kOperandA);
  {
    ThreadInVM in_vm(t);
    t->vm_result = reinterpret_cast<int64_t>(allocate_object(t, c, g_class_shapes[c].fields));
  }
  // Pushed once back in Java: vm_result roots it while the thread may stop on its way.
  sp[-1] = t->vm_result;
  t->vm_result = 0;
  return sp - 1;
}

extern "C" void minivm_rt_throw_null_member(Thread* t, const uint8_t* bcp) {
  t->set_state(ThreadState::in_vm);
  const vm::Module& m = VM::get().module();
  auto op = vm::Op(bcp[0]);
  const vm::ClassInfo& c = m.classes[vm::read_u16(bcp, vm::kOperandA)];
  uint16_t k = vm::read_u16(bcp, vm::kOperandB);
  std::string what;
  if (op == vm::Op::invokevirtual || op == vm::Op::invokeinterface) {
    // The method's function is named after the class that defines it: "Shape.area".
    const std::string& method = m.functions[c.methods[k]]->name;
    what = "method " + method.substr(method.find('.') + 1);
  } else {
    what = "field " + c.fields[k].name;
  }
  throw_runtime_error(t, "null reference: " + what + " of " + c.name);
}

extern "C" void minivm_rt_throw_cast(Thread* t, const uint8_t* bcp, int64_t object) {
  t->set_state(ThreadState::in_vm);
  const vm::Module& m = VM::get().module();
  const auto* o = reinterpret_cast<const Array*>(object);
  throw_runtime_error(t, "cannot cast " + m.classes[o->reserved].name + " to " +
                             m.classes[vm::read_u16(bcp, vm::kOperandA)].name);
}
