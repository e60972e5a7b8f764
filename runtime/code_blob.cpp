#include "runtime/code_blob.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace runtime {

namespace {
// Append-only: a reader loads the count with acquire and sees fully published entries.
constexpr size_t kMaxBlobs = 1 << 16;
const CodeBlob* g_blobs[kMaxBlobs];
std::atomic<size_t> g_blob_count{0};
std::mutex g_register_mutex;
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

const PollSite* CodeBlob::find_poll(uintptr_t pc) const {
  auto it = std::lower_bound(polls.begin(), polls.end(), pc,
                             [](const PollSite& p, uintptr_t v) { return p.pc < v; });
  if (it != polls.end() && it->pc == pc) return &*it;
  return nullptr;
}

void register_blob(const CodeBlob* blob) {
  std::lock_guard<std::mutex> lock(g_register_mutex);
  size_t n = g_blob_count.load(std::memory_order_relaxed);
  if (n == kMaxBlobs) {
    std::fprintf(stderr, "minivm: internal error: code blob registry full\n");
    std::abort();
  }
  g_blobs[n] = blob;
  g_blob_count.store(n + 1, std::memory_order_release);
}

const CodeBlob* find_blob(uintptr_t pc) {
  size_t n = g_blob_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++)
    if (g_blobs[i]->contains(pc)) return g_blobs[i];
  return nullptr;
}

std::vector<const CodeBlob*> all_blobs() {
  size_t n = g_blob_count.load(std::memory_order_acquire);
  return std::vector<const CodeBlob*>(g_blobs, g_blobs + n);
}

}  // namespace runtime
