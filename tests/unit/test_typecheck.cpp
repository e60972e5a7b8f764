// Unit tests of the Mini type checker (vm/typecheck.h), mostly through compile_source:
// a program using every feature passes; every rule's error has its message and position.
#include <string>

#include <catch2/catch.hpp>

#include "vm/frontend.h"
#include "vm/parser.h"
#include "vm/typecheck.h"

namespace {

vm::CompileError compile_error(std::string_view src) {
  vm::CompileError e;
  auto m = vm::compile_source("t.mini", src, e);
  if (m) FAIL("expected a compile error for:\n" << src);
  return e;
}

bool compiles(std::string_view src, std::string* message = nullptr) {
  vm::CompileError e;
  auto m = vm::compile_source("t.mini", src, e);
  if (!m && message) *message = e.format();
  return m != nullptr;
}

// A program that uses every feature of the language.
constexpr const char* kEverything = R"(
var hits: int = 0;
var scale: float = -1.5;
var on: bool = false;
var low: int = -9223372036854775808;
var name: string = "mini";
var missing: int[] = null;

@inline
fn add(a: int, b: int): int { return a + b; }

@noinline
fn sum(a: int[], n: int): int {
    var s = 0;
    for i in 0..n { s += a[i]; }
    return s;
}

fn fsum(a: float[]): float {
    var s: float = 0.0;
    var i = 0;
    while (i < len(a)) { s = s + a[i]; i += 1; }
    return s;
}

fn fib(n: int): int {
    if (n < 2) { return n; }
    return fib(n - 1) + fib(n - 2);
}

fn later(): bool { return true; }

fn worker(a: int[], k: int) {
    atomic_add(a, 0, k);
    native_spin_ns(10);
    sleep_ms(0);
}

fn classify(x: int): int {
    if (x < 0) { return -1; } else if (x == 0) { return 0; } else { return 1; }
}

fn forever(): int {
    while (true) {
        if (hits > 0) { return hits; }
        hits += 1;
    }
}

fn main(): int {
    var a = new int[10];
    var f = new float[4];
    var x = 7;
    var y: float = 2.0;
    var ok = true;
    x = x * 3 / 2 % 5 - 1;
    x = (x << 2) >> 1 >>> 1;
    x = x & 0xff | 3 ^ ~x;
    x += 1; x -= 2; x *= 3; x /= 4; x %= 5; x &= 6; x |= 7; x ^= 8; x <<= 1; x >>= 1;
    y = y * 1.5 + float(x) / 3.0 - -y;
    y += 1.0; y -= 0.5; y *= 2.0; y /= 4.0;
    x = int(y) + int(x) + x;
    y = float(y) + sqrt(y);
    ok = !ok && x < 3 || y >= 1.0 && (x != 2) && ok == false;
    ok = ok & true | false ^ ok;
    ok &= true; ok |= false; ok ^= true;
    a[0] = 5; a[1] += a[0]; f[2] = 1.5; f[3] *= 2.0;
    var c = crc32(a, 0, len(a));
    arraycopy(a, 0, a, 1, 5);
    arraycopy(f, 0, f, 1, 2);
    var t0 = nanotime();
    var h = spawn worker(a, 3);
    join(h);
    spawn worker(a, 1);
    var s = name + "-" + string(x) + string(y) + string(ok) + string(name);
    var u: string = null;
    u = substring(s, 0, len(s) - 1);
    u += "!";
    ok = s == u || s != null || missing == null || null == missing || u[0] == 109 || a != missing;
    print("sum", sum(a, len(a)), fsum(f), ok, c, a, f, t0 > 0, later(), classify(-3), s, u, null);
    print();
    for i in 0..3 {
        if (i == 1) { continue; }
        if (i == 2) { break; }
        var inner = i;
        print(inner);
    }
    { var x2 = 1; print(x2); }
    { var x2 = 2.5; print(x2); }
    var hits = 3;        // a local may shadow a global
    print(hits, scale, on, low, forever(), add(1, 2), fib(10), early());
    return 0;
}

fn early(): int { return 1; }   // called above, defined after its caller
)";

}  // namespace

TEST_CASE("typecheck: a program using every feature compiles") {
  std::string message;
  CHECK(compiles(kEverything, &message));
  INFO(message);
}

