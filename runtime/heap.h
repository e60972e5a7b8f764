// The heap: arrays, allocated by the runtime and never freed (there is no collector).
// Every allocation goes through allocate_array() with the thread's anchor set: the
// point where a collector could stop the thread and find its roots.
#pragma once
#include <cstddef>
#include <cstdint>

namespace runtime {

class Thread;

enum class ArrayKind : uint32_t { Int = 0, Float = 1 };

struct Array {
  ArrayKind kind;
  uint32_t reserved;
  int64_t length;
  int64_t data[];  // int64 or double bits
};
inline constexpr int32_t kArrayLengthOffset = 8;
inline constexpr int32_t kArrayDataOffset = 16;

// Reserves the heap's address range (no memory is committed until touched).
void init_heap(size_t max_bytes);
size_t heap_used_bytes();
size_t heap_max_bytes();

// Allocates a zeroed array; a negative length or an exhausted heap is a Mini runtime
// error on `t` (which does not return).
Array* allocate_array(Thread* t, ArrayKind kind, int64_t length);

}  // namespace runtime
