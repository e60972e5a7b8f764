// Entry points that generated code calls (System V ABI) for work it does not do inline.
//
// The caller has stored its bcp in its frame and set the thread's anchor to its own
// frame, so each of these may walk the stack or report an error with a Mini trace. Stack helpers take the instruction's bcp and the
// expression stack pointer (sp[0] is the top value, the last argument), and return the
// new stack pointer after popping the instruction's operands and pushing its result.
// A helper stores its result only after its last transition back to Java: until then the
// caller's stack map (and the interpreter's stack types) still name the operands there,
// and a collection may stop the thread on its way back.
#pragma once
#include <cstdint>

namespace runtime {
class Thread;
struct Method;
}  // namespace runtime

extern "C" {
int64_t* minivm_rt_newarray(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_native(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_print(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_spawn(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
// The string operations (runtime/strings.cpp): sconcat, scmpeq/scmpne, substring, tostring.
int64_t* minivm_rt_sconcat(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_scompare(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_substring(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_tostring(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
[[noreturn]] void minivm_rt_throw_div_zero(runtime::Thread* t);
[[noreturn]] void minivm_rt_throw_index(runtime::Thread* t, int64_t index, int64_t length);
// `use` is a runtime::NullUse (runtime/errors.h).
[[noreturn]] void minivm_rt_throw_null(runtime::Thread* t, int use);
// The object operations (runtime/objects.cpp): newobject's slow path, and the error of a
// getfield, putfield or invokevirtual (at `bcp`) on null, which names the member.
int64_t* minivm_rt_newobject(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
[[noreturn]] void minivm_rt_throw_null_member(runtime::Thread* t, const uint8_t* bcp);
// A checkcast (at `bcp`) of `object`, which is not of the class.
[[noreturn]] void minivm_rt_throw_cast(runtime::Thread* t, const uint8_t* bcp, int64_t object);
[[noreturn]] void minivm_rt_throw_stack_overflow(runtime::Thread* t);
// The function value operations (runtime/closures.cpp): a lambda's new closure, and a
// thread started on a function value.
int64_t* minivm_rt_newclosure(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
int64_t* minivm_rt_spawn_value(runtime::Thread* t, const uint8_t* bcp, int64_t* sp, runtime::Method* m);
}

extern "C" [[noreturn]] void minivm_rt_throw_bad_opcode(runtime::Thread* t, int opcode);