TEST_CASE("typecheck: small valid programs") {
  const char* ok[] = {
      "fn main() {}",
      "fn main(): int { return 3; }",
      "fn main() { return; }",
      "fn main() { f(); } fn f() { g(); } fn g() { }",                              // calls before definition
      "fn main() { print(r(3)); } fn r(n: int): int { if (n == 0) { return 0; } return r(n - 1); }",
      "fn f(): int { while (true) { } } fn main() {}",                               // never completes
      "fn f(b: bool): int { if (b) { return 1; } else { return 2; } } fn main() {}",
      "fn f(): int { return 1; print(2); } fn main() {}",                            // unreachable code is allowed
      "fn main() { for i in 0..3 { } for i in 0..3 { } }",                            // a for variable ends with its loop
      "fn main() { if (true) { var x = 1; } var x = 2.0; }",                          // block scoping
      "var x: int = 1; fn main() { var x = 2.5; print(x); }",                         // shadowing a global
      "fn main() { var x = 1; while (x < 3) { var y = x; x += y; } }",
      "fn main() { var h = spawn f(); join(h); } fn f(): int { return 1; }",          // spawn of a non-void fn
      "fn main() { print(\"a\", 1, 2.0, true, \"b\\n\"); }",
      "fn main() { var a = new int[3]; var b = a; b[0] = len(a); }",
      "fn f(a: int[]): int[] { return a; } fn main() { print(f(new int[1])[0]); }",
      "fn main() { var x = -9223372036854775808; x -= 1; }",
      "fn main() { var b = 1.0 != 2.0 == true; }",
      "fn main() { var g = hits; } var hits: int = 0;",                               // globals declared later
      "fn main() { var spawn = 1; print(spawn); }",
      "fn f(): int { while (true) { if (true) { break; } } return 1; } fn main() {}",
  };
  for (const char* src : ok) {
    std::string message;
    INFO(src);
    CHECK(compiles(src, &message));
    INFO(message);
  }
}

