// Unit tests of the Mini parser (vm/parser.h): precedence and associativity through the
// AST dump, statement and declaration structure, and syntax errors with positions.
#include <bit>
#include <string>

#include <catch2/catch.hpp>

#include "vm/parser.h"

using namespace vm::ast;

namespace {

std::string expr(std::string_view src) { return dump(*vm::parse_expression(src)); }

std::string program(std::string_view src) { return dump(vm::parse_program(src)); }

vm::FrontendError parse_error(std::string_view src) {
  try {
    vm::parse_program(src);
  } catch (const vm::FrontendError& e) {
    return e;
  }
  FAIL("expected a syntax error for: " << src);
  return {};
}

// Body statements of `fn main() { <body> }`.
std::string body(std::string_view stmts) {
  std::string out = program("fn main() {\n" + std::string(stmts) + "\n}");
  return out.substr(out.find('\n') + 1);
}

}  // namespace

TEST_CASE("parser: binary precedence, lowest to highest") {
  CHECK(expr("a || b && c") == "(|| a (&& b c))");
  CHECK(expr("a && b | c") == "(&& a (| b c))");
  CHECK(expr("a | b ^ c") == "(| a (^ b c))");
  CHECK(expr("a ^ b & c") == "(^ a (& b c))");
  CHECK(expr("a & b == c") == "(& a (== b c))");
  CHECK(expr("a == b < c") == "(== a (< b c))");
  CHECK(expr("a != b >= c") == "(!= a (>= b c))");
  CHECK(expr("a < b << c") == "(< a (<< b c))");
  CHECK(expr("a >> b + c") == "(>> a (+ b c))");
  CHECK(expr("a >>> b - c") == "(>>> a (- b c))");
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("a - b / c % d") == "(- a (% (/ b c) d))");
  // and the mirror images
  CHECK(expr("a * b + c") == "(+ (* a b) c)");
  CHECK(expr("a && b || c && d") == "(|| (&& a b) (&& c d))");
  CHECK(expr("a + b < c + d == e") == "(== (< (+ a b) (+ c d)) e)");
  CHECK(expr("a | b & c ^ d") == "(| a (^ (& b c) d))");
}

TEST_CASE("parser: binary operators are left associative") {
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a / b * c") == "(* (/ a b) c)");
  CHECK(expr("a << b >> c >>> d") == "(>>> (>> (<< a b) c) d)");
  CHECK(expr("a == b != c") == "(!= (== a b) c)");
  CHECK(expr("a < b < c") == "(< (< a b) c)");
  CHECK(expr("a || b || c") == "(|| (|| a b) c)");
  CHECK(expr("a && b && c") == "(&& (&& a b) c)");
  CHECK(expr("(a - b) - c") == "(- (- a b) c)");
  CHECK(expr("a - (b - c)") == "(- a (- b c))");
}

TEST_CASE("parser: unary operators bind tighter than binary, looser than postfix") {
  CHECK(expr("-a * b") == "(* (- a) b)");
  CHECK(expr("!a && b") == "(&& (! a) b)");
  CHECK(expr("~a & b") == "(& (~ a) b)");
  CHECK(expr("-a[i]") == "(- (index a i))");
  CHECK(expr("!f(x)") == "(! (call f x))");
  CHECK(expr("- -a") == "(- (- a))");
  CHECK(expr("!!b") == "(! (! b))");
  CHECK(expr("~-a") == "(~ (- a))");
  CHECK(expr("a - -b") == "(- a (- b))");
  CHECK(expr("-(a + b)") == "(- (+ a b))");
}

TEST_CASE("parser: a minus before a literal is a negative literal") {
  CHECK(expr("-5") == "-5");
  CHECK(expr("-9223372036854775808") == "-9223372036854775808");
  CHECK(expr("x - -9223372036854775808") == "(- x -9223372036854775808)");
  CHECK(expr("-1.5") == "-1.5");
  CHECK(expr("-2 * 3") == "(* -2 3)");
  CHECK(expr("-(5)") == "(- 5)");        // parenthesised: a real negation
  CHECK(expr("-5[0]") == "(- (index 5 0))");  // postfix binds first
  auto lit = vm::parse_expression("-9223372036854775808");
  CHECK(lit->kind == ExprKind::IntLit);
  CHECK(lit->int_value == INT64_MIN);
  CHECK(lit->pos.col == 1);
}

