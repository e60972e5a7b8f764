// Invariants of runtime/ and of the code generators' inputs (MVM_ASSERT): each broken on
// purpose in a child process. A checking build (Debug, sanitizers) aborts there, naming
// the invariant; Release does not evaluate them, and the child ends normally.
#include <catch2/catch.hpp>

#include <asmjit/x86.h>
#include <signal.h>

#include <string>

#include "runtime/alloc_asm.h"
#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame_row.h"
#include "runtime/invariant.h"
#include "runtime/mini_semantics_asm.h"
#include "tests/unit/in_child.h"

namespace {

void check_broken(const std::pair<std::string, int>& child, const char* what) {
  auto& [err, status] = child;
  INFO(err);
  if (runtime::kInvariantsChecked) {
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGABRT);
    CHECK(err.find(std::string("invariant broken: ") + what) != std::string::npos);
  } else {
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

// Emits into a throwaway code buffer.
template <typename F>
void emitting(F emit) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment::host());
  asmjit::x86::Assembler a(&code);
  emit(a);
}

}  // namespace

TEST_CASE("runtime invariants: a blob that overlaps a live one is not registered", "[invariant][registry]") {
  static runtime::CodeBlob live, overlapping;
  const uintptr_t base = uintptr_t(0x7d0000000000);
  live.name = "live";
  live.kind = runtime::BlobKind::stub;
  live.begin = base;
  live.end = base + 0x100;
  overlapping.name = "overlapping";
  overlapping.kind = runtime::BlobKind::stub;
  overlapping.begin = base + 0x80;
  overlapping.end = base + 0x180;
  runtime::register_blob(&live);
  check_broken(in_child([] { runtime::register_blob(&overlapping); }), "a registered blob is a non-empty range");
  runtime::unregister_blob(&live);
}

TEST_CASE("runtime invariants: an enum's name is asked only for its enumerators", "[invariant]") {
  check_broken(in_child([] { (void)runtime::blob_kind_name(runtime::BlobKind(200)); }),
               "a BlobKind is one of its enumerators");
}

TEST_CASE("runtime invariants: a frame row never lists rsp or rbp among its saved registers", "[invariant]") {
  check_broken(in_child([] { (void)runtime::FrameRow::rbp_frame().with_saved(runtime::Reg::rbp, -16); }),
               "a frame row's saved registers are neither rsp");
}

TEST_CASE("runtime invariants: the shared code sequences reject registers they clobber", "[invariant]") {
  using namespace asmjit::x86;
  check_broken(in_child([] { emitting([](Assembler& a) { runtime::emit_float_to_int(a, xmm1); }); }),
               "float-to-int's operand is not xmm1");
  check_broken(in_child([] {
                 emitting([](Assembler& a) {
                   runtime::emit_allocate_array(a, rax, rcx, rax, rdx, a.newLabel());
                 });
               }),
               "the allocation fast path's result, length, scratch and kind registers are four different");
}

TEST_CASE("runtime invariants: a compiled pc desc is looked up inside the code", "[invariant]") {
  static runtime::CompiledCode code;
  code.begin = 0x1000;
  code.end = 0x1040;
  code.pc_descs = {{0, 0, 0, false}};
  CHECK(&code.desc_at(0x103f) == &code.pc_descs[0]);
  check_broken(in_child([] { (void)code.desc_at(0x1040); }), "desc_at is asked about a pc inside the compiled code");
}
