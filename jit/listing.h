// `minivm disasm --jit`: a compiled method's machine code as a reader wants it, each
// instruction at its offset from the code's start (the numbers the poll table and the
// profiler's tools print), the source line it belongs to above the code of that line,
// every poll and every loop header marked, and nothing that means nothing to a reader
// (labels become the offsets they stand for, runtime entry points their names).
#pragma once
#include <asmjit/core.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/compiled_code.h"

namespace jit {

// One emitted instruction: where it starts and asmjit's text for it.
struct AsmLine {
  uint32_t offset;
  std::string text;
};

// Set on an assembler (after it is attached to its CodeHolder), records every
// instruction it emits with its offset, and where each label is bound.
class ListingLogger : public asmjit::Logger {
 public:
  explicit ListingLogger(const asmjit::BaseAssembler& a) : a_(a) {}
  // The instructions, each label operand (L12) replaced by its offset (+0x5d).
  std::vector<AsmLine> lines() const;

 protected:
  asmjit::Error _log(const char* data, size_t size) noexcept override;

 private:
  const asmjit::BaseAssembler& a_;
  std::vector<AsmLine> lines_;
  std::vector<std::pair<std::string, uint32_t>> labels_;  // "L12" -> offset
};

struct ListingOptions {
  bool pc_table = false;  // also print the debug info, pc by pc
};

// The listing of `code` from the instructions its compilation logged; `source` is the
// program's text, line 1 first (its lines are quoted above their code).
std::string format_listing(const runtime::CompiledCode& code, const std::vector<AsmLine>& insns,
                           const std::vector<std::string_view>& source, const ListingOptions& options);

}  // namespace jit
