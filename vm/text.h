// Text of literal values, shared by `print` (runtime), the disassembler and AST dumps,
// so a float or a string reads the same everywhere; and how a message quotes what a
// user wrote, which may be of any length.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace vm {

// Shortest text that reads back to the same double; ".0" appended when it has neither
// '.' nor an exponent; "nan" (whatever its sign), "inf", "-inf".
void append_float_text(std::string& out, double d);
std::string float_text(double d);

// A string literal as source text: quotes and the escapes \n \t \" \\.
std::string quoted(std::string_view s);

// A user's text (a value, a token, a name, a path) as an error message quotes it: whole
// up to kMaxQuoted characters (a long path still reads whole), else its start and end
// around "..." and its length ("123456...7890 (100000 characters)"), so that a huge value
// cannot make a huge line.
inline constexpr size_t kMaxQuoted = 160;
std::string shortened(std::string_view text);
// `message` with every run of non-blank characters longer than kMaxQuoted shortened: the
// net for messages that quote a user's text in many places (the front end's diagnostics,
// the command line's usage errors).
std::string with_long_words_shortened(std::string_view message);

}  // namespace vm
