// Where a compiled method polls, and which of its loops never do, read back from the
// tables compile_method leaves on the blob (its poll table and its debug info): the one
// place tools (`minivm disasm --jit`) learn what each poll is for, so they cannot
// disagree with the code about it.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/compiled_code.h"
#include "runtime/poll_lines.h"
#include "vm/bytecode.h"

namespace jit {

struct PollSiteInfo {
  uint32_t offset;            // of the deciding `ja`, from the code's start (PollSite::pc)
  runtime::PollKind kind;     // runtime::compiled_poll_kind: loop header, return or strip-mined latch
  runtime::ScopeChain scopes;  // where it is, innermost first
  uint32_t stub_offset;       // of its out-of-line slow path (PollSite::stub)
};

// One loop whose header is in the compiled code (the method's own or an inlined body's).
struct LoopSite {
  uint32_t header_offset;      // where the header's code starts
  const vm::LoopEntry* loop;
  runtime::ScopeChain scopes;  // the header, innermost first
  bool has_poll;               // a poll site of this code lies in the loop's bytecode range
};

// Every poll of `code`, by offset.
std::vector<PollSiteInfo> poll_sites(const runtime::CompiledCode& code);
// Every loop whose header has debug info in `code`, by header offset (with
// --debug-info=safepoints only the headers that poll are found).
std::vector<LoopSite> loop_sites(const runtime::CompiledCode& code);

}  // namespace jit
