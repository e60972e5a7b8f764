// `minivm run --define NAME=VALUE` (-D): a top-level global's initial value replaced
// before main runs, so a program takes a size or duration without the language having
// program arguments. Mini globals have a literal initialiser of type int, float or bool
// (LANGUAGE.md); the value must be a literal of the same type, written as the source would
// write it: 0x10, 1_000, -2.5e3, true.
#pragma once
#include <string>
#include <vector>

#include "vm/bytecode.h"

namespace cli {

struct Define {
  std::string name;
  std::string value;
};

// "NAME=VALUE" split at its first '='; false with `why` when there is no '=' or no name.
bool parse_define(const std::string& text, Define& out, std::string& why);
// Sets each global's initial value in `module`; false with a message naming the global
// for an unknown global or a value that is not a literal of its type.
bool apply_defines(vm::Module& module, const std::vector<Define>& defines, std::string& error);

}  // namespace cli
