// A readable listing of a Module, in the spirit of `javap -c`: for each function its
// signature, locals, constants, then one instruction per line with bci, operands
// resolved to names, branch targets as bcis, and the source line where it changes.
#pragma once
#include <ostream>

#include "vm/bytecode.h"

namespace vm {

void disassemble(const Module& m, std::ostream& out);
void disassemble_function(const Module& m, const Function& fn, std::ostream& out);

}  // namespace vm
