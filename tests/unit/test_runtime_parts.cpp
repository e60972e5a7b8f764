// Runtime pieces that need no running thread: value formatting, CRC-32, the code-blob
// registry.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "runtime/code_blob.h"
#include "runtime/gc_roots.h"
#include "runtime/method.h"
#include "vm/bytecode.h"
#include "runtime/natives.h"
#include "runtime/value_format.h"

using runtime::append_float;

static std::string fmt_float(double d) {
  std::string s;
  append_float(s, d);
  return s;
}

TEST_CASE("value format: floats print as the shortest round-trip text") {
  CHECK(fmt_float(1.0) == "1.0");
  CHECK(fmt_float(0.1) == "0.1");
  CHECK(fmt_float(0.1 + 0.2) == "0.30000000000000004");
  CHECK(fmt_float(1e20) == "1e+20");
  CHECK(fmt_float(1e-7) == "1e-07");
  CHECK(fmt_float(-0.0) == "-0.0");
  CHECK(fmt_float(123456.789) == "123456.789");
  CHECK(fmt_float(100.0) == "100.0");
  CHECK(fmt_float(std::nan("")) == "nan");
  CHECK(fmt_float(-std::nan("")) == "nan");
  CHECK(fmt_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(fmt_float(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("value format: ints, bools") {
  std::string s;
  runtime::append_value(s, vm::Type::Int, std::numeric_limits<int64_t>::min());
  s += ' ';
  runtime::append_value(s, vm::Type::Bool, 1);
  s += ' ';
  runtime::append_value(s, vm::Type::Bool, 0);
  CHECK(s == "-9223372036854775808 true false");
}

TEST_CASE("natives: crc32 matches zlib's check value") {
  const char* text = "123456789";
  int64_t data[9];
  for (int i = 0; i < 9; i++) data[i] = text[i] + 256 * i;  // only the low 8 bits count
  CHECK(runtime::crc32_of_low_bytes(data, 9) == 0xCBF43926u);
  CHECK(runtime::crc32_of_low_bytes(data, 0) == 0u);
}

TEST_CASE("code blobs: lookup by pc") {
  static runtime::CodeBlob a, b;
  a.name = "a";
  a.kind = runtime::BlobKind::stub;
  a.begin = 0x1000;
  a.end = 0x1100;
  b.name = "b";
  b.kind = runtime::BlobKind::stub;
  b.begin = 0x1100;
  b.end = 0x1200;
  b.polls = {{0x1110, 0x1113}, {0x1180, 0x1183}};
  runtime::register_blob(&a);
  runtime::register_blob(&b);
  CHECK(runtime::find_blob(0x1000) == &a);
  CHECK(runtime::find_blob(0x10ff) == &a);
  CHECK(runtime::find_blob(0x1100) == &b);
  CHECK(runtime::find_blob(0x1200) == nullptr);
  REQUIRE(b.find_poll(0x1180) != nullptr);
  CHECK(b.find_poll(0x1180)->resume_pc == 0x1183);
  CHECK(b.find_poll(0x1181) == nullptr);
}

TEST_CASE("gc roots: a bad root is named by its frame, slot and thread") {
  using runtime::RootKind;
  using runtime::RootSource;
  vm::Function fn;
  fn.name = "worker";
  runtime::Method m{};
  m.function = &fn;
  CHECK(runtime::describe(RootSource{RootKind::global, -1, nullptr, -1, 0, 3}) == "global 3");
  CHECK(runtime::describe(RootSource{RootKind::vm_result, 2}) == "vm_result of thread 2");
  CHECK(runtime::describe(RootSource{RootKind::interp_expr, 0, &m, 51, 0, 2}) ==
        "expression value 2 of worker at bci 51 in thread 0");
  CHECK(runtime::describe(RootSource{RootKind::compiled_slot, 4, &m, 51, 0x25b, -104}) ==
        "compiled slot [rbp-104] of worker at bci 51 (pc +0x25b) in thread 4");
  CHECK(runtime::describe(RootSource{RootKind::compiled_register, 1, &m, 7, 0x10, 3}) ==
        "compiled register 3 (saved at a poll) of worker at bci 7 (pc +0x10) in thread 1");
}