TEST_CASE("typecheck: errors have the rule's message and position") {
  struct Case {
    const char* src;
    int line, col;
    const char* message;
  };
  const Case cases[] = {
      // no implicit conversions: both orders, arithmetic and comparison, compound forms
      {"fn main() { var x = 1 + 1.5; }", 1, 23,
       "operator '+' needs both operands of the same type, got int and float; convert with float(x) or int(x)"},
      {"fn main() { var x = 1.5 * 2; }", 1, 25,
       "operator '*' needs both operands of the same type, got float and int; convert with float(x) or int(x)"},
      {"fn main() {\n  var b = 3 < 2.0;\n}", 2, 13,
       "operator '<' needs both operands of the same type, got int and float; convert with float(x) or int(x)"},
      {"fn main() { var y = 1.0; y += 1; }", 1, 28,
       "operator '+=' needs both operands of the same type, got float and int; convert with float(x) or int(x)"},
      {"fn main() { var x = 1 == true; }", 1, 23, "operator '==' needs both operands of the same type, got int and bool"},
      // operator domains
      {"fn main() { var x = 1.5 % 2.0; }", 1, 25, "operator '%' needs int operands, got float"},
      {"fn main() { var x = 1.5 << 2; }", 1, 25, "operator '<<' needs int operands, got float"},
      {"fn main() { var x = 1 >>> 2.0; }", 1, 23, "operator '>>>' needs int operands, got float"},
      {"fn main() { var x = true + false; }", 1, 26, "operator '+' needs int or float operands, got bool"},
      {"fn main() { var x = 1.0 & 2.0; }", 1, 25, "operator '&' needs int or bool operands, got float"},
      {"fn main() { var x = 1 && true; }", 1, 23, "operator '&&' needs bool operands, got int"},
      {"fn main() { var x = false || 0; }", 1, 27, "operator '||' needs bool operands, got int"},
      {"fn main() { var x = true < false; }", 1, 26, "operator '<' needs int or float operands, got bool"},
      {"fn main() { var a = new int[1]; var x = a == 1; }", 1, 43, "operator '==' cannot compare int[] with int"},
      {"fn main() { var a = new int[1]; var x = a == new float[1]; }", 1, 43, "operator '==' cannot compare int[] with float[]"},
      {"fn main() { var x = -true; }", 1, 21, "operator '-' needs an int or float operand, got bool"},
      {"fn main() { var x = !1; }", 1, 21, "operator '!' needs a bool operand, got int"},
      {"fn main() { var x = ~1.0; }", 1, 21, "operator '~' needs an int operand, got float"},
      {"fn main() { var b = true; b <<= 1; }", 1, 29, "operator '<<=' needs int operands, got bool"},
      // conditions
      {"fn main() { if (1) { } }", 1, 17, "condition of 'if' must be bool, got int"},
      {"fn main() {\n  while (2.0) { }\n}", 2, 10, "condition of 'while' must be bool, got float"},
      {"fn main() { for i in 0.0..3 { } }", 1, 22, "for loop bounds must be int, got float"},
      {"fn main() { for i in 0..true { } }", 1, 25, "for loop bounds must be int, got bool"},
      // arrays
      {"fn main() { var a = new int[1]; var x = a[1.0]; }", 1, 43, "array index must be int, got float"},
      {"fn main() { var x = 3; var y = x[0]; }", 1, 33, "cannot index a value of type int (only arrays and strings)"},
      {"fn main() { var x = null[0]; }", 1, 25, "cannot index a value of type null (only arrays and strings)"},
      {"fn main() { var a = new float[2.0]; }", 1, 31, "array size must be int, got float"},
      {"fn main() { var a = new int[2]; a[0] = 1.5; }", 1, 38,
       "cannot assign a value of type float to an array element of type int; convert with float(x) or int(x)"},
      // names and declarations
      {"fn main() { print(x); }", 1, 19, "unknown name 'x'"},
      {"fn main() { y = 1; }", 1, 13, "unknown name 'y'"},
      {"fn main() { var x = 1; var x = 2; }", 1, 28, "'x' is already declared at 1:17 and still in scope"},
      {"fn main() { var x = 1; if (true) { var x = 2; } }", 1, 40, "'x' is already declared at 1:17 and still in scope"},
      {"fn f(a: int) { var a = 1; } fn main() {}", 1, 20, "'a' is already declared at 1:6 and still in scope"},
      {"fn main() { var i = 0; for i in 0..3 { } }", 1, 28, "'i' is already declared at 1:17 and still in scope"},
      {"fn main() { var x = 1; x = 2.0; }", 1, 26,
       "cannot assign a value of type float to 'x' of type int; convert with float(x) or int(x)"},
      {"fn main() { var x: int = 2.0; }", 1, 24,
       "cannot initialise 'x' of type int with a value of type float; convert with float(x) or int(x)"},
      {"fn main() { var a: int[] = new float[1]; }", 1, 26, "cannot initialise 'a' of type int[] with a value of type float[]"},
      {"fn main() { for i in 0..3 { i = 1; } }", 1, 29, "cannot assign to 'i': a for loop variable is read-only"},
      {"fn main() { for i in 0..3 { i += 1; } }", 1, 29, "cannot assign to 'i': a for loop variable is read-only"},
      {"fn main() { f(\"text\"); } fn f(x: int) {}", 1, 15, "argument 1 of 'f' must be int, got string"},
      // strings and null
      {"fn main() { var s = \"n=\" + 1; }", 1, 26,
       "operator '+' joins two strings, got string and int; convert the int with string(x)"},
      {"fn main() { var s = 1.5 + \"x\"; }", 1, 25,
       "operator '+' joins two strings, got float and string; convert the float with string(x)"},
      {"fn main() { var s = \"a\"; s += true; }", 1, 28,
       "operator '+=' joins two strings, got string and bool; convert the bool with string(x)"},
      {"fn main() { var s = \"abc\"; s[0] = 65; }", 1, 29,
       "strings cannot be assigned into; build a new one, e.g. with substring(s, from, to) and +"},
      {"fn main() { var s = \"abc\"; var b = s[true]; }", 1, 38, "string index must be int, got bool"},
      {"fn main() { var x = \"a\" < \"b\"; }", 1, 25, "operator '<' needs int or float operands, got string"},
      {"fn main() { var x = \"1\" == 1; }", 1, 25, "operator '==' cannot compare string with int"},
      {"fn main() { var x = null == 0; }", 1, 26, "operator '==' cannot compare null with int"},
      {"fn main() { var x = -\"a\"; }", 1, 21, "operator '-' needs an int or float operand, got string"},
      {"fn main() { var s = null; }", 1, 21, "the type of 's' cannot be inferred from null; declare it, e.g. var s: string = null;"},
      {"fn main() { var n: int = null; }", 1, 24, "cannot initialise 'n' of type int with a value of type null"},
      {"fn main() { var b = true; b = null; }", 1, 29, "cannot assign a value of type null to 'b' of type bool"},
      {"fn f(): float { return null; } fn main() {}", 1, 24, "function 'f' must return float, got null"},
      {"fn main() { var s: string = new int[1]; }", 1, 27, "cannot initialise 's' of type string with a value of type int[]"},
      {"fn main() { var s = substring(\"abc\", 1.0, 2); }", 1, 38,
       "argument 2 of 'substring' must be int, got float; convert with float(x) or int(x)"},
      {"fn main() { var s = substring(1, 0, 1); }", 1, 31, "argument 1 of 'substring' must be string, got int"},
      {"fn main() { var s = string(new int[1]); }", 1, 28, "string(x) converts an int, float, bool or string, got int[]"},
      {"fn main() { var n = int(\"12\"); }", 1, 25, "int(x) converts an int or float, got string"},
      {"fn main() { var n = float(null); }", 1, 27, "float(x) converts an int or float, got null"},
      // classes
      {"class A { var x: int; } fn main() { var a = new A(); var y = a.z; }", 1, 64, "class A has no field 'z'"},
      {"class A { fn m() {} } fn main() { var a = new A(); var y = a.m; }", 1, 62,
       "'m' is a method of A, not a field; call it with .m(...)"},
      {"class A { var x: int; } fn main() { var a = new A(); a.x(); }", 1, 56, "'x' is a field of A, not a method"},
      {"class A { fn m(): int { return 1; } } fn main() { var a = new A(); a.q(); }", 1, 70, "class A has no method 'q'"},
      {"class A { fn m(k: int) {} } fn main() { new A().m(); }", 1, 49, "'A.m' takes 1 argument, got 0"},
      {"class A { fn init() {} } fn main() { var a = new A(); a.init(); }", 1, 57, "'init' cannot be called: new A(...) calls it"},
      {"class A { } fn main() { var a = new A(1); }", 1, 37, "class A has no init, so new A() takes no arguments"},
      {"class A { fn init(): int { return 1; } } fn main() {}", 1, 22, "'init' returns nothing: it initialises the object new made"},
      {"class A { var x: int; var x: float; } fn main() {}", 1, 27,
       "class 'A' already has a member 'x' (line 1); fields and methods share one namespace"},
      {"class A { } class A { } fn main() {}", 1, 19, "class 'A' is already defined at line 1"},
      {"fn main() { var n = 3; print(n.x); }", 1, 32, "cannot access field 'x' of a value of type int (only objects have members)"},
      {"class A { fn m() { var y = m; } } fn main() {}", 1, 28, "'m' is a method, not a value; call it with m(...), or wrap it: fn(...) { m(...); }"},
      {"class A { var x: int; fn m(): string { return x; } } fn main() {}", 1, 47, "method 'A.m' must return string, got int"},
      {"class A { } class B { } fn main() { var a = new A(); var b = new B(); print(a == b); }", 1, 79,
       "operator '==' cannot compare A with B"},
      {"class A { } fn main() { var a: A = new A(); a = 3; }", 1, 47, "cannot assign a value of type int to 'a' of type A"},
      {"fn main() { var a = new Nope(); }", 1, 25, "unknown class 'Nope'"},
      {"class A { var next: Missing; } fn main() {}", 1, 21, "unknown type 'Missing'"},
      {"class A { } fn main() { print(string(new A())); }", 1, 38, "string(x) converts an int, float, bool or string, got A"},
      {"fn main() { print(this); }", 1, 19, "'this' is only available inside a method"},
      // inheritance
      {"class A { fn m(): int { return 1; } } class B extends A { fn m(): int { return 2; } } fn main() {}", 1, 62,
       "'m' redefines A.m; mark it: override fn m(...)"},
      {"class A { } class B extends A { override fn m() {} } fn main() {}", 1, 33,
       "'m' is marked override, but no superclass of 'B' declares it"},
      {"class A { fn m(x: int) {} } class B extends A { override fn m(x: float) {} } fn main() {}", 1, 61,
       "'m' overrides A.m and must have its parameter and result types: fn(int)"},
      {"abstract class S { abstract fn f(): int; } fn main() { var s = new S(); }", 1, 68,
       "class 'S' is abstract and cannot be instantiated"},
      {"abstract class S { abstract fn f(): int; } class T extends S { } fn main() {}", 1, 50,
       "class 'T' must override abstract method S.f (or be declared abstract)"},
      {"class S { abstract fn f(): int; } fn main() {}", 1, 11,
       "abstract method 'f' in class 'S', which is not abstract; declare it abstract class S"},
      {"class A { fn init(x: int) {} } class B extends A { fn init() {} } fn main() {}", 1, 55,
       "the init of 'B' must call super.init(...) first: A.init takes 1 argument"},
      {"class A { fn init(x: int) {} } class B extends A { } fn main() {}", 1, 38,
       "class 'B' needs an init that calls super.init(...): A.init takes 1 argument"},
      {"class A extends B { } class B extends A { } fn main() {}", 1, 39, "class 'B' extends itself (through 'A')"},
      {"class A extends Nope { } fn main() {}", 1, 17, "unknown class 'Nope'"},
      {"class A { var x: int; } class B extends A { fn x() {} } fn main() {}", 1, 48,
       "class 'B' cannot declare 'x': its superclass 'A' has a field of that name"},
      {"class A { } fn main() { var a = new A(); var s = a as string; }", 1, 55, "'as' needs a class or interface on its right, got string"},
      {"class A { } class B { } fn main() { var a = new A(); print(a is B); }", 1, 62,
       "'is B' can never succeed: A and B are not related"},
      {"class A { fn m() { super.m(); } } fn main() {}", 1, 20, "class 'A' has no superclass"},
      {"class A { fn m() {} } class B extends A { fn k() { super.q(); } } fn main() {}", 1, 58,
       "superclass 'A' has no method 'q'"},
      {"abstract class A { abstract fn m(); } class B extends A { override fn m() { super.m(); } } fn main() {}", 1, 83,
       "A.m is abstract: it has no body to call"},
      {"class A { fn init() {} } class B extends A { fn init() { print(1); super.init(); } } fn main() {}", 1, 68,
       "super.init(...) can only be the first statement of an init"},
      {"class A { } class B extends A { } fn main() { var b: B = new A(); }", 1, 56,
       "cannot initialise 'b' of type B with a value of type A"},
      // interfaces
      {"interface I { fn m(): int; } class A implements I { } fn main() {}", 1, 36,
       "class 'A' implements I but has no method 'm'; define fn m(): int"},
      {"interface I { fn m(): int; } class A implements I { fn m(): float { return 1.0; } } fn main() {}", 1, 56,
       "'A.m' implements I.m and must have its parameter and result types: fn(): int"},
      {"interface I { fn m(): int; } class A implements I { override fn m(): int { return 1; } } fn main() {}", 1, 53,
       "'m' is marked override, but no superclass of 'A' declares it"},
      {"interface I { fn m(): int; } fn main() { var i = new I(); }", 1, 54,
       "'I' is an interface and cannot be instantiated; create an object of a class that implements it"},
      {"class B { } class A implements B { } fn main() {}", 1, 32,
       "'B' is a class; extend it with: class A extends B"},
      {"interface I { } class A extends I { } fn main() {}", 1, 33,
       "'I' is an interface; implement it with: class A implements I"},
      {"interface I extends J { } interface J extends I { } fn main() {}", 1, 11,
       "interface 'I' extends itself (through the interfaces it extends)"},
      {"interface I { fn m(): int; } interface J { fn m(): float; } interface K extends I, J { } fn main() {}", 1, 84,
       "interface 'K' gets method 'm' twice with different types: fn(): int from I and fn(): float from J"},
      {"interface I { var x: int; } fn main() {}", 1, 15,
       "interface 'I' cannot have fields; it declares methods only"},
      {"interface I { fn m() { } } fn main() {}", 1, 22,
       "interface method 'm' has no body; end it with ';'"},
      {"interface I { fn init(); } fn main() {}", 1, 18,
       "interface 'I' cannot have an init; classes construct objects"},
      {"interface I { fn m(); } fn main() { var i: I = null; i.q(); }", 1, 56,
       "interface I has no method 'q'"},
      {"interface I { } class A implements I, I { } fn main() {}", 1, 39,
       "interface 'I' is named twice"},
      {"interface I { fn m(): int; } abstract class A implements I { } class B extends A { } fn main() {}", 1, 70,
       "class 'B' implements I but has no method 'm'; define fn m(): int"},
      // function values and closures
      {"fn main() { var x = len; }", 1, 21,
       "'len' is a builtin, not a value; call it with len(...), or wrap it in a lambda"},
      {"fn main() { var x = 3; x(1); }", 1, 24,
       "'x' is a variable of type int, not a function; only functions can be called"},
      {"fn main() { var f = fn(a: int): int { return a; }; f(1, 2); }", 1, 52,
       "a function of type fn(int): int takes 1 argument, got 2"},
      {"fn main() { var f = fn(a: int): int { return a; }; f(1.0); }", 1, 54,
       "argument 1 of a function of type fn(int): int must be int, got float; convert with float(x) or int(x)"},
      {"fn main() { var f = fn(a: int): int { if (a > 0) { return a; } }; }", 1, 64,
       "the lambda must return a value of type int on every path; add a return at the end"},
      {"fn main() { for i in 0..3 { var f = fn() { i = 2; }; } }", 1, 44,
       "cannot assign to 'i': a for loop variable is read-only"},
      {"fn main() { var f = fn() { break; }; }", 1, 28,
       "'break' outside a loop"},
      {"fn main() { var f = fn(): int { return 1; }; var g: fn(): float = f; }", 1, 65,
       "cannot initialise 'g' of type fn(): float with a value of type fn(): int"},
      {"class A { fn m() {} fn k() { var f = m; } }", 1, 38,
       "'m' is a method, not a value; call it with m(...), or wrap it: fn(...) { m(...); }"},
      {"fn main() { var x = fn() {}; var y = x(); }", 1, 38,
       "'x' returns no value"},
      {"fn main() { var f: fn(int) = fn(s: string) {}; }", 1, 28,
       "cannot initialise 'f' of type fn(int) with a value of type fn(string)"},
      {"fn g(x: int): int { return x; } fn main() { var f: fn(int): float = g; }", 1, 67,
       "cannot initialise 'f' of type fn(int): float with a value of type fn(int): int"},
      // generics
      {"class V<T> { } fn main() { var v: V = null; }", 1, 32,
       "'V' is generic: give its type arguments, V<T>"},
      {"class V<T> { } fn main() { var v = new V<int, int>(); }", 1, 40,
       "'V<T>' takes 1 type argument, got 2"},
      {"class A { } fn main() { var a = new A<int>(); }", 1, 37,
       "'A' is not generic; write it without type arguments"},
      {"fn id<T>(x: T): T { return x; } fn main() { var f = id; }", 1, 53,
       "'id' is generic, so it has no one value; call it, or wrap a call in a lambda"},
      {"fn id<T>(x: T): T { return x; } fn main() { var y = id(null); }", 1, 53,
       "cannot infer type parameter T of 'id' from the arguments (a parameter of type T needs an argument that is not null)"},
      {"fn two<T>(a: T, b: T) { } fn main() { two(1, 2.0); }", 1, 46,
       "argument 2 of 'two' must be int, got float; convert with float(x) or int(x)"},
      {"class A { fn m<T>(x: T) {} } fn main() {}", 1, 16,
       "methods take no type parameters of their own; give them to the class: class A<...>"},
      {"fn main<T>() {}", 1, 9,
       "'main' cannot be generic"},
      {"class V<T> { } class V<U> { } fn main() {}", 1, 22,
       "class 'V' is already defined"},
      {"class V<T> { fn get(): T { return 1; } } fn main() { var v = new V<string>(); }", 1, 35,
       "method 'V<string>.get' must return string, got int"},
      {"class N<T> { var next: N<N<T>>; } fn main() { var n = new N<int>(); }", 1, 24,
       "too many instances of generic classes and functions (at most 1000): does a generic type use itself with a bigger type argument?"},
      // arrays of anything
      {"class C { } fn main() { var cs = new C[2]; cs[0] = \"c\"; }", 1, 50,
       "cannot assign a value of type string to an array element of type C"},
      {"fn main() { var a = new Missing[2]; }", 1, 25, "unknown type 'Missing'"},
      {"class S { } class C extends S { } fn main() { var a: S[] = new C[1]; }", 1, 58,
       "cannot initialise 'a' of type S[] with a value of type C[]"},
      // loops
      {"fn main() { break; }", 1, 13, "'break' outside a loop"},
      {"fn main() { if (true) { continue; } }", 1, 25, "'continue' outside a loop"},
      // calls
      {"fn main() { g(); }", 1, 13, "unknown function 'g'"},
      {"fn f(a: int, b: float) {} fn main() { f(1); }", 1, 39, "'f' takes 2 arguments, got 1"},
      {"fn f() {} fn main() { f(1); }", 1, 23, "'f' takes 0 arguments, got 1"},
      {"fn f(a: int, b: float) {} fn main() { f(1, 2); }", 1, 44,
       "argument 2 of 'f' must be float, got int; convert with float(x) or int(x)"},
      {"fn f(a: int[]) {} fn main() { f(new float[1]); }", 1, 33, "argument 1 of 'f' must be int[], got float[]"},
      {"fn f() {} fn main() { var x = f(); }", 1, 31, "'f' returns no value"},
      {"fn f() {} fn main() { print(f()); }", 1, 29, "'f' returns no value"},
      {"fn main() { var x = 1 + sleep_ms(1); }", 1, 25, "'sleep_ms' returns no value"},
      {"fn main() { var x = print(1); }", 1, 21, "'print' returns no value"},
      // builtins
      {"fn main() { var n = len(3); }", 1, 25, "argument 1 of 'len' must be an array or a string, got int"},
      {"fn main() { var n = len(); }", 1, 21, "'len' takes 1 argument, got 0"},
      {"fn main() { var r = sqrt(2); }", 1, 26, "argument 1 of 'sqrt' must be float, got int; convert with float(x) or int(x)"},
      {"fn main() { var t = nanotime(1); }", 1, 21, "'nanotime' takes 0 arguments, got 1"},
      {"fn main() { sleep_ms(1.0); }", 1, 22, "argument 1 of 'sleep_ms' must be int, got float; convert with float(x) or int(x)"},
      {"fn main() { native_spin_ns(true); }", 1, 28, "argument 1 of 'native_spin_ns' must be int, got bool"},
      {"fn main() { join(1.0); }", 1, 18, "argument 1 of 'join' must be int, got float; convert with float(x) or int(x)"},
      {"fn main() { var a = new int[1]; arraycopy(a, 0, new float[1], 0, 1); }", 1, 49,
       "arraycopy needs src and dst arrays of the same type, got int[] and float[]"},
      {"fn main() { arraycopy(1, 0, 2, 0, 1); }", 1, 23, "argument 1 of 'arraycopy' must be an array, got int"},
      {"fn main() { var a = new float[1]; var c = crc32(a, 0, 1); }", 1, 49, "argument 1 of 'crc32' must be int[], got float[]"},
      {"fn main() { var a = new int[1]; var c = atomic_add(a, 0); }", 1, 41, "'atomic_add' takes 3 arguments, got 2"},
      {"fn main() { var a = new int[1]; var c = atomic_add(a, 0, 1.0); }", 1, 58,
       "argument 3 of 'atomic_add' must be int, got float; convert with float(x) or int(x)"},
      {"fn main() { var x = int(true); }", 1, 25, "int(x) converts an int or float, got bool"},
      {"fn main() { var x = float(new int[1]); }", 1, 27, "float(x) converts an int or float, got int[]"},
      // spawn
      {"fn main() { var h = spawn len(new int[1]); }", 1, 27, "spawn needs a function of the program, but 'len' is a builtin"},
      {"fn main() { var h = spawn nope(); }", 1, 27, "unknown function 'nope'"},
      {"fn f(x: int) {} fn main() { var h = spawn f(1.0); }", 1, 45,
       "argument 1 of 'f' must be int, got float; convert with float(x) or int(x)"},
      {"fn f() {} fn main() { var h: float = spawn f(); }", 1, 36,
       "cannot initialise 'h' of type float with a value of type int; convert with float(x) or int(x)"},
      // returns
      {"fn f(): int { } fn main() {}", 1, 15, "function 'f' must return a value of type int on every path; add a return at the end"},
      {"fn f(b: bool): int {\n  if (b) { return 1; }\n}\nfn main() {}", 3, 1,
       "function 'f' must return a value of type int on every path; add a return at the end"},
      {"fn f(): int { while (true) { break; } } fn main() {}", 1, 39,
       "function 'f' must return a value of type int on every path; add a return at the end"},
      {"fn f(): int { for i in 0..3 { return i; } } fn main() {}", 1, 43,
       "function 'f' must return a value of type int on every path; add a return at the end"},
      {"fn f(): int { return; } fn main() {}", 1, 15, "function 'f' must return a value of type int"},
      {"fn f() { return 1; } fn main() {}", 1, 10, "function 'f' has no result type, so it cannot return a value"},
      {"fn f(): float { return 1; } fn main() {}", 1, 24,
       "function 'f' must return float, got int; convert with float(x) or int(x)"},
      {"fn main() { return 0; }", 1, 13, "function 'main' has no result type, so it cannot return a value"},
      // program structure
      {"fn f() {}", 1, 1, "the program has no 'main' function"},
      {"fn main(x: int) {}", 1, 9, "'main' must take no parameters"},
      {"fn main(): float { return 1.0; }", 1, 12, "'main' must return int or nothing, not float"},
      {"fn f() {}\nfn f() {}\nfn main() {}", 2, 4, "function 'f' is already defined at line 1"},
      {"fn print() {} fn main() {}", 1, 4, "'print' is a builtin and cannot be redefined"},
      {"fn len(a: int[]): int { return 0; } fn main() {}", 1, 4, "'len' is a builtin and cannot be redefined"},
      {"fn f(a: int, a: float) {} fn main() {}", 1, 14, "parameter 'a' is declared twice"},
      {"var g: int = 0;\nvar g: int = 1;\nfn main() {}", 2, 5, "global 'g' is already defined at line 1"},
      {"var g: float = 1;\nfn main() {}", 1, 16,
       "global 'g' of type float cannot be initialised with a literal of type int; convert with float(x) or int(x)"},
      {"var g: bool = 0;\nfn main() {}", 1, 15, "global 'g' of type bool cannot be initialised with a literal of type int"},
      {"var g: int[] = 0;\nfn main() {}", 1, 16, "global 'g' of type int[] cannot be initialised with a literal of type int"},
      {"var g: string = 1;\nfn main() {}", 1, 17, "global 'g' of type string cannot be initialised with a literal of type int"},
      {"var g: int = null;\nfn main() {}", 1, 14, "global 'g' of type int cannot be initialised with a literal of type null"},
      {"var g: float[] = \"x\";\nfn main() {}", 1, 18,
       "global 'g' of type float[] cannot be initialised with a literal of type string"},
  };
  for (auto& c : cases) {
    INFO(c.src);
    auto e = compile_error(c.src);
    CHECK(e.message == c.message);
    CHECK(e.line == c.line);
    CHECK(e.col == c.col);
    CHECK(e.file == "t.mini");
  }
  CHECK(sizeof(cases) / sizeof(cases[0]) >= 25);
}

