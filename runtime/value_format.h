// Text of Mini values as `print` writes them (LANGUAGE.md, "Builtins").
#pragma once
#include <cstdint>
#include <string>

#include "vm/types.h"

namespace runtime {

// Shortest text that reads back to the same double; ".0" appended when it has neither
// '.' nor an exponent; "nan", "inf", "-inf".
void append_float(std::string& out, double d);
// A value of type `t` held in a slot (arrays as "[1, 2, 3]", a string as its bytes, null as "null").
void append_value(std::string& out, vm::Type t, int64_t slot);

}  // namespace runtime
