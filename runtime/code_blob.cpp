#include "runtime/code_blob.h"

#include <algorithm>

#include "runtime/invariant.h"

namespace runtime {

const char* blob_kind_name(BlobKind k) {
  switch (k) {
    case BlobKind::interpreter: return "interpreter";
    case BlobKind::call_stub: return "call_stub";
    case BlobKind::safepoint_blob: return "safepoint_blob";
    case BlobKind::compiled: return "compiled";
    case BlobKind::stub: return "stub";
    case BlobKind::return_barrier: return "return_barrier";
  }
  MVM_ASSERT(false, "a BlobKind is one of its enumerators");
  return "?";
}

const PcRangeInfo& pc_range_info(PcRangeKind k) {
  using Phase = PcRangeInfo::Phase;
  using Rbp = PcRangeInfo::Rbp;
  static const PcRangeInfo kInfo[] = {
#define PC_RANGE(name, phase, rbp, meaning) {#name, Phase::phase, Rbp::rbp, meaning},
#include "runtime/pc_ranges.def"
#undef PC_RANGE
  };
  return kInfo[size_t(k)];
}

const FrameRow* CodeBlob::frame_row_at(uintptr_t pc) const {
  if (frame_rows.empty() || !contains(pc)) return nullptr;
  uint32_t off = uint32_t(pc - begin);
  auto it = std::upper_bound(frame_rows.begin(), frame_rows.end(), off,
                             [](uint32_t v, const FrameRow& r) { return v < r.offset; });
  return it == frame_rows.begin() ? nullptr : &*(it - 1);
}

const PollSite* CodeBlob::find_poll(uintptr_t pc) const {
  auto it = std::lower_bound(polls.begin(), polls.end(), pc,
                             [](const PollSite& p, uintptr_t v) { return p.pc < v; });
  if (it != polls.end() && it->pc == pc) return &*it;
  return nullptr;
}

const PollSite* CodeBlob::find_poll_resuming_at(uintptr_t resume_pc) const {
  auto it = std::lower_bound(polls.begin(), polls.end(), resume_pc,
                             [](const PollSite& p, uintptr_t v) { return p.resume_pc < v; });
  if (it != polls.end() && it->resume_pc == resume_pc) return &*it;
  return nullptr;
}

const ImplicitNull* CodeBlob::find_implicit_null(uintptr_t pc) const {
  auto it = std::lower_bound(implicit_nulls.begin(), implicit_nulls.end(), pc,
                             [](const ImplicitNull& n, uintptr_t v) { return n.pc < v; });
  if (it != implicit_nulls.end() && it->pc == pc) return &*it;
  return nullptr;
}

int CodeBlob::bytecode_at(uintptr_t pc) const {
  auto it = std::upper_bound(templates.begin(), templates.end(), pc,
                             [](uintptr_t v, const BytecodeTemplate& t) { return v < t.begin; });
  if (it == templates.begin() || pc >= (it - 1)->end) return -1;
  return (it - 1)->opcode;
}

}  // namespace runtime
