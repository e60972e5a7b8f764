#include "jit/poll_sites.h"

namespace jit {

namespace {

// The same inlined instance of a body: the same chain of callers (every scope but the
// innermost).
bool same_instance(const runtime::ScopeChain& a, const runtime::ScopeChain& b) {
  if (a.count != b.count || a[0].method != b[0].method) return false;
  for (uint32_t k = 1; k < a.count; k++)
    if (a[k].method != b[k].method || a[k].bci != b[k].bci) return false;
  return true;
}

}  // namespace

std::vector<PollSiteInfo> poll_sites(const runtime::CompiledCode& code) {
  std::vector<PollSiteInfo> out;
  for (const runtime::PollSite& p : code.polls) {
    // compile_method records a safepoint pc desc at every poll, kept under every
    // --debug-info setting: the scopes at the poll are the poll's own.
    runtime::ScopeChain scopes = code.scopes_at(p.pc);
    out.push_back({uint32_t(p.pc - code.begin),
                   runtime::compiled_poll_kind(*scopes[0].method->function, uint32_t(scopes[0].bci)), scopes,
                   uint32_t(p.stub - code.begin)});
  }
  return out;
}

std::vector<LoopSite> loop_sites(const runtime::CompiledCode& code) {
  std::vector<PollSiteInfo> polls = poll_sites(code);
  std::vector<LoopSite> out;
  for (const runtime::PcDesc& d : code.pc_descs) {
    runtime::ScopeChain scopes = code.scope_chain(d);
    if (scopes.count == 0) continue;
    const runtime::Scope& s = scopes[0];
    for (const vm::LoopEntry& loop : s.method->function->loops) {
      // The first desc in the loop is where its code starts: the header's own, or, when
      // the header's instruction emitted nothing (an operand fused into the next one),
      // the next instruction's at the same pc. Not a poll's or a call's further in,
      // which is all --debug-info=safepoints keeps.
      if (s.bci < int32_t(loop.header_bci) || s.bci > int32_t(loop.latch_bci)) continue;
      if (s.bci != int32_t(loop.header_bci) && d.safepoint) continue;
      bool seen = false;
      for (const LoopSite& l : out) seen |= l.loop == &loop && same_instance(l.scopes, scopes);
      if (seen) continue;
      bool has_poll = false;
      for (const PollSiteInfo& p : polls)
        has_poll |= same_instance(p.scopes, scopes) && p.scopes[0].bci >= int32_t(loop.header_bci) &&
                    p.scopes[0].bci <= int32_t(loop.latch_bci);
      out.push_back({d.pc_offset, &loop, scopes, has_poll});
    }
  }
  return out;
}

}  // namespace jit
