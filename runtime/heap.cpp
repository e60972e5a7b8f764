#include "runtime/heap.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "runtime/errors.h"

namespace runtime {

namespace {
char* g_heap_base = nullptr;
size_t g_heap_max = 0;
std::atomic<size_t> g_heap_top{0};
}  // namespace

void init_heap(size_t max_bytes) {
  void* mem = mmap(nullptr, max_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "minivm: cannot reserve a heap of %zu bytes\n", max_bytes);
    std::exit(2);
  }
  g_heap_base = static_cast<char*>(mem);
  g_heap_max = max_bytes;
}

size_t heap_used_bytes() { return g_heap_top.load(std::memory_order_relaxed); }
size_t heap_max_bytes() { return g_heap_max; }

Array* allocate_array(Thread* t, ArrayKind kind, int64_t length) {
  if (length < 0) throw_runtime_error(t, "negative array size " + std::to_string(length));
  // Fresh anonymous memory is zero, and nothing is reused without a collector, so the
  // array comes zeroed for free. 16-byte alignment keeps the data 16-aligned.
  uint64_t max_elems = (g_heap_max - sizeof(Array)) / 8;
  if (uint64_t(length) > max_elems) throw_runtime_error(t, "heap exhausted (new array of " + std::to_string(length) + " elements)");
  size_t bytes = (sizeof(Array) + size_t(length) * 8 + 15) & ~size_t(15);
  size_t at = g_heap_top.fetch_add(bytes, std::memory_order_relaxed);
  if (at + bytes > g_heap_max) {
    g_heap_top.fetch_sub(bytes, std::memory_order_relaxed);
    throw_runtime_error(t, "heap exhausted (" + std::to_string(g_heap_max >> 20) + " MiB in use; no collector yet)");
  }
  auto* a = reinterpret_cast<Array*>(g_heap_base + at);
  a->kind = kind;
  a->length = length;
  return a;
}

}  // namespace runtime
