#include "runtime/code_blob.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace runtime {

namespace {
// Registration order (for all_blobs) plus a sorted-by-address snapshot for lookups.
// A new snapshot is built under the lock and published with one atomic store; old
// snapshots are never freed, because a signal handler may still be searching one (they
// are small and few: one per registration).
struct Snapshot {
  size_t count;
  const CodeBlob* const* blobs;  // sorted by begin
};
std::mutex g_register_mutex;
std::vector<const CodeBlob*> g_in_order;
std::atomic<const Snapshot*> g_snapshot{nullptr};
}  // namespace

const char* blob_kind_name(BlobKind k) {
  switch (k) {
    case BlobKind::interpreter: return "interpreter";
    case BlobKind::call_stub: return "call_stub";
    case BlobKind::safepoint_blob: return "safepoint_blob";
    case BlobKind::compiled: return "compiled";
    case BlobKind::stub: return "stub";
  }
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

void register_blob(const CodeBlob* blob) {
  std::lock_guard<std::mutex> lock(g_register_mutex);
  g_in_order.push_back(blob);
  auto* sorted = new const CodeBlob*[g_in_order.size()];
  std::copy(g_in_order.begin(), g_in_order.end(), sorted);
  std::sort(sorted, sorted + g_in_order.size(), [](const CodeBlob* x, const CodeBlob* y) { return x->begin < y->begin; });
  g_snapshot.store(new Snapshot{g_in_order.size(), sorted}, std::memory_order_release);
}

const CodeBlob* find_blob(uintptr_t pc) {
  const Snapshot* snap = g_snapshot.load(std::memory_order_acquire);
  if (snap == nullptr) return nullptr;
  // The last blob that begins at or below pc is the only candidate (blobs do not overlap).
  size_t lo = 0, hi = snap->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (snap->blobs[mid]->begin <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return nullptr;
  const CodeBlob* b = snap->blobs[lo - 1];
  return b->contains(pc) ? b : nullptr;
}

std::vector<const CodeBlob*> all_blobs() {
  std::lock_guard<std::mutex> lock(g_register_mutex);
  return g_in_order;
}

}  // namespace runtime
