#include "jit/llvm_unwind.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "jit/dwarf_cfi.h"

#ifndef MINIVM_LLVM_UNWIND_DIR
#define MINIVM_LLVM_UNWIND_DIR "/usr/lib/llvm-16/lib"
#endif
#ifndef MINIVM_LLVM_UNWIND_LIBRARY
#define MINIVM_LLVM_UNWIND_LIBRARY MINIVM_LLVM_UNWIND_DIR "/libunwind.so"
#endif

namespace jit {

// RTLD_LOCAL keeps its _Unwind_* out of the global scope: libstdc++ keeps resolving them
// to libgcc_s (see llvm_unwind.h for why that matters).
const LlvmUnwind* llvm_unwind() {
  static const LlvmUnwind* lib = [] () -> const LlvmUnwind* {
    const char* candidates[] = {MINIVM_LLVM_UNWIND_DIR "/libunwind.so.1", MINIVM_LLVM_UNWIND_LIBRARY, "libunwind.so.1"};
    for (const char* path : candidates) {
      void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      auto* u = new LlvmUnwind{
          reinterpret_cast<int (*)(unw_context_t*)>(dlsym(h, "unw_getcontext")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_context_t*)>(dlsym(h, "unw_init_local")),
          reinterpret_cast<int (*)(unw_cursor_t*)>(dlsym(h, "unw_step")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_regnum_t, unw_word_t*)>(dlsym(h, "unw_get_reg")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_regnum_t, unw_word_t)>(dlsym(h, "unw_set_reg")),
          reinterpret_cast<void (*)(unw_word_t)>(dlsym(h, "__unw_add_dynamic_fde")),
          reinterpret_cast<void (*)(unw_word_t)>(dlsym(h, "__unw_remove_dynamic_fde")),
      };
      // __unw_add_dynamic_fde exists only in LLVM's libunwind (not in the nongnu one).
      if (u->getcontext && u->init_local && u->step && u->get_reg && u->set_reg && u->add_dynamic_fde &&
          u->remove_dynamic_fde)
        return u;
      delete u;
      dlclose(h);
    }
    return nullptr;
  }();
  return lib;
}

namespace {

struct Registered {
  std::unique_ptr<uint64_t[]> bytes;
  uintptr_t fde;
};
std::mutex g_frames_mutex;
// By the code's first address; the map itself is never freed (exit hooks may still walk).
auto* g_frames = new std::map<uintptr_t, Registered>();

}  // namespace

bool register_with_libunwind(const char* name, uintptr_t begin, uintptr_t end,
                             const std::vector<runtime::FrameRow>& rows, bool signal_frame) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return false;
  if (end <= begin || !frame_rows_valid(end - begin, rows)) {
    std::fprintf(stderr, "minivm: internal error: bad unwind rows for %s\n", name);
    return false;
  }
  std::vector<uint8_t> bytes = encode_eh_frame(begin, end, rows, signal_frame);
  // libunwind keeps a pointer to the FDE (and reads its CIE again at every step): the
  // bytes live as long as the code they describe.
  auto mem = std::make_unique<uint64_t[]>((bytes.size() + 7) / 8);
  std::memcpy(mem.get(), bytes.data(), bytes.size());
  uint32_t cie_length;
  std::memcpy(&cie_length, bytes.data(), 4);
  uintptr_t fde = reinterpret_cast<uintptr_t>(mem.get()) + 4 + cie_length;
  {
    std::lock_guard<std::mutex> lock(g_frames_mutex);
    auto old = g_frames->find(begin);
    if (old != g_frames->end()) u->remove_dynamic_fde(old->second.fde);  // before its bytes go
    (*g_frames)[begin] = Registered{std::move(mem), fde};
    u->add_dynamic_fde(fde);
  }
  return true;
}

void unregister_from_libunwind(uintptr_t begin) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return;
  std::lock_guard<std::mutex> lock(g_frames_mutex);
  auto it = g_frames->find(begin);
  if (it == g_frames->end()) return;
  u->remove_dynamic_fde(it->second.fde);
  g_frames->erase(it);
}

}  // namespace jit