TEST_CASE("parser: 9223372036854775808 without a minus is an error") {
  CHECK_THROWS_AS(vm::parse_expression("9223372036854775808"), vm::FrontendError);
  auto e = parse_error("fn main() { var x = 1 + 9223372036854775808; }");
  CHECK(e.message == "integer literal 9223372036854775808 does not fit in int");
  CHECK(e.pos.col == 25);
  CHECK(parse_error("fn main() { var x = -(9223372036854775808); }").message ==
        "integer literal 9223372036854775808 does not fit in int");
}

TEST_CASE("parser: postfix, primaries, calls, arrays, conversions, spawn") {
  CHECK(expr("f()") == "(call f)");
  CHECK(expr("f(1, g(2), a[3])") == "(call f 1 (call g 2) (index a 3))");
  CHECK(expr("a[i][j]") == "(index (index a i) j)");
  CHECK(expr("f(x)[0]") == "(index (call f x) 0)");
  CHECK(expr("new int[n + 1]") == "(new int (+ n 1))");
  CHECK(expr("new float[10]") == "(new float 10)");
  CHECK(expr("float(i) * 2.0") == "(* (float i) 2)");  // 2.0 dumps as 2
  CHECK(expr("int(x + 0.5)") == "(int (+ x 0.5))");
  CHECK(expr("spawn worker(a, 1)") == "(spawn worker a 1)");
  CHECK(expr("spawn") == "spawn");  // only contextual
  CHECK(expr("spawn + 1") == "(+ spawn 1)");
  CHECK(expr("true || false") == "(|| true false)");
  CHECK(expr("\"a\\nb\"") == "\"a\\nb\"");
  CHECK(expr("0x10 + 1_000") == "(+ 16 1000)");
}

TEST_CASE("parser: expression node positions") {
  auto e = vm::parse_expression("a +\n  b * c");
  CHECK(e->kind == ExprKind::Binary);
  CHECK(e->pos.line == 1);
  CHECK(e->pos.col == 1);
  CHECK(e->op_pos.col == 3);
  CHECK(e->args[1]->pos.line == 2);
  CHECK(e->args[1]->pos.col == 3);
  CHECK(e->args[1]->op_pos.col == 5);
  auto call = vm::parse_expression("  spawn  f(1)");
  CHECK(call->pos.col == 3);
  CHECK(call->op_pos.col == 10);
  auto ix = vm::parse_expression("arr[1]");
  CHECK(ix->op_pos.col == 4);
}

TEST_CASE("parser: globals, functions, annotations") {
  std::string p = program(
      "var a: int = -3;\n"
      "var b: float = -0.5;\n"
      "var c: bool = true;\n"
      "var d: int = -9223372036854775808;\n"
      "@inline fn f(x: int, y: float[]): int[] { return g(); }\n"
      "@noinline\nfn g() { }\n"
      "fn main(): int { return 0; }\n");
  CHECK(p ==
        "global a: int = -3\n"
        "global b: float = -0.5\n"
        "global c: bool = true\n"
        "global d: int = -9223372036854775808\n"
        "fn f(x: int, y: float[]): int[] @inline\n"
        "  return (call g)\n"
        "fn g() @noinline\n"
        "  (empty)\n"
        "fn main(): int\n"
        "  return 0\n");
  auto prog = vm::parse_program("var g: float = 2.5;\n\n  fn   main() {}");
  CHECK(std::bit_cast<double>(prog.globals[0]->init_bits) == 2.5);
  CHECK(prog.globals[0]->init_type == vm::Type::Float);
  CHECK(prog.functions[0]->pos.line == 3);
  CHECK(prog.functions[0]->pos.col == 3);
  CHECK(prog.functions[0]->name_pos.col == 8);
}

