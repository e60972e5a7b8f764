// The bytecode verifier: checks, before anything runs, that every instruction is well
// formed, every branch lands on an instruction boundary, the stack depth and the type of
// every slot agree on all paths, locals/globals/constants/functions are in range, every
// path ends in a return, and max_stack is right (no path goes deeper).
//
// Stack effects follow opcodes.def; its `$` entries are decided per opcode: ldc by the
// constant's type, load/store by the local's, gload/gstore by the global's, newarray and
// tostring by their kind operand, call/spawn by the callee's params and result, native
// by kNatives (arraycopy: two arrays of the same type), print by the descriptor, vret by
// the function's result. `null` (type Null) is accepted wherever a reference is: every
// operation that reads through a reference checks it at run time. Locals are typed
// statically by Function::local_types, so the expression stack's types are tracked, and
// of the locals only which ones every path has stored: the front end initialises every
// reference local before reading it, so code that reads one unstored is rejected. The
// line table (first entry at bci 0, sorted, on instruction starts) and the loop table
// (headers and latches on instruction starts, each latch a branch to its header,
// forloop for counted loops) are checked too.
#pragma once
#include <string>
#include <vector>

#include "vm/bytecode.h"
#include "vm/liveness.h"

namespace vm {

struct VerifyError {
  std::string function;
  uint32_t bci = 0;
  std::string message;
};

// Returns true if `fn` (in module `m`) is valid; else fills `error`.
bool verify_function(const Module& m, const Function& fn, VerifyError& error);
bool verify_module(const Module& m, VerifyError& error);

// What the verifier learned about a valid function.
struct VerifyInfo {
  uint16_t max_depth = 0;   // the deepest stack any path reaches (<= fn.max_stack)
  uint32_t unreachable = 0;  // instructions no path from bci 0 reaches (well formed, never run)
  // Stack depth before the instruction at each bci; -1 where no reachable instruction
  // starts. The JIT maps expression-stack depths to fixed locations with it.
  std::vector<int32_t> depth_at;
  // The types on the stack before each reachable instruction (bottom first); empty
  // where depth_at is -1. The JIT keeps floats in xmm registers with it.
  std::vector<std::vector<Type>> stack_at;
  // Which locals are live before each instruction (the collector's stack maps).
  LocalLiveness live_locals;
};
// As above, and fills `info` when the function is valid.
bool verify_function(const Module& m, const Function& fn, VerifyError& error, VerifyInfo& info);

}  // namespace vm
