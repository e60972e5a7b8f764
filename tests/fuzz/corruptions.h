// Targeted corruptions of a program's text for fuzz_grammar: small edits a person makes
// by mistake, each of which the front end must either accept (and then verify) or reject
// with one positioned compile error.
#pragma once
#include <string>

#include "tests/fuzz/choices.h"

namespace minigen {

// 0: delete a token; 1: swap a type keyword (int, float, bool, string) for another;
// 2: drop a `return ...;` statement; 3: misspell an identifier.
constexpr int kCorruptionKinds = 4;

// The text with one corruption of that kind at a place `choices` picks; the text itself
// when it has no place for that kind.
std::string corrupt(const std::string& source, int kind, Choices& choices);

}  // namespace minigen
