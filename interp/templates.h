// Declarations of the per-bytecode template generators (templates.cpp).
#pragma once
#include "interp/interp_masm.h"
#include "vm/opcodes.h"

namespace interp {

#define DEF(name, ...) void gen_##name(InterpMasm& g);
#include "vm/opcodes.def"
#undef DEF

void gen_method_entry(InterpMasm& g);
void gen_array_failures(InterpMasm& g);
void gen_bad_opcode(InterpMasm& g);

}  // namespace interp