TEST_CASE("parser: every statement kind") {
  CHECK(body("var x = 1;\n"
             "var y: float = 2.5;\n"
             "x = x + 1;\n"
             "a[i] += 2;\n"
             "x -= 1; x *= 2; x /= 3; x %= 4; x &= 5; x |= 6; x ^= 7; x <<= 1; x >>= 2; x >>>= 3;\n"
             "f(x);\n"
             "spawn f(x);\n"
             "{ var z = 0; }\n"
             "return;\n") ==
        "  var x = 1\n"
        "  var y: float = 2.5\n"
        "  x = (+ x 1)\n"
        "  (index a i) += 2\n"
        "  x -= 1\n  x *= 2\n  x /= 3\n  x %= 4\n  x &= 5\n  x |= 6\n  x ^= 7\n  x <<= 1\n  x >>= 2\n  x >>>= 3\n"
        "  (call f x)\n"
        "  (spawn f x)\n"
        "  var z = 0\n"
        "  return\n");
  CHECK(body("if (a) { f(); } else if (b) { g(); } else { h(); }\n"
             "while (x < 10) { break; continue; }\n"
             "for i in 0..n + 1 { return i; }\n") ==
        "  if a\n"
        "    (call f)\n"
        "  else\n"
        "    if b\n"
        "      (call g)\n"
        "    else\n"
        "      (call h)\n"
        "  while (< x 10)\n"
        "    break\n"
        "    continue\n"
        "  for i in 0 .. (+ n 1)\n"
        "    return i\n");
}

TEST_CASE("parser: statement structure and positions") {
  auto prog = vm::parse_program("fn main() {\n  x += 2;\n  for i in 1..3 { }\n}");
  auto& stmts = prog.functions[0]->body->stmts;
  REQUIRE(stmts.size() == 2);
  CHECK(stmts[0]->kind == StmtKind::Assign);
  CHECK(stmts[0]->compound);
  CHECK(stmts[0]->binop == BinOp::Add);
  CHECK(stmts[0]->op_pos.line == 2);
  CHECK(stmts[0]->op_pos.col == 5);
  CHECK(stmts[1]->kind == StmtKind::For);
  CHECK(stmts[1]->name == "i");
  CHECK(stmts[1]->name_pos.col == 7);
  CHECK(prog.functions[0]->body->end_pos.line == 4);
  CHECK(prog.functions[0]->body->end_pos.col == 1);
}

