// The value types of Mini v1. Every value occupies one 64-bit slot: int as int64,
// float as the bits of a double, bool as 0/1, arrays as a pointer to a runtime Array.
#pragma once
#include <cstdint>
#include <string_view>

namespace vm {

enum class Type : uint8_t { Void, Int, Float, Bool, IntArray, FloatArray };

inline std::string_view type_name(Type t) {
  switch (t) {
    case Type::Void: return "void";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Bool: return "bool";
    case Type::IntArray: return "int[]";
    case Type::FloatArray: return "float[]";
  }
  return "?";
}

// The letter used for a type in opcodes.def stack effects.
inline char type_letter(Type t) {
  switch (t) {
    case Type::Int: return 'I';
    case Type::Float: return 'F';
    case Type::Bool: return 'Z';
    case Type::IntArray: return 'A';
    case Type::FloatArray: return 'B';
    case Type::Void: return 'V';
  }
  return '?';
}

inline bool is_array(Type t) { return t == Type::IntArray || t == Type::FloatArray; }

}  // namespace vm
