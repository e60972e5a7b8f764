// The Mini type checker: enforces every static rule of LANGUAGE.md and annotates the
// AST for the code generator (see the "checker" fields in vm/ast.h):
//  - every Expr gets its type; Names resolve to a local slot or a global index; Calls
//    resolve to a user function index or a builtin (Callee, NativeId);
//  - every local gets a slot of its own, never reused: params first (0..n-1), then
//    each `var` and `for` variable in source order, each `for` followed directly by a
//    hidden int slot named `$limitN` (N counts the function's for loops from 0) that
//    holds the loop's end bound;
//  - every statement gets `completes` (whether execution can continue after it), with
//    Java's rules: return/break/continue do not complete; a block completes if all of
//    its statements do; if/else if either branch does; `while (true)` only if a `break`
//    leaves it; every other statement does.
// Stops at the first error (throws FrontendError); items are checked in source order.
#pragma once
#include "vm/ast.h"

namespace vm {

void check_program(ast::Program& program);

}  // namespace vm
