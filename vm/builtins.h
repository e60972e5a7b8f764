// Builtins of Mini v1 (LANGUAGE.md, "Builtins") as the front end sees them.
//
// `print`, `len`, `sqrt`, `atomic_add` and `spawn` compile to opcodes of their own;
// the rest are called through the `native N` opcode with N = NativeId. The runtime
// implements each NativeId (runtime/natives.cpp) with exactly this signature.
#pragma once
#include <cstdint>
#include <string_view>

#include "vm/types.h"

namespace vm {

enum class NativeId : uint16_t { nanotime, sleep_ms, native_spin_ns, join, arraycopy, crc32, count };

// The kind a builtin has in the language contract; the profiler reports frames by it.
enum class BuiltinKind : uint8_t { Native, Intrinsic, Stub };

struct NativeInfo {
  std::string_view name;
  BuiltinKind kind;
  // Parameter letters as in opcodes.def; '*' in arraycopy means "an array", and both
  // arrays must have the same element type (checked by the type checker and verifier).
  std::string_view params;
  Type result;
};

inline constexpr NativeInfo kNatives[] = {
    {"nanotime", BuiltinKind::Native, "", Type::Int},
    {"sleep_ms", BuiltinKind::Native, "I", Type::Void},
    {"native_spin_ns", BuiltinKind::Native, "I", Type::Void},
    {"join", BuiltinKind::Native, "I", Type::Void},
    {"arraycopy", BuiltinKind::Stub, "*I*II", Type::Void},
    {"crc32", BuiltinKind::Stub, "AII", Type::Int},
};
static_assert(sizeof(kNatives) / sizeof(kNatives[0]) == size_t(NativeId::count));

inline const NativeInfo& native_info(NativeId id) { return kNatives[uint16_t(id)]; }

}  // namespace vm
