// The heap: arrays and strings, bump-allocated in thread-local allocation buffers (TLABs)
// and reclaimed by the mark-sweep collector (runtime/gc.h) at global safepoints.
//
// Generations without moving: what was allocated since the last collection is young, the
// rest old. The heap records the ranges it carved since (the young regions) and keeps a
// card table, which the write barrier (runtime/barrier_asm.h, mark_card) dirties for every
// reference stored into an object, so that a young collection can find the old objects
// that may reference young ones without tracing the old generation.
//
// Layout: one reserved address range of `--heap` bytes. Below the high-water mark every
// byte belongs to an array, a string or a free chunk (an Array of kind Free), so the
// collector can walk the heap object by object. Free space is kept as address-ordered ranges;
// TLABs and large arrays are carved from the lowest one that fits, which keeps the
// heap compact and its resident memory near the live set plus one allocation budget.
// Allocation in generated code is the TLAB bump (runtime/alloc_asm.h); everything else
// goes through allocate_array(), with the thread's anchor set: a collection may run there.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace runtime {

class Thread;

// What a heap object is. Int and Float are newarray's operand (generated code stores it).
enum class ArrayKind : uint32_t {
  Int = 0,
  Float = 1,
  Free = 2,    // not an array: a free chunk (or a retired TLAB's tail), `length` 8-byte words after the header
  String = 3,  // a Mini string: `length` bytes, immutable once made (runtime/strings.h)
  Object = 4,  // an object: `reserved` is its class, `length` its field count (runtime/classes.h)
  Ref = 5,     // an array of references (a bool array is an Int one: its elements are 0 and 1)
  Closure = 6, // a function value: `reserved` is its function, data[0] its Method*, then its captures (runtime/closures.h)
};
inline constexpr uint32_t kArrayKindCount = 7;

struct Array {
  ArrayKind kind;
  uint32_t reserved;  // an object's class index, else 0 (the collector marks in a side bitmap)
  int64_t length;     // elements; a string's bytes; an object's fields
  int64_t data[];     // int64 or double bits; a string's bytes; an object's fields
};
inline constexpr int32_t kObjectClassOffset = 4;
inline constexpr int32_t kArrayLengthOffset = 8;
inline constexpr int32_t kArrayDataOffset = 16;
inline constexpr size_t kObjectAlignment = 16;

// The bytes an array of `length` elements occupies (header included, 16-aligned).
constexpr size_t array_bytes(int64_t length) { return (sizeof(Array) + size_t(length) * 8 + 15) & ~size_t(15); }
// The bytes an object of `kind` and `length` occupies (header included, 16-aligned).
constexpr size_t object_bytes(ArrayKind kind, int64_t length) {
  if (kind == ArrayKind::String) return (sizeof(Array) + size_t(length) + 15) & ~size_t(15);
  return array_bytes(length);
}

// TLABs: refilled in chunks of kTlabBytes; arrays of more than kMaxTlabLength elements
// are carved one by one (and never take the generated fast path).
inline constexpr size_t kTlabBytes = 64 * 1024;
inline constexpr int64_t kMaxTlabLength = 2048;

// Reserves the heap's address range (no memory is committed until touched).
void init_heap(size_t max_bytes);
size_t heap_max_bytes();
// Bytes live after the last collection plus everything handed out since.
size_t heap_used_bytes();

// Allocates a zeroed array (or string of `length` bytes) on `t` (the slow path: refills
// t's TLAB or carves a large object; when the allocation budget is spent or nothing
// fits, a collection, whose safepoint makes this allocation before any other thread
// resumes). A negative length, or live objects that leave no room for it even after that
// collection, is a Mini runtime error (no return).
Array* allocate_array(Thread* t, ArrayKind kind, int64_t length);

// A new object of class `class_index` with `fields` zeroed fields (as allocate_array).
Array* allocate_object(Thread* t, uint32_t class_index, int64_t fields);

// Ends t's TLAB: its unused tail becomes a free chunk. At thread end and before a
// collection walks the heap.
void retire_tlab(Thread* t);

// The card table: one byte per kCardBytes of heap, 1 when a reference was stored since the
// last collection into an object whose header lies in that card (the object's start, not
// the field's address: a young collection rescans the whole object).
inline constexpr int kCardShift = 9;
inline constexpr size_t kCardBytes = size_t(1) << kCardShift;
// The table's address minus the heap's base >> kCardShift: the card of `p` is
// card_table_biased()[p >> kCardShift]. Every thread's ThreadCore holds it for generated code.
uint8_t* card_table_biased();
// The write barrier of runtime code that stores a reference into a heap object.
inline void mark_card(const void* object) { card_table_biased()[uintptr_t(object) >> kCardShift] = 1; }

// --- for the collector (gc.cpp), at a safepoint only ---
// Heads [begin, end) as a free chunk, so that a walk of the heap steps over it.
void write_free_chunk(char* begin, char* end);
struct HeapWalk {
  char* begin;
  char* end;  // the high-water mark: every byte below is an array or a free chunk
};
// Makes the heap walkable (writes a free chunk over every free range below the
// high-water mark; the TLABs are retired, so their tails are chunks) and returns its extent.
HeapWalk heap_prepare_walk();
// Rebuilds the free ranges from the sweep's result: `free` sorted, each range a run of
// dead or free chunks; `live_bytes` what survived. Lowers the high-water mark to the end
// of the last live array and returns the memory above it to the kernel.
struct FreeRange {
  char* begin;
  char* end;
};
void heap_after_sweep(std::vector<FreeRange> free, size_t live_bytes);
// The young collection's side. The ranges carved since the last collection, address-ordered:
// every young object lies in one, and nothing else does but free chunks.
const std::vector<FreeRange>& heap_young_regions();
// The start of every dirty card below the high-water mark (address-ordered).
std::vector<char*> heap_dirty_cards();
// Adds the dead space a young sweep found in the young regions to the free ranges;
// `survivor_bytes` is what survived there (the old generation grows by it).
void heap_after_young_sweep(std::vector<FreeRange> free, size_t survivor_bytes);
// Whether the old generation (what survived the collections since the last full one,
// some of it dead by now) has outgrown its limit: twice what the last full collection
// left live, and never less than that plus kYoungBudget bytes.
bool heap_old_generation_full();
// How many bytes may be handed out before the next collection is due.
size_t heap_allocation_budget();

}  // namespace runtime
