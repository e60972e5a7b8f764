// The classes of the loaded module as generated code and the collector read them.
//
// An object is a heap value (runtime/heap.h) of kind Object: its header's reserved word
// is its class index, its length word the field count, and field i is the slot at
// kArrayDataOffset + 8 * i. So the heap walks objects as it walks arrays, and a class
// needs no descriptor of its own for that; what the class adds is here: the header
// word a new object gets, its vtable, and which fields hold references.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vm {
struct Module;
}

namespace runtime {

struct Method;

struct ClassShape {
  uint64_t header;          // an object's first word: ArrayKind::Object | class index << 32
  int64_t fields;           // an object's length word: the number of fields
  Method* const* vtable;    // one Method* per method slot, dispatched on the receiver's class
  const uint32_t* refs;     // the fields that hold references (the collector traces them)
  uint32_t ref_count;
  uint32_t index;           // in Module::classes
  const uint64_t* ancestors;  // a bit per class index: set for this class, every superclass and every interface it implements
  Method* const* itable;    // a class's: one Method* per interface selector (vm::ClassInfo::itable), null where none
  uint32_t first_selector;  // an interface's: the selector of its method slot 0
  uint32_t unused;          // a power of two in all
};
static_assert(sizeof(ClassShape) == 64, "generated code indexes the table with a shift by 6");
inline constexpr int32_t kClassShapeHeaderOffset = offsetof(ClassShape, header);
inline constexpr int32_t kClassShapeFieldsOffset = offsetof(ClassShape, fields);
inline constexpr int32_t kClassShapeVtableOffset = offsetof(ClassShape, vtable);
inline constexpr int32_t kClassShapeAncestorsOffset = offsetof(ClassShape, ancestors);
inline constexpr int32_t kClassShapeItableOffset = offsetof(ClassShape, itable);
inline constexpr int32_t kClassShapeFirstSelectorOffset = offsetof(ClassShape, first_selector);
inline constexpr uint32_t kClassShapeShift = 6;

// The loaded module's classes, by class index; generated code loads the table's address
// from here, which stays put while the table is rebuilt for another module (tests).
extern const ClassShape* g_class_shapes;
uint32_t class_count();

// Whether an object of class `c` is a `target` (its class, a superclass or an interface).
inline bool class_is(uint32_t c, uint32_t target) {
  return (g_class_shapes[c].ancestors[target / 64] >> (target % 64) & 1) != 0;
}

// Builds the table for `m` (VM::load, before any thread runs).
void load_classes(const vm::Module& m, Method* const* methods);

}  // namespace runtime
