// Text of literal values, shared by `print` (runtime), the disassembler and AST dumps,
// so a float or a string reads the same everywhere.
#pragma once
#include <string>
#include <string_view>

namespace vm {

// Shortest text that reads back to the same double; ".0" appended when it has neither
// '.' nor an exponent; "nan" (whatever its sign), "inf", "-inf".
void append_float_text(std::string& out, double d);
std::string float_text(double d);

// A string literal as source text: quotes and the escapes \n \t \" \\.
std::string quoted(std::string_view s);

}  // namespace vm
