// Unit tests of the Mini lexer (vm/lexer.h): every token kind, positions, literals and errors.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "vm/lexer.h"

using vm::Tok;
using vm::Token;

namespace {

std::vector<Tok> kinds(std::string_view src) {
  std::vector<Tok> out;
  for (auto& t : vm::tokenize(src)) out.push_back(t.kind);
  return out;
}

// The error a source produces; fails the test if it lexes cleanly.
vm::FrontendError lex_error(std::string_view src) {
  try {
    vm::tokenize(src);
  } catch (const vm::FrontendError& e) {
    return e;
  }
  FAIL("expected a lexical error for: " << src);
  return {};
}

Token single(std::string_view src) {
  auto toks = vm::tokenize(src);
  REQUIRE(toks.size() == 2);
  REQUIRE(toks[1].kind == Tok::End);
  return toks[0];
}

}  // namespace

TEST_CASE("lexer: keywords and identifiers") {
  CHECK(kinds("fn var if else while for in return break continue true false new int float bool") ==
        std::vector<Tok>{Tok::KwFn, Tok::KwVar, Tok::KwIf, Tok::KwElse, Tok::KwWhile, Tok::KwFor, Tok::KwIn,
                         Tok::KwReturn, Tok::KwBreak, Tok::KwContinue, Tok::KwTrue, Tok::KwFalse, Tok::KwNew,
                         Tok::KwInt, Tok::KwFloat, Tok::KwBool, Tok::End});
  auto toks = vm::tokenize("fnx _a a_1 Int spawn print");
  REQUIRE(toks.size() == 7);
  for (int i = 0; i < 6; i++) CHECK(toks[i].kind == Tok::Ident);
  CHECK(toks[0].text == "fnx");
  CHECK(toks[1].text == "_a");
  CHECK(toks[2].text == "a_1");
  CHECK(toks[3].text == "Int");  // keywords are case sensitive
  CHECK(toks[4].text == "spawn");  // contextual, decided by the parser
}

TEST_CASE("lexer: every operator and punctuation, longest match first") {
  CHECK(kinds("+ - * / % & | ^ ~ ! << >> >>> < <= > >= == != && || =") ==
        std::vector<Tok>{Tok::Plus, Tok::Minus, Tok::Star, Tok::Slash, Tok::Percent, Tok::Amp, Tok::Pipe,
                         Tok::Caret, Tok::Tilde, Tok::Bang, Tok::Shl, Tok::Shr, Tok::Ushr, Tok::Lt, Tok::Le,
                         Tok::Gt, Tok::Ge, Tok::EqEq, Tok::Ne, Tok::AndAnd, Tok::OrOr, Tok::Assign, Tok::End});
  CHECK(kinds("+= -= *= /= %= &= |= ^= <<= >>= >>>=") ==
        std::vector<Tok>{Tok::PlusAssign, Tok::MinusAssign, Tok::StarAssign, Tok::SlashAssign, Tok::PercentAssign,
                         Tok::AmpAssign, Tok::PipeAssign, Tok::CaretAssign, Tok::ShlAssign, Tok::ShrAssign,
                         Tok::UshrAssign, Tok::End});
  CHECK(kinds("( ) { } [ ] , ; : ..") ==
        std::vector<Tok>{Tok::LParen, Tok::RParen, Tok::LBrace, Tok::RBrace, Tok::LBracket, Tok::RBracket,
                         Tok::Comma, Tok::Semi, Tok::Colon, Tok::DotDot, Tok::End});
  // Without spaces the longest operator wins.
  CHECK(kinds("a>>>=b>>>c>>d>=e") == std::vector<Tok>{Tok::Ident, Tok::UshrAssign, Tok::Ident, Tok::Ushr, Tok::Ident,
                                                       Tok::Shr, Tok::Ident, Tok::Ge, Tok::Ident, Tok::End});
  CHECK(kinds("!==") == std::vector<Tok>{Tok::Ne, Tok::Assign, Tok::End});
  CHECK(kinds("a&&&b") == std::vector<Tok>{Tok::Ident, Tok::AndAnd, Tok::Amp, Tok::Ident, Tok::End});
}

