// Function values (LANGUAGE.md, "Functions as values and closures").
//
// A function value is a heap value of kind Closure: its header's reserved word is the
// function's index, data[0] the function's Method* (not a reference: the collector
// skips it), and data[1..] what a lambda captured (the cells of captured variables and
// `this`), each a reference the collector traces. A lambda takes its closure as its
// first argument (local 0); a top-level function does not, so a call of a value passes
// the closure only when the Method* takes one argument more than the call gives.
//
// A top-level function named as a value is one permanent closure without captures,
// made when the module loads, outside the collected heap (as string literals are):
// every mention gives the same value.
#pragma once
#include <cstdint>

#include "runtime/heap.h"

namespace runtime {

inline constexpr int32_t kClosureMethodOffset = kArrayDataOffset;  // data[0]: the Method*

// The permanent value of top-level function `index` (VM::load, once its Method* exists).
const Array* function_value(uint32_t index);

}  // namespace runtime
