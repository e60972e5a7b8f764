// Mini strings (LANGUAGE.md, "Strings"): immutable byte sequences. A string is an Array
// of kind String (runtime/heap.h) whose length is its byte count; a slot holds a pointer
// to it, or 0 for null.
//
// A string literal is a permanent string: made once when the module is loaded, outside
// the collected heap, and never freed; the collector knows such pointers by their range
// (which holds the permanent function values too).
// Every other string (from +, substring, string(x)) is a heap object like an array.
#pragma once
#include <cstdint>
#include <string_view>

#include "runtime/heap.h"

namespace runtime {

class Thread;

inline std::string_view string_bytes(const Array* s) {
  return {reinterpret_cast<const char*>(s->data), size_t(s->length)};
}

// A new heap string holding `bytes` (may collect: the caller has its anchor set, in the VM).
Array* make_string(Thread* t, std::string_view bytes);

// The permanent string holding `text`, made on first use (when loading a module; one
// string per distinct text). Not thread safe: the VM loads modules before threads run.
const Array* permanent_string(std::string_view text);
// Permanent memory for the values a module's literals name (strings, and the values of
// top-level functions: runtime/closures.h), never freed; 16-aligned `bytes`.
char* permanent_room(size_t bytes);
// The permanent strings of no byte and of each single byte, made once by
// make_short_strings (when the first module loads). Every string operation that yields
// at most one byte returns one of them rather than allocating: substring(s, i, i + 1) is
// how a parser reads a character (Are We Fast Yet's Json does, 25,820 times a parse),
// and no program can tell, since strings compare by content and cannot be written.
void make_short_strings();
const Array* short_string(std::string_view bytes);  // bytes.size() <= 1
// Whether `p` points at a permanent value (at a safepoint, or while loading).
bool is_permanent(const void* p);

}  // namespace runtime