TEST_CASE("typecheck: the first error in the file is the one reported") {
  // A body error in an early function beats a duplicate definition later on.
  auto e = compile_error("fn f() { var x = 1 + 1.0; }\nfn f() {}\nfn main() {}");
  CHECK(e.line == 1);
  CHECK(e.message.find("operator '+'") == 0);
  // Globals and functions are checked in source order.
  auto g = compile_error("fn main() { x(); }\nvar g: int = 1.5;");
  CHECK(g.line == 1);
  CHECK(g.message == "unknown function 'x'");
  auto h = compile_error("var g: int = 1.5;\nfn main() { x(); }");
  CHECK(h.line == 1);
  CHECK(h.col == 14);
  // A missing main is reported only when nothing else is wrong.
  auto m = compile_error("fn f() { y = 1; }");
  CHECK(m.message == "unknown name 'y'");
  // Left operand errors come before operator errors.
  auto l = compile_error("fn main() { var x = q + 1.0; }");
  CHECK(l.message == "unknown name 'q'");
}

TEST_CASE("typecheck: CompileError::format") {
  auto e = compile_error("fn main() {\n  var x = 1 +\n    2.0;\n}");
  CHECK(e.format() == "t.mini:2:13: error: operator '+' needs both operands of the same type, got int and float; "
                      "convert with float(x) or int(x)");
}

