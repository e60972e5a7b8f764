#include "runtime/compiled_code.h"

#include <algorithm>

#include "runtime/invariant.h"
#include "runtime/stack_walker.h"

namespace runtime {

FrameKind ScopeChain::kind(uint32_t k) const { return k + 1 == count ? FrameKind::jit : FrameKind::inlined; }

const PcDesc& CompiledCode::desc_at(uintptr_t pc) const {
  MVM_ASSERT(contains(pc), "desc_at is asked about a pc inside the compiled code");
  uint32_t off = uint32_t(pc - begin);
  auto it = std::upper_bound(pc_descs.begin(), pc_descs.end(), off,
                             [](uint32_t v, const PcDesc& d) { return v < d.pc_offset; });
  MVM_ASSERT(it != pc_descs.begin(), "the first pc desc begins at offset 0: every pc of the code has one");
  return *(it - 1);
}

const GcMap* CompiledCode::gc_map_at(uintptr_t pc) const {
  if (!contains(pc)) return nullptr;
  uint32_t off = uint32_t(pc - begin);
  auto it = std::lower_bound(gc_maps.begin(), gc_maps.end(), off,
                             [](const GcMap& m, uint32_t v) { return m.pc_offset < v; });
  return it != gc_maps.end() && it->pc_offset == off ? &*it : nullptr;
}

}  // namespace runtime
