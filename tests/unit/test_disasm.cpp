// Unit tests of the disassemblers: the bytecode listing (vm/disasm.h: javap-like,
// operands resolved to names, robust on malformed code) and the compiled-code listing
// (jit/listing.h: offsets, poll marks that agree with the poll table, loops without a poll).
#include <memory>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "jit/baseline_compiler.h"
#include "jit/listing.h"
#include "tests/unit/vm_fixture.h"
#include "vm/disasm.h"
#include "vm/frontend.h"

namespace {

std::unique_ptr<vm::Module> compile(std::string_view src) {
  vm::CompileError e;
  auto m = vm::compile_source("prog.mini", src, e);
  INFO(e.format());
  REQUIRE(m);
  return m;
}

std::string listing(const vm::Module& m) {
  std::ostringstream out;
  vm::disassemble(m, out);
  return out.str();
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

}  // namespace

TEST_CASE("disasm: the full listing of a small program") {
  auto m = compile(
      "var hits: int = 0;\n"
      "\n"
      "@noinline\n"
      "fn work(a: int[], n: int): int {\n"
      "    var s = 0;\n"
      "    for i in 0..n {\n"
      "        s += a[i];\n"
      "    }\n"
      "    return s;\n"
      "}\n"
      "fn main() { hits += 1; print(\"n\", work(new int[2], 2)); }\n");
  std::string expected =
      "// prog.mini\n"
      "global 0 hits: int = 0\n"
      "\n"
      "fn work(a: int[], n: int): int   @noinline   // line 4, locals 5, max_stack 2\n"
      "  locals: 0 a: int[]  1 n: int  2 s: int  3 i: int  4 $limit0: int\n"
      "  constants: #0 int 0\n"
      "  line 5:\n"
      "       0: ldc          #0          // int 0\n"
      "       3: store        2           // s\n"
      "  line 6:\n"
      "       6: ldc          #0          // int 0\n"
      "       9: store        3           // i\n"
      "      12: load         1           // n\n"
      "      15: store        4           // $limit0\n"
      "      18: load         3           // i\n"
      "      21: load         4           // $limit0\n"
      "      24: if_icmpge    -> 49\n"
      "  line 7:\n"
      "      29: ialoadll     0, 3        // a[i]\n"
      "      34: iaddl        2           // s\n"
      "      37: store        2           // s\n"
      "  line 6:\n"
      "      40: forloop      3, 4 -> 29  // i < $limit0\n"
      "  line 9:\n"
      "      49: load         2           // s\n"
      "      52: vret\n"
      "  loops: [29..40] counted\n"
      "\n"
      "fn main()   // line 11, locals 0, max_stack 2\n"
      "  constants: #0 int 1  #1 int 2\n"
      "  strings: #0 \"n\"\n"
      "  line 11:\n"
      "       0: gload        0           // hits\n"
      "       3: ldc          #0          // int 1\n"
      "       6: iadd\n"
      "       7: gstore       0           // hits\n"
      "      10: ldc          #1          // int 2\n"
      "      13: newarray     0           // int\n"
      "      15: ldc          #1          // int 2\n"
      "      18: call         0           // work(a: int[], n: int): int\n"
      "      21: print        0           // \"n\", int\n"
      "      24: ret\n";
  CHECK(listing(*m) == expected);
}

TEST_CASE("disasm: operands resolve to names and values") {
  auto m = compile(
      "var g: float = -2.5;\n"
      "var on: bool = true;\n"
      "@inline fn f(x: float): float { return x; }\n"
      "fn w() { }\n"
      "fn main(): int {\n"
      "  var k = 0;\n"
      "  k += 3;\n"
      "  while (on) { on = false; }\n"
      "  g = f(g) * 1e20 + 0.1 + 1.0;\n"
      "  var h = spawn w();\n"
      "  join(h);\n"
      "  print(\"a\\tb\", k, g, \"q\\\"\");\n"
      "  var b = new float[1];\n"
      "  b[k] = 1.0;\n"
      "  var x = g;\n"
      "  var y = x * x;\n"
      "  return 0;\n"
      "}\n");
  std::string text = listing(*m);
  INFO(text);
  CHECK(has_line(text, "global 0 g: float = -2.5"));
  CHECK(has_line(text, "global 1 on: bool = true"));
  CHECK(has_line(text, "fn f(x: float): float   @inline   // line 3, locals 1, max_stack 1"));
  CHECK(has_line(text, "fn w()   // line 4, locals 0, max_stack 0"));
  CHECK(has_line(text, "fn main(): int   // line 5, locals 5, max_stack 2"));
  CHECK(has_line(text, "  locals: 0 k: int  1 h: int  2 b: float[]  3 x: float  4 y: float"));
  CHECK(text.find("#2 float 1e+20  #3 float 0.1  #4 float 1.0") != std::string::npos);
  CHECK(has_line(text, "       6: iinc         0, 3        // k += 3"));
  CHECK(text.find("gload        1           // on\n") != std::string::npos);
  CHECK(text.find("gstore       1           // on\n") != std::string::npos);
  CHECK(text.find("call         0           // f(x: float): float\n") != std::string::npos);
  CHECK(text.find("spawn        1           // w()\n") != std::string::npos);
  CHECK(text.find("native       3           // join\n") != std::string::npos);
  CHECK(text.find("print        0           // \"a\\tb\", int, float, \"q\\\"\"\n") != std::string::npos);
  CHECK(text.find("newarray     1           // float\n") != std::string::npos);
  CHECK(text.find("fmulll       3, 3        // x * x\n") != std::string::npos);
  CHECK(text.find("fastorell    2, 0        // b[k] =\n") != std::string::npos);
  CHECK(text.find("  strings: #0 \"a\\tb\"  #1 \"q\\\"\"\n") != std::string::npos);
  CHECK(text.find("  loops: [") != std::string::npos);
  CHECK(text.find("] uncounted\n") != std::string::npos);
  CHECK(text.find("jump         -> ") != std::string::npos);
  CHECK(text.find("iftrue       -> ") != std::string::npos);
}

TEST_CASE("disasm: malformed code is listed up to the first bad byte, never read past the end") {
  vm::Module m;
  auto fn = std::make_unique<vm::Function>();
  fn->name = "bad";
  fn->lines.push_back({0, 1});
  vm::CodeBuilder b(fn->code);
  b.emit(vm::Op::nop);
  b.emit_u16(vm::Op::load, 9);  // no such local
  b.emit_u16(vm::Op::ldc, 4);   // no such constant
  b.u8(0xee);
  b.emit(vm::Op::ret);
  m.functions.push_back(std::move(fn));
  std::ostringstream out;
  vm::disassemble_function(m, *m.functions[0], out);
  std::string text = out.str();
  INFO(text);
  CHECK(has_line(text, "       1: load         9           // <bad local>"));
  CHECK(has_line(text, "       4: ldc          #4          // <bad constant>"));
  CHECK(has_line(text, "       7: <invalid opcode 0xee>"));
  CHECK(text.find("ret") == std::string::npos);

  vm::Function t;
  t.name = "trunc";
  vm::CodeBuilder tb(t.code);
  tb.op(vm::Op::jump);
  tb.u8(1);
  std::ostringstream out2;
  vm::disassemble_function(m, t, out2);
  CHECK(has_line(out2.str(), "       0: jump <truncated>"));
}

namespace {

// `minivm disasm --jit`'s listing of a fixture function compiled with `options`.
std::string jit_listing(size_t fn, const jit::JitOptions& options, runtime::CompiledCode** code) {
  std::vector<jit::AsmLine> insns;
  *code = jit::compile_method(fixtures::fixture_vm().method(fn), options, &insns);
  return jit::format_listing(**code, insns, {}, {});
}

// The listing's row for the instruction at `offset` ("" if there is none).
std::string row_at(const std::string& listing, uint32_t offset) {
  std::string key = fmt::format("+{:#06x}  ", offset);
  size_t at = listing.find(key);
  if (at == std::string::npos) return "";
  size_t begin = listing.rfind('\n', at) + 1;
  return listing.substr(begin, listing.find('\n', at) - begin);
}

}  // namespace

TEST_CASE("disasm --jit: every poll is marked at the offset of the poll table, with what it is for") {
  runtime::CompiledCode* code = nullptr;
  std::string text = jit_listing(fixtures::kSumTo, {}, &code);  // a while loop, then return
  INFO(text);
  REQUIRE(code->polls.size() == 2);
  uint32_t header = uint32_t(code->polls[0].pc - code->begin), ret = uint32_t(code->polls[1].pc - code->begin);
  CHECK(row_at(text, header).find(" ja +0x") != std::string::npos);  // the branch poll's jump to its stub
  CHECK(row_at(text, header).find("<- POLL (loop header)") != std::string::npos);
  CHECK(row_at(text, ret).find("<- POLL (return)") != std::string::npos);
  for (const runtime::PollSite& p : code->polls)  // each poll's stub names its poll
    CHECK(row_at(text, uint32_t(p.stub - code->begin))
              .find(fmt::format("<- slow path of the poll at +{:#x}", uint32_t(p.pc - code->begin))) != std::string::npos);
  CHECK(text.find(fmt::format("poll sites: +{:#x} (loop header) +{:#x} (return)\n", header, ret)) != std::string::npos);
  CHECK(text.find("uncounted loop header") != std::string::npos);
  CHECK(text.find("NO POLL") == std::string::npos);
  // Nothing a reader cannot use: no labels, no raw addresses.
  CHECK(text.find("\nL") == std::string::npos);
  CHECK(text.find(" L1") == std::string::npos);
  for (size_t at = text.find("mov "); at != std::string::npos; at = text.find("mov ", at + 1)) {
    std::string row = text.substr(at, text.find('\n', at) - at);
    for (size_t i = 0, digits = 0; i < row.size(); i++) {
      digits = std::isdigit(static_cast<unsigned char>(row[i])) ? digits + 1 : 0;
      CHECK(digits < 10);  // an address-sized decimal immediate
    }
  }
}

TEST_CASE("disasm --jit: a counted loop with no poll in it is marked at its header") {
  runtime::CompiledCode* code = nullptr;
  jit::JitOptions no_strip;
  no_strip.strip_mining_iters = 0;
  std::string text = jit_listing(fixtures::kCountSum, no_strip, &code);
  INFO(text);
  REQUIRE(code->polls.size() == 1);  // the return's
  CHECK(row_at(text, uint32_t(code->polls[0].pc - code->begin)).find("<- POLL (return)") != std::string::npos);
  CHECK(text.find("<- counted loop header: NO POLL in this loop") != std::string::npos);

  // Strip-mined (the default), the same loop polls at its latch and is not marked.
  text = jit_listing(fixtures::kCountSum, {}, &code);
  REQUIRE(code->polls.size() == 2);
  CHECK(row_at(text, uint32_t(code->polls[0].pc - code->begin)).find("<- POLL (strip-mined latch)") != std::string::npos);
  CHECK(text.find("<- counted loop header\n") != std::string::npos);
  CHECK(text.find("NO POLL") == std::string::npos);
}
