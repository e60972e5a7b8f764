// The bytecode verifier: checks, before anything runs, that every instruction is well
// formed, every branch lands on an instruction boundary, the stack depth and the type of
// every slot agree on all paths, locals/globals/constants/functions are in range, every
// path ends in a return, and max_stack is right.
#pragma once
#include <string>

#include "vm/bytecode.h"

namespace vm {

struct VerifyError {
  std::string function;
  uint32_t bci = 0;
  std::string message;
};

// Returns true if `fn` (in module `m`) is valid; else fills `error`.
bool verify_function(const Module& m, const Function& fn, VerifyError& error);
bool verify_module(const Module& m, VerifyError& error);

}  // namespace vm
