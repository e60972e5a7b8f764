// The Mini lexer (LANGUAGE.md, "Lexical"): source text -> tokens with 1-based line and
// column (a tab counts as one column). Tokens are produced on demand, so a lexical error
// late in a file never hides a syntax error earlier in it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vm {

// A position in the source, 1-based, in the program's file `file` (0: the program itself,
// then the files it imports in the order they are first imported).
struct SourcePos {
  int line = 0;
  int col = 0;
  uint16_t file = 0;
};

// The one error type of the front end's phases (lexer, parser, checker, code generator).
// Thrown at the first error; compile_source turns it into a CompileError. Front-end
// phases stop at the first error by design, so an exception is the simplest carrier.
struct FrontendError {
  SourcePos pos;
  std::string message;
};

enum class Tok : uint8_t {
  End,
  Ident,
  IntLit,
  FloatLit,
  StringLit,
  Annotation,  // @name; the parser decides which names are valid
  // keywords
  KwFn, KwVar, KwIf, KwElse, KwWhile, KwFor, KwIn, KwReturn, KwBreak, KwContinue,
  KwTrue, KwFalse, KwNew, KwInt, KwFloat, KwBool, KwString, KwNull,
  KwClass, KwInterface, KwExtends, KwImplements, KwAbstract, KwOverride, KwThis, KwSuper, KwIs, KwAs,
  // punctuation
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Comma, Semi, Colon, DotDot, Dot,
  // operators
  Plus, Minus, Star, Slash, Percent, Amp, Pipe, Caret, Tilde, Bang,
  Shl, Shr, Ushr, Lt, Le, Gt, Ge, EqEq, Ne, AndAnd, OrOr, Assign,
  // compound assignments
  PlusAssign, MinusAssign, StarAssign, SlashAssign, PercentAssign,
  AmpAssign, PipeAssign, CaretAssign, ShlAssign, ShrAssign, UshrAssign,
};

// How a token kind is spelled in messages: "';'", "identifier", "end of file".
std::string_view tok_spelling(Tok t);

struct Token {
  Tok kind = Tok::End;
  SourcePos pos;
  std::string_view text;  // the raw source slice (valid while the source is)
  // IntLit: the value. The magnitude 9223372036854775808 (only valid right after a
  // unary minus) is stored as INT64_MIN with `int_is_min_magnitude` set.
  int64_t int_value = 0;
  bool int_is_min_magnitude = false;
  double float_value = 0;  // FloatLit
  std::string str_value;   // StringLit: decoded text; Annotation: the name after '@'
};

class Lexer {
 public:
  explicit Lexer(std::string_view source, uint16_t file = 0) : src_(source), file_(file) {}
  // The next token; Tok::End (repeatedly) at the end. Throws FrontendError.
  Token next();

 private:
  char peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  void advance(size_t n = 1);
  void skip_space_and_comments();
  Token number(SourcePos start);
  Token string(SourcePos start);
  [[noreturn]] void fail(SourcePos at, std::string message) const;
  SourcePos here() const { return SourcePos{line_, col_, file_}; }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  uint16_t file_ = 0;
};

// Lexes a whole source (tests and tools); the last token is Tok::End. Throws FrontendError.
std::vector<Token> tokenize(std::string_view source);

}  // namespace vm