TEST_CASE("typecheck: annotations on the AST: types, slots, resolution, reachability") {
  auto prog = vm::parse_program(
      "var g: float = 0.5;\n"
      "fn f(a: int, b: float[]): float {\n"
      "  var s = g;\n"
      "  for i in 0..a { s = s + b[i]; }\n"
      "  { var t = 1; }\n"
      "  for j in 0..a { }\n"
      "  return s;\n"
      "}\n"
      "fn main() { print(f(1, new float[1])); }\n");
  vm::check_program(prog);
  auto& f = *prog.functions[0];
  CHECK(f.local_names == std::vector<std::string>{"a", "b", "s", "i", "$limit0", "t", "j", "$limit1"});
  CHECK(f.local_types == std::vector<vm::Type>{vm::Type::Int, vm::Type::FloatArray, vm::Type::Float, vm::Type::Int,
                                                vm::Type::Int, vm::Type::Int, vm::Type::Int, vm::Type::Int});
  auto& stmts = f.body->stmts;
  CHECK(stmts[0]->slot == 2);
  CHECK(stmts[0]->value->ref == vm::ast::NameRef::Global);
  CHECK(stmts[0]->value->index == 0);
  CHECK(stmts[0]->value->type == vm::Type::Float);
  CHECK(stmts[1]->slot == 3);
  CHECK(stmts[1]->limit_slot == 4);
  CHECK(stmts[1]->limit->ref == vm::ast::NameRef::Local);
  CHECK(stmts[1]->limit->index == 0);
  CHECK(stmts[3]->slot == 6);
  CHECK(stmts[3]->limit_slot == 7);
  CHECK(stmts[4]->kind == vm::ast::StmtKind::Return);
  CHECK_FALSE(stmts[4]->completes);
  CHECK(stmts[1]->completes);
  CHECK_FALSE(f.body->completes);
  auto& call = *prog.functions[1]->body->stmts[0]->value;
  CHECK(call.callee == vm::ast::Callee::Print);
  CHECK(call.args[0]->callee == vm::ast::Callee::User);
  CHECK(call.args[0]->index == 0);
  CHECK(call.args[0]->type == vm::Type::Float);
}

