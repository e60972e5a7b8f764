// A grammar- and type-aware generator of Mini v2 programs (tests/README.md, "Fuzzers"):
// classes with fields, init, inheritance, abstract methods, overrides and super calls;
// interfaces; generic classes, interfaces and functions with bounds; closures that
// capture and write locals; function values; strings; null, `is` and `as`; arrays of
// objects and of arrays; threads; and every v1 statement.
//
// Every program it writes compiles, and runs to the same end in every execution mode:
// it terminates (loops are counted or carry a counter, and every function, method and
// lambda spends one unit of a global `fuel` or returns at once, which bounds recursion
// and every call graph), it never divides by zero (divisors are `(e | 1)`), indexes out
// of range (`(e & 1023) % len(a)` on arrays of length 1 or more), dereferences null
// (every reference a program reads through was assigned a non-null value; null lives
// only in locals declared for it) or casts wrongly (a downcast only under its `is`), its
// strings stay short (each concatenation and store goes through `clip`), and threads
// write disjoint elements or use atomic_add, and are joined at once. With
// `runtime_error`, main ends with one statement that must fail with a runtime error
// (Generated::expected_error names it).
#pragma once
#include <string>

#include "tests/fuzz/choices.h"

namespace minigen {

struct GenOptions {
  bool runtime_error = false;  // end main with a deliberate runtime error
  int classes = 6;             // at most this many classes (interfaces come on top)
  int statements = 220;        // roughly how many statements the whole program gets
};

struct Generated {
  std::string source;
  std::string expected_error;  // with runtime_error: a substring of the error's message
};

Generated generate_program(Choices& choices, const GenOptions& options);

}  // namespace minigen
