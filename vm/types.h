// The types of Mini. Every value occupies one 64-bit slot: int as int64, float as the
// bits of a double, bool as 0/1, and every reference (an array, a string, an object) as
// a pointer to its heap object (runtime/heap.h), 0 for null.
//
// A Type is a small number. The first ones name the types every program has; every
// other value is an interned composite type (vm/types.cpp): an array of an element type,
// a class or interface with its type arguments, a function type, a type parameter.
// Interning makes two spellings of one type the same number, so types compare with ==.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vm {

// Null is the type of the literal `null` only: it converts to every reference type.
enum class Type : uint32_t { Void, Int, Float, Bool, IntArray, FloatArray, String, Null };
inline constexpr uint32_t kFirstInternedType = 8;

enum class TypeKind : uint8_t { Void, Int, Float, Bool, String, Null, Array, Class, Function, TypeParam };

// What an interned type is made of.
struct TypeInfo {
  TypeKind kind;
  std::string name;         // Class: the class or interface; TypeParam: the parameter
  std::vector<Type> args;   // Class: the type arguments; Function: the parameter types
  Type elem = Type::Void;   // Array: the element type; Function: the result
  std::string owner;        // TypeParam: the class or function that declares it
};

TypeKind type_kind(Type t);
// The parts of a composite type (of an array, class, function type or type parameter).
const TypeInfo& type_info(Type t);

// The interned types. int[] and float[] are IntArray and FloatArray. A process holds at
// most 65,536; one more is a FrontendError (a compile error for the program that asked).
Type array_of(Type elem);
Type class_type(std::string_view name, const std::vector<Type>& args = {});
Type function_type(const std::vector<Type>& params, Type result);
Type type_param(std::string_view owner, std::string_view name);

// As the language writes it: "int", "float[]", "Vector<Shape>", "fn(int): bool".
std::string type_name(Type t);

// The letter used for a type in opcodes.def stack effects ('L' for the reference types
// without a letter of their own: arrays of references, objects, functions).
char type_letter(Type t);
// The type a letter of opcodes.def stands for (Void for the others: '*', '$', 'R', 'L').
Type letter_type(char c);

inline bool is_array(Type t) {
  return t == Type::IntArray || t == Type::FloatArray || (uint32_t(t) >= kFirstInternedType && type_kind(t) == TypeKind::Array);
}
// A slot of this type holds a pointer the collector must see (or null).
inline bool is_reference(Type t) {
  switch (t) {
    case Type::Void: case Type::Int: case Type::Float: case Type::Bool: return false;
    case Type::IntArray: case Type::FloatArray: case Type::String: case Type::Null: return true;
  }
  return type_kind(t) != TypeKind::TypeParam;  // a type parameter's slot depends on its argument
}
// `null` (the type Null) and a value of type `from` can be stored where `to` is expected
// (without classes: subtyping between classes is the type checker's).
inline bool converts_to(Type from, Type to) { return from == to || (from == Type::Null && is_reference(to)); }

}  // namespace vm