TEST_CASE("lexer: lines and columns are 1-based, a tab is one column") {
  auto toks = vm::tokenize("fn main() {\n\tvar x = 10;\n  // c\n/* a\n b */ x += 1;\n}");
  // fn(1:1) main(1:4) ((1:8) )(1:9) {(1:11)
  CHECK(toks[0].pos.line == 1);
  CHECK(toks[0].pos.col == 1);
  CHECK(toks[1].pos.col == 4);
  CHECK(toks[2].pos.col == 8);
  CHECK(toks[4].pos.col == 11);
  // var at 2:2 (after one tab), x at 2:6, = at 2:8, 10 at 2:10, ; at 2:12
  CHECK(toks[5].kind == Tok::KwVar);
  CHECK(toks[5].pos.line == 2);
  CHECK(toks[5].pos.col == 2);
  CHECK(toks[6].pos.col == 6);
  CHECK(toks[7].pos.col == 8);
  CHECK(toks[8].pos.col == 10);
  CHECK(toks[9].pos.col == 12);
  // after the comments: x at 5:7, += at 5:9
  CHECK(toks[10].text == "x");
  CHECK(toks[10].pos.line == 5);
  CHECK(toks[10].pos.col == 7);
  CHECK(toks[11].kind == Tok::PlusAssign);
  CHECK(toks[11].pos.col == 9);
  CHECK(toks.back().kind == Tok::End);
  CHECK(toks[toks.size() - 2].pos.line == 6);
}

TEST_CASE("lexer: decimal and hex int literals with underscores") {
  CHECK(single("0").int_value == 0);
  CHECK(single("42").int_value == 42);
  CHECK(single("007").int_value == 7);
  CHECK(single("1_000_000").int_value == 1000000);
  CHECK(single("1__0").int_value == 10);
  CHECK(single("0x1F").int_value == 31);
  CHECK(single("0xff_ff").int_value == 0xffff);
  CHECK(single("0X10").int_value == 16);
  CHECK(single("9223372036854775807").int_value == INT64_MAX);
  CHECK(single("0x7fff_ffff_ffff_ffff").int_value == INT64_MAX);
  Token t = single("123");
  CHECK(t.kind == Tok::IntLit);
  CHECK(t.text == "123");
  CHECK_FALSE(t.int_is_min_magnitude);
}

TEST_CASE("lexer: int literals must fit int64, 2^63 is flagged for unary minus") {
  Token m = single("9223372036854775808");
  CHECK(m.kind == Tok::IntLit);
  CHECK(m.int_is_min_magnitude);
  CHECK(m.int_value == INT64_MIN);
  CHECK(single("0x8000000000000000").int_is_min_magnitude);

  auto e = lex_error("x = 9223372036854775809;");
  CHECK(e.message == "integer literal 9223372036854775809 does not fit in int");
  CHECK(e.pos.col == 5);
  CHECK(lex_error("99999999999999999999999").message.find("does not fit in int") != std::string::npos);
  CHECK(lex_error("0x1_0000_0000_0000_0000").message.find("does not fit in int") != std::string::npos);
}

TEST_CASE("lexer: '_' only between digits") {
  for (const char* bad : {"1_", "1_ ", "0x_1", "0x1_", "1_.5", "1._5e3", "1.5_", "1e_5"}) {
    INFO(bad);
    CHECK_THROWS_AS(vm::tokenize(bad), vm::FrontendError);
  }
  auto e = lex_error("  12_;");
  CHECK(e.message == "'_' in a number must be between digits");
  CHECK(e.pos.col == 5);
  CHECK(lex_error("0x").message == "hex literal needs at least one digit after '0x'");
  CHECK(lex_error("0xg").message == "hex literal needs at least one digit after '0x'");
}

TEST_CASE("lexer: float literals") {
  Token a = single("1.5");
  CHECK(a.kind == Tok::FloatLit);
  CHECK(a.float_value == 1.5);
  CHECK(single("0.25e-3").float_value == 0.25e-3);
  CHECK(single("3e9").float_value == 3e9);
  CHECK(single("3e9").kind == Tok::FloatLit);
  CHECK(single("1E+2").float_value == 100.0);
  CHECK(single("0.1").float_value == 0.1);
  CHECK(single("1_000.5").float_value == 1000.5);
  CHECK(single("4.9e-324").float_value == std::bit_cast<double>(int64_t(1)));  // smallest denormal
  // `0..n` is a range, not the float `0.`
  CHECK(kinds("0..n") == std::vector<Tok>{Tok::IntLit, Tok::DotDot, Tok::Ident, Tok::End});
  CHECK(kinds("1.5..2") == std::vector<Tok>{Tok::FloatLit, Tok::DotDot, Tok::IntLit, Tok::End});
  CHECK(lex_error("1e999").message == "float literal 1e999 is out of range");
  // `1.` is not a float, and no number has members: the dot is an error
  auto e = lex_error("1.;");
  CHECK(e.message == "a float literal needs digits after '.', e.g. 1.0");
  CHECK(e.pos.col == 2);
  // A '.' elsewhere is member access.
  CHECK(kinds("p.x") == std::vector<Tok>{Tok::Ident, Tok::Dot, Tok::Ident, Tok::End});
  CHECK(kinds("a[1].f") == std::vector<Tok>{Tok::Ident, Tok::LBracket, Tok::IntLit, Tok::RBracket, Tok::Dot, Tok::Ident, Tok::End});
}

