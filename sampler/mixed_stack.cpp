#include "sampler/mixed_stack.h"

#include <utility>
#include <vector>

#include "runtime/code_blob.h"

namespace sampler {

size_t classify(const jit::NativeFrame* frames, size_t n, bool first_exact, CompactFrame* out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uintptr_t pc = frames[i].pc;
    // A return address is the instruction after a call: pc - 1 is in the call, in the
    // caller's code (for a call ending a function, the next function starts at pc).
    uintptr_t at = i == 0 && first_exact ? pc : pc - 1;
    const runtime::CodeBlob* blob = runtime::find_blob(at);
    if (blob == nullptr) {
      out[k++] = CompactFrame{nullptr, nullptr, -1, FrameKind::cpp, at};
      continue;
    }
    switch (blob->kind) {
      case runtime::BlobKind::call_stub: out[k++] = CompactFrame{nullptr, blob->name.c_str(), -1, FrameKind::stub}; break;
      case runtime::BlobKind::interpreter:
      case runtime::BlobKind::compiled:
      case runtime::BlobKind::stub: out[k++] = CompactFrame{nullptr, nullptr, -1, FrameKind::jit}; break;
      case runtime::BlobKind::safepoint_blob:
      case runtime::BlobKind::return_barrier: break;
    }
  }
  return k;
}

size_t below_safepoint_blob(const jit::NativeFrame* frames, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const runtime::CodeBlob* blob = runtime::find_blob(frames[i].pc - 1);
    if (blob != nullptr && blob->kind == runtime::BlobKind::safepoint_blob) return i + 1;
  }
  return n;
}

size_t physical_frames(const CompactTrace& mini) {
  size_t n = 0;
  for (const CompactFrame& f : mini) n += f.kind != FrameKind::inlined;
  return n;
}

size_t through_top_markers(const CompactTrace& native, size_t markers) {
  size_t seen = 0;
  for (size_t i = 0; i < native.size(); i++)
    if (is_mini_marker(native[i]) && ++seen == markers) return i + 1;
  return native.size();
}

std::optional<Reason> interleave(const CompactTrace& native, const CompactTrace& mini, size_t shared, size_t markers,
                                 bool native_on_top, CompactTrace& out) {
  out.clear();
  size_t walked = 0;
  for (const CompactFrame& f : native) walked += is_mini_marker(f);
  // mini's physical frames from the bottom: [begin, end) of each, its inlined scopes above it.
  std::vector<std::pair<size_t, size_t>> groups;
  for (size_t end = mini.size(); end > 0;) {
    size_t begin = end - 1;
    while (begin > 0 && mini[begin - 1].kind == FrameKind::inlined) begin--;
    groups.emplace_back(begin, end);
    end = begin;
  }
  if (walked != markers || shared > groups.size() || shared > markers) return Reason::native_walk_mismatch;
  CompactTrace up;  // bottom first
  auto add_group = [&](size_t g) {
    for (size_t i = groups[g].second; i-- > groups[g].first;) up.push_back(mini[i]);
  };
  CompactTrace over;  // the C/C++ frames above the last shared physical frame, bottom first
  size_t passed = 0;
  for (size_t i = native.size(); i-- > 0;) {
    const CompactFrame& f = native[i];
    if (is_mini_marker(f)) {
      if (++passed > shared) break;
      add_group(passed - 1);
    } else if (passed == shared) {
      over.push_back(f);
    } else {
      up.push_back(f);
    }
  }
  if (!native_on_top) up.insert(up.end(), over.begin(), over.end());
  for (size_t g = shared; g < groups.size(); g++) add_group(g);
  if (native_on_top) up.insert(up.end(), over.begin(), over.end());
  out.assign(up.rbegin(), up.rend());
  return std::nullopt;
}

}  // namespace sampler
