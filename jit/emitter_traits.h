// What each emitter of jit/emit_ops.cpp promises about the code it emits, declared next
// to the emitter (`EMIT(name, traits)`) and read by the passes that rely on it: operand
// fusion (which operands an instruction takes from where they are) and loop products
// (which instructions keep the float locals' registers). An opcode whose emitter
// declares none fails the build, as one with no emitter does; a build that checks its
// invariants (runtime/invariant.h) checks the promises as each emitter runs.
#pragma once
#include <cstdint>

#include "vm/opcodes.h"
#include "vm/types.h"

namespace jit::baseline {

enum EmitterTrait : uint8_t {
  PLAIN = 0,
  // Only expression, local and scratch registers and the frame, and no call: a float
  // local's register keeps its value across it (a poll's slow path saves every register).
  REGS = 1 << 0,
  // Takes its last operand from where it is (a local, a float constant, an int immediate)
  // when that operand is int-class (FUSE_I) or a float (FUSE_F), instead of from its
  // expression register: the instruction before it is then not emitted.
  FUSE_I = 1 << 1,
  FUSE_F = 1 << 2,
  // With its last operand fused, takes the one before it from where it is too (a local).
  FUSE_LEFT = 1 << 3,
  // May emit a call that clobbers the caller-saved registers: the runtime, an intrinsic
  // stub, a Mini method, or a throw.
  CALLS = 1 << 4,
};

// The traits the emitter of `op` declares.
uint8_t emitter_traits(vm::Op op);

// Whether `op` can take its last operand, of type `t`, from anywhere (register, memory,
// immediate for integers) instead of its expression register (FUSE_I, FUSE_F).
inline bool takes_operand(vm::Op op, vm::Type t) {
  return emitter_traits(op) & (t == vm::Type::Float ? FUSE_F : FUSE_I);
}

}  // namespace jit::baseline
