// The Mini parser: recursive descent over the lexer's tokens, building the AST of
// vm/ast.h with LANGUAGE.md's precedence (all binary operators left associative).
// Stops at the first syntax error by throwing FrontendError.
//
// Decisions worth knowing:
//  - `-` directly before an int or float literal is folded into a negative literal
//    (that is how `-9223372036854775808` is accepted and how globals get negative
//    initialisers). `-(5)` and `-x` stay Unary.
//  - `spawn` is contextual: the identifier `spawn` followed by another identifier;
//    `import` too: at top level, the identifier `import` followed by a string.
//  - Expression statements must be calls or spawns; bare `{ }` blocks are statements.
//  - Expression and block nesting are limited (kMaxNesting) so that no pass can
//    overflow the native stack on hostile input.
#pragma once
#include <string_view>

#include "vm/ast.h"

namespace vm {

inline constexpr int kMaxNesting = 256;

// Parses a whole source file, the program's file `file` (SourcePos::file). Its imports are
// listed, not read: compile_source reads them. Throws FrontendError.
ast::Program parse_program(std::string_view source, uint16_t file = 0);

// Parses a single expression that must span the whole input (for tests). Throws FrontendError.
ast::ExprPtr parse_expression(std::string_view source);

}  // namespace vm