TEST_CASE("typecheck: builtins resolve to their callee kinds") {
  auto prog = vm::parse_program(
      "fn main() { var a = new int[2]; var n = len(a); var r = sqrt(2.0); var v = atomic_add(a, 0, 1);"
      " var t = nanotime(); var c = crc32(a, 0, 1); join(0); }");
  vm::check_program(prog);
  auto& s = prog.functions[0]->body->stmts;
  CHECK(s[1]->value->callee == vm::ast::Callee::Len);
  CHECK(s[2]->value->callee == vm::ast::Callee::Sqrt);
  CHECK(s[3]->value->callee == vm::ast::Callee::AtomicAdd);
  CHECK(s[4]->value->callee == vm::ast::Callee::Native);
  CHECK(s[4]->value->index == uint32_t(vm::NativeId::nanotime));
  CHECK(s[5]->value->index == uint32_t(vm::NativeId::crc32));
  CHECK(s[6]->value->index == uint32_t(vm::NativeId::join));
  CHECK(s[6]->value->type == vm::Type::Void);
}

TEST_CASE("typecheck: while(true) completes only with a break, if/else only if a branch does") {
  auto prog = vm::parse_program(
      "fn main() {\n"
      "  while (true) { }\n"
      "  while (true) { break; }\n"
      "  while (true) { while (true) { break; } }\n"
      "  if (true) { return; } else { return; }\n"
      "  if (true) { return; }\n"
      "  while (1 < 2) { }\n"
      "}\n");
  vm::check_program(prog);
  auto& s = prog.functions[0]->body->stmts;
  CHECK_FALSE(s[0]->completes);
  CHECK(s[1]->completes);
  CHECK_FALSE(s[2]->completes);  // the inner break leaves only the inner loop
  CHECK_FALSE(s[3]->completes);
  CHECK(s[4]->completes);
  CHECK(s[5]->completes);
}
