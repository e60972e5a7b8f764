// The value types of Mini as the bytecode sees them. Every value occupies one 64-bit
// slot: int as int64, float as the bits of a double, bool as 0/1, and every reference
// (an array, a string) as a pointer to its heap object (runtime/heap.h), 0 for null.
#pragma once
#include <cstdint>
#include <string_view>

namespace vm {

// Null is the type of the literal `null` only: it converts to every reference type.
enum class Type : uint8_t { Void, Int, Float, Bool, IntArray, FloatArray, String, Null };

inline std::string_view type_name(Type t) {
  switch (t) {
    case Type::Void: return "void";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Bool: return "bool";
    case Type::IntArray: return "int[]";
    case Type::FloatArray: return "float[]";
    case Type::String: return "string";
    case Type::Null: return "null";
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
    case Type::String: return 'S';
    case Type::Null: return 'N';
    case Type::Void: return 'V';
  }
  return '?';
}

// The type a letter of opcodes.def stands for (Void for the others: '*', '$', 'R').
inline Type letter_type(char c) {
  switch (c) {
    case 'I': return Type::Int;
    case 'F': return Type::Float;
    case 'Z': return Type::Bool;
    case 'A': return Type::IntArray;
    case 'B': return Type::FloatArray;
    case 'S': return Type::String;
    case 'N': return Type::Null;
  }
  return Type::Void;
}

inline bool is_array(Type t) { return t == Type::IntArray || t == Type::FloatArray; }
// A slot of this type holds a pointer the collector must see (or null).
inline bool is_reference(Type t) { return is_array(t) || t == Type::String || t == Type::Null; }
// `null` (the type Null) and a value of type `from` can be stored where `to` is expected.
inline bool converts_to(Type from, Type to) { return from == to || (from == Type::Null && is_reference(to)); }

}  // namespace vm
