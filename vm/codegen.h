// The Mini bytecode compiler: a checked AST (vm/typecheck.h) -> a vm::Module.
//
// Shapes the interpreter and the JIT rely on (bci = offset in Function::code):
//  for i in a..b { body }
//      <a> store i; <b> store $limitN; load i; load $limitN; if_icmpge EXIT
//      BODY: body
//      CONT: forloop i, $limitN -> BODY          loop {BODY, forloop bci, counted}
//      EXIT:
//    `continue` jumps to CONT, `break` to EXIT. The bounds are evaluated once.
//  while (c) { body }       (rotated)
//      jump CHECK
//      BODY: body
//      CHECK: <c, branching to BODY when true>   loop {BODY, last backward branch, uncounted}
//      EXIT:
//    `continue` jumps to CHECK. `while (true)` has `CHECK: jump BODY`. A condition
//    with `||` can have several backward branches to BODY; the loop's latch is the last.
//  Conditions in branch context: int compares fuse into if_icmpXX (negated when
//    branching on false); float and bool compares push a bool and use iftrue/iffalse
//    (a float compare is never negated, because of NaN); && || ! become jumps. In
//    value context && and || produce 0/1 through branches and `ldc` of Bool constants.
//  `x += k` / `x -= k` (x an int local, k an int literal fitting int32) is `iinc`.
//  `a[i] op= e` is: <a> <i> dup2 xaload <e> op xastore.
//
// No dead code is emitted: after return/break/continue (and after an if/else whose
// branches both leave) nothing is generated until a jump target is reached, so every
// instruction is reachable and max_stack is the exact maximum depth.
#pragma once
#include <memory>
#include <string_view>

#include "vm/ast.h"
#include "vm/bytecode.h"
#include "vm/slowdown.h"

namespace vm {

// Throws FrontendError when a limit of the bytecode format is exceeded (e.g. more than
// 65536 constants in one function). `files` are the program's (Module::files). Each of
// `slowdowns` is placed in its function's code (vm/slowdown.h) and counts where.
std::unique_ptr<Module> generate_module(const ast::Program& program, const std::vector<std::string>& files,
                                        std::vector<SlowdownSite>& slowdowns);

}  // namespace vm
