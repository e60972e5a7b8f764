#include "vm/cli/help_topics.h"

#include <fmt/format.h>

#include "sampler/profile/reasons.h"
#include "sampler/profile/samplers.h"
#include "vm/cli/values.h"

namespace cli {

namespace {

void print_reasons(std::ostream& out) {
  out << "Why an interruption ends as a failed, biased or dropped sample (the names the\n"
         "profile's text report, .jsonl events and the bench print):\n";
  for (size_t i = 0; i < sampler::kReasonCount; i++)
    out << fmt::format("  {:<26} {}\n", sampler::kReasonNames[i], sampler::kReasonMeanings[i]);
}

// One per line in report order: the bench and the tests read the names from here.
void print_samplers(std::ostream& out) {
  auto where = [](sampler::StackTaken w) {
    switch (w) {
      case sampler::StackTaken::at_poll: return "at the next poll";
      case sampler::StackTaken::in_handler: return "in the signal handler";
      case sampler::StackTaken::by_sampler_thread: return "by the sampler thread";
    }
    return "";
  };
  auto biased = [](sampler::Bias b) {
    switch (b) {
      case sampler::Bias::never: return "never biased";
      case sampler::Bias::if_bcp_lags: return "biased if its bcp lags";
      case sampler::Bias::if_not_rebuilt: return "biased if not rebuilt";
      case sampler::Bias::always: return "always biased";
    }
    return "";
  };
  out << "The samplers, in report order (--sampler=NAME,... or all):\n";
  for (size_t i = 0; i < sampler::kSamplerCount; i++)
    out << fmt::format("  {:<12} {:<22} {:<23} {}\n", sampler::kSamplerNames[i],
                       where(sampler::kSamplerStackTaken[i]), biased(sampler::kSamplerBias[i]),
                       sampler::kSamplerHelp[i]);
  out << fmt::format("A sample is biased when {} (reasons: minivm help reasons).\n", sampler::kBiasedMeaning);
}

// Mini v2 at a glance. tests/test_docs.py checks that it names every keyword of the
// lexer and every builtin, and runs its example program for the output it states.
void print_language(std::ostream& out) {
  out << R"(Mini v2, the language minivm runs: small, statically typed, Java-flavoured. The whole
contract is LANGUAGE.md (../shared/LANGUAGE.md beside the source tree); tests/programs/
has small programs that use it, each with the output it must print, and examples/ has
programs to profile.

Types      int (64-bit, wrapping), float (double), bool (true, false), string, T[]
           for any T, classes and interfaces (generic ones with their type arguments:
           Box<int>), function types fn(int, float): bool and fn(string) (no result);
           null for any reference.
           No implicit conversions: float(i), int(f) (toward zero), string(x).
Top level  in any order: globals, var limit: int = 1000; (a literal, or null),
           functions, classes, interfaces. A program starts at fn main() or
           fn main(): int (its exit status). Comments: // to the end of the line, /* */.
Files      import "lib/vector.mini"; (first in a file, the path relative to it) adds
           that file's declarations; each file is read once, cycles are fine.
Functions  fn gcd(a: int, b: int): int { ... }   @inline or @noinline before fn.
Statements var x = e;  var x: T = e;  x = e;  a[i] += e;  f(x);  return e;  break;
           continue;  if (c) { } else if (d) { } else { }   (braces always)
           while (c) { }       uncounted: compiled code polls at its header
           for i in 0..n { }   counted: no poll in its body, one per 2^20 iterations
Operators  + - * / % (int wraps; / by 0 is an error)  & | ^ ~ << >> >>>  == != < <= > >=
           && || ! (bools only)  compound  += -= *= /= %= &= |= ^= <<= >>= >>>=
Classes    class C<T> extends B implements I, J { var f: T; fn init(x: T) { f = x; } }
           new C<int>(1) zeroes the fields and runs init. Methods are virtual; a
           redefinition is marked override; abstract class, abstract fn m(): int;
           this, super.m(), super.init(...) (first in an init). No overloading, no
           static members, no exceptions.
Interfaces interface I<T> extends J, K { fn m(x: T): int; }  (a class implements it)
Generics   class Box<T>, interface I<T>, fn first<T: Named>(a: T[]): T (T bounded by
           Named); a class's type arguments are written, a function's inferred.
Casts      x is Circle   x as Circle (checked: an error when x is not one)   == is
           identity on objects, arrays and functions, contents on strings.
Closures   fn(x: int): int { return x + k; } is a value that captures k by reference;
           any function value is called as f(x); a top-level function's name is one.
Strings    "a\tb\n"  s + t  len(s) (bytes)  s[i] (a byte, 0..255)  substring(s, 1, 3)
Arrays     new int[n]  new Circle[n]  new string[n]  new int[][3]  a[i]  len(a)
Threads    var h = spawn work(a, 0); join(h);  (spawn runs a function value too)
Builtins   print(x, ...)  len(a)  sqrt(f)  nanotime()  sleep_ms(n)  native_spin_ns(n)
           arraycopy(src, from, dst, at, n)  crc32(a, from, to)  atomic_add(a, i, v)

Profiles and stack traces name a function by its name (gcd), a method Class.method
(Circle.area; generic code by its source name: Box.get), a lambda ENCLOSING$fn@LINE
(main$fn@12: the function it is written in and the line of its fn).
Errors: at compile time file.mini:LINE:COL: error: ... (exit 2, nothing runs); at run
time error: ... and the Mini stack trace (exit 1).

A whole program (minivm run shapes.mini prints: circle 12.56636 true 6 15):

interface Named { fn label(): string; }
abstract class Shape implements Named {
    abstract fn area(): float;
}
class Circle extends Shape {
    var r: float;
    fn init(r: float) { this.r = r; }
    override fn area(): float { return 3.14159 * r * r; }
    fn label(): string { return "circle"; }
}
class Box<T> {
    var v: T;
    fn init(v: T) { this.v = v; }
    fn get(): T { return v; }
}
fn main() {
    var s: Shape = new Circle(2.0);
    var k = 10;
    var add = fn(x: int): int { return x + k; };
    k = 5;
    var label = new Box<string>(s.label());
    print(label.get(), s.area(), s is Circle, len("héllo"), add(10));
}
)";
}

constexpr HelpTopic kTopics[] = {
    {"reasons", "what each failed, biased and dropped reason in a profile means", print_reasons},
    {"samplers", "every sampler, in report order, with where it takes the stack", print_samplers},
    {"language", "Mini v2 in one page: types, statements, classes, generics, closures, builtins",
     print_language},
};

}  // namespace

const HelpTopic* help_topics(size_t& count) {
  count = std::size(kTopics);
  return kTopics;
}

const HelpTopic* help_topic(const std::string& name) {
  for (const HelpTopic& t : kTopics)
    if (name == t.name) return &t;
  return nullptr;
}

std::string help_topic_names() {
  std::vector<std::string> names;
  for (const HelpTopic& t : kTopics) names.emplace_back(t.name);
  return one_of(names);
}

}  // namespace cli