TEST_CASE("lexer: a number followed by letters is an error") {
  auto e = lex_error("var x = 12ab;");
  CHECK(e.message == "invalid character 'a' in number");
  CHECK(e.pos.line == 1);
  CHECK(e.pos.col == 11);
  CHECK(lex_error("3e").message == "invalid character 'e' in number");
  CHECK(lex_error("0x1g").message == "invalid character 'g' in number");
}

TEST_CASE("lexer: string literals and escapes") {
  Token s = single(R"("a\tb\n\"q\" \\ end")");
  CHECK(s.kind == Tok::StringLit);
  CHECK(s.str_value == "a\tb\n\"q\" \\ end");
  CHECK(single(R"("")").str_value.empty());

  auto bad = lex_error("print(\"ok\\x\");");
  CHECK(bad.message == "invalid escape '\\x' in string literal (use \\n, \\t, \\\" or \\\\)");
  CHECK(bad.pos.col == 10);  // the backslash
  auto unterminated = lex_error("\n  \"abc");
  CHECK(unterminated.message == "unterminated string literal");
  CHECK(unterminated.pos.line == 2);
  CHECK(unterminated.pos.col == 3);
  CHECK(lex_error("\"abc\ndef\"").message == "unterminated string literal");
  CHECK(lex_error("\"abc\\").message == "unterminated string literal");
}

TEST_CASE("lexer: comments") {
  CHECK(kinds("a // b c\n d") == std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::End});
  CHECK(kinds("a /* b \n c */ d") == std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::End});
  CHECK(kinds("a /* /* */ d") == std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::End});  // not nested
  CHECK(kinds("a/**/b//") == std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::End});
  CHECK(kinds("a / b") == std::vector<Tok>{Tok::Ident, Tok::Slash, Tok::Ident, Tok::End});
  auto e = lex_error("x\n  /* never closed\n");
  CHECK(e.message == "unterminated block comment");
  CHECK(e.pos.line == 2);
  CHECK(e.pos.col == 3);
  // "/* */ */": the second */ is two operator tokens
  CHECK(kinds("/* */ */") == std::vector<Tok>{Tok::Star, Tok::Slash, Tok::End});
}

TEST_CASE("lexer: annotations") {
  auto toks = vm::tokenize("@inline @noinline @other fn");
  REQUIRE(toks.size() == 5);
  CHECK(toks[0].kind == Tok::Annotation);
  CHECK(toks[0].str_value == "inline");
  CHECK(toks[0].text == "@inline");
  CHECK(toks[1].str_value == "noinline");
  CHECK(toks[2].str_value == "other");  // the parser rejects unknown names
  CHECK(toks[3].kind == Tok::KwFn);
  auto e = lex_error("@ inline");
  CHECK(e.message == "expected an annotation name after '@'");
  CHECK(e.pos.col == 1);
}

TEST_CASE("lexer: unexpected characters") {
  auto e = lex_error("var x = 1;\nx = #;");
  CHECK(e.message == "unexpected character '#'");
  CHECK(e.pos.line == 2);
  CHECK(e.pos.col == 5);
  CHECK(lex_error("a $ b").message == "unexpected character '$'");
  CHECK(lex_error("'c'").message == "unexpected character '''");
  CHECK(lex_error("\xc3\xa9").message == "unexpected character '\\xc3'");
}

TEST_CASE("lexer: tokens are produced lazily, so later errors do not hide earlier tokens") {
  vm::Lexer lx("fn main # oops");
  CHECK(lx.next().kind == Tok::KwFn);
  CHECK(lx.next().kind == Tok::Ident);
  CHECK_THROWS_AS(lx.next(), vm::FrontendError);
}

TEST_CASE("lexer: end of input repeats and empty input") {
  vm::Lexer lx("  \n ");
  Token t = lx.next();
  CHECK(t.kind == Tok::End);
  CHECK(t.pos.line == 2);
  CHECK(t.pos.col == 2);
  CHECK(lx.next().kind == Tok::End);
  CHECK(vm::tok_spelling(Tok::Ushr) == ">>>");
  CHECK(vm::tok_spelling(Tok::KwWhile) == "while");
  CHECK(vm::tok_spelling(Tok::End) == "end of file");
}