TEST_CASE("parser: syntax errors with positions") {
  struct Case {
    const char* src;
    int line, col;
    const char* message;
  };
  const Case cases[] = {
      {"fn main() { var x = 1 }", 1, 23, "expected ';' after the declaration, found '}'"},
      {"fn main() { f() }", 1, 17, "expected ';' after the call, found '}'"},
      {"fn main() { if (x) f(); }", 1, 20, "expected '{' after the if condition (braces are required), found 'f'"},
      {"fn main() { if x { } }", 1, 16, "expected '(' after 'if', found 'x'"},
      {"fn main() { while (x) f(); }", 1, 23, "expected '{' after the while condition (braces are required), found 'f'"},
      {"fn main() { for i in 0..3 f(); }", 1, 27, "expected '{' after the for loop bounds (braces are required), found 'f'"},
      {"fn main() { if (x) { } else f(); }", 1, 29, "expected '{' after 'else' (braces are required), found 'f'"},
      {"fn main() { for i in 0 to 3 { } }", 1, 24, "expected '..' between the for loop bounds (for i in a..b), found 'to'"},
      {"fn main() { x + 1; }", 1, 13, "only a call can be used as a statement"},
      {"fn main() { x; }", 1, 13, "only a call can be used as a statement"},
      {"fn main() { x y; }", 1, 15, "expected '=' or ';', found 'y'"},
      {"fn main() { f() = 3; }", 1, 13, "cannot assign to this expression (only to a variable, a field or an array element)"},
      {"fn main() { var x; }", 1, 18, "expected '=' after 'var x' (a local needs an initial value), found ';'"},
      {"fn main() { ; }", 1, 13, "expected a statement, found ';'"},
      {"fn main() { var x = ; }", 1, 21, "expected an expression, found ';'"},
      {"fn main() { var x = (1 + 2; }", 1, 27, "expected ')' to close '(', found ';'"},
      {"fn main() {\n  f(1,);\n}", 2, 7, "expected an expression, found ')'"},
      {"fn main() {\n", 2, 1, "expected '}' to close the block opened at 1:11, found end of file"},
      {"var g = 1;", 1, 7, "global 'g' needs a type and a literal initialiser, e.g. var g: int = 0;"},
      {"var g: int = 1 + 2;", 1, 16, "expected ';' after a global declaration, found '+'"},
      {"var g: int = x;", 1, 14, "the initialiser of global 'g' must be a literal, found 'x'"},
      {"var g: int;", 1, 11, "expected '=' in a global declaration (globals need a literal initialiser), found ';'"},
      {"var g: int = 9223372036854775808;", 1, 14, "integer literal 9223372036854775808 does not fit in int"},
      {"main() {}", 1, 1, "expected 'fn', 'var', 'class' or 'interface' at top level, found 'main'"},
      {"@fast fn main() {}", 1, 1, "unknown annotation '@fast' (expected @inline or @noinline)"},
      {"@inline @noinline fn main() {}", 1, 9, "conflicting annotations @inline and @noinline"},
      {"@inline var x: int = 0;", 1, 9, "expected 'fn' after an annotation, found 'var'"},
      {"fn main(x) {}", 1, 10, "expected ':' after parameter 'x' (parameters are written name: type), found ')'"},
      {"fn main(x: var) {}", 1, 12, "expected a type (int, float, bool, string, a class, a function type fn(T): R, or an array of one: T[]), found 'var'"},
      {"fn main(x: bool[) {}", 1, 16, "expected ')' after the parameters, found '['"},
      {"var g: string = \"a\" + \"b\";", 1, 21, "expected ';' after a global declaration, found '+'"},
      {"var g: int[] = new int[3];", 1, 16, "the initialiser of global 'g' must be a literal, found 'new'"},
      {"fn main() { var s = string 1; }", 1, 28, "expected '(' after 'string' (conversions are written string(x)), found '1'"},
      {"fn main() int {}", 1, 11, "expected '{' to start the body of 'main', found 'int'"},
      {"fn main() { var a = new 3[3]; }", 1, 25, "expected a type (int, float, bool, string, a class, a function type fn(T): R, or an array of one: T[]), found '3'"},
      {"fn main() { var a = new int[]; }", 1, 30, "expected '[' after 'new int[]' (the array's size), found ';'"},
      {"fn main() { var a = new int(3); }", 1, 28, "expected '[' after 'new int' (the array's size), found '('"},
      {"fn main() { var a = int + 1; }", 1, 25, "expected '(' after 'int' (conversions are written int(x)), found '+'"},
      {"fn main() { var a = spawn f; }", 1, 28, "expected '(' after 'spawn f' (spawn takes a call), found ';'"},
      {"fn main() { break }", 1, 19, "expected ';' after 'break', found '}'"},
      {"fn main() { var a = b[1; }", 1, 24, "expected ']' after the array index, found ';'"},
  };
  for (auto& c : cases) {
    INFO(c.src);
    auto e = parse_error(c.src);
    CHECK(e.message == c.message);
    CHECK(e.pos.line == c.line);
    CHECK(e.pos.col == c.col);
  }
}

TEST_CASE("parser: nesting is bounded instead of overflowing the stack") {
  std::string deep_parens = std::string(5000, '(') + "1" + std::string(5000, ')');
  CHECK(parse_error("fn main() { var x = " + deep_parens + "; }").message == "expression is nested too deeply");
  std::string long_chain = "1";
  for (int i = 0; i < 5000; i++) long_chain += " + 1";
  CHECK(parse_error("fn main() { var x = " + long_chain + "; }").message == "expression is nested too deeply");
  std::string minus(5000, '-');
  CHECK(parse_error("fn main() { var x = " + minus + "x; }").message == "expression is nested too deeply");
  std::string blocks = std::string(5000, '{') + std::string(5000, '}');
  CHECK(parse_error("fn main() " + blocks).message == "blocks are nested too deeply");
  std::string elifs = "fn main() { if (a) { }";
  for (int i = 0; i < 5000; i++) elifs += " else if (a) { }";
  // each else-if nests one level (its block one more): whichever limit trips first
  CHECK_THAT(parse_error(elifs + " }").message, Catch::Matchers::EndsWith("nested too deeply"));
  // A moderately long chain is fine.
  std::string ok = "1";
  for (int i = 0; i < 200; i++) ok += " + 1";
  CHECK_NOTHROW(vm::parse_program("fn main() { var x = " + ok + "; }"));
}
