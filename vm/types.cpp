#include "vm/types.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "vm/lexer.h"

namespace vm {

namespace {

// Interned types live for the whole process, in a fixed table: readers (the JIT's
// compiler thread, the collector) index it without a lock, and a type is published
// (its slot written) before its number is handed out. 65,536 of them, 512 KB: a larger
// table is resident memory under ASan (the profiler test bounds a run's peak).
constexpr uint32_t kMaxTypes = 1u << 16;
std::atomic<const TypeInfo*> g_types[kMaxTypes];
std::atomic<uint32_t> g_count{kFirstInternedType};
std::mutex g_mutex;  // interning
using Key = std::tuple<TypeKind, std::string, std::vector<Type>, Type, std::string>;
std::map<Key, Type>& g_index() {
  static std::map<Key, Type> index;
  return index;
}

Type intern(TypeInfo info) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Key key{info.kind, info.name, info.args, info.elem, info.owner};
  auto it = g_index().find(key);
  if (it != g_index().end()) return it->second;
  uint32_t id = g_count.load(std::memory_order_relaxed);
  if (id >= kMaxTypes)  // a compile error for the program that needs one more (the front end's only carrier)
    throw FrontendError{SourcePos{1, 1}, fmt::format("too many distinct types in this process (at most {})", kMaxTypes)};
  g_types[id].store(new TypeInfo(std::move(info)), std::memory_order_release);
  g_count.store(id + 1, std::memory_order_release);
  g_index().emplace(std::move(key), Type(id));
  return Type(id);
}

}  // namespace

TypeKind type_kind(Type t) {
  switch (t) {
    case Type::Void: return TypeKind::Void;
    case Type::Int: return TypeKind::Int;
    case Type::Float: return TypeKind::Float;
    case Type::Bool: return TypeKind::Bool;
    case Type::IntArray: case Type::FloatArray: return TypeKind::Array;
    case Type::String: return TypeKind::String;
    case Type::Null: return TypeKind::Null;
  }
  return type_info(t).kind;
}

const TypeInfo& type_info(Type t) {
  static const TypeInfo kIntArray{TypeKind::Array, "", {}, Type::Int, ""};
  static const TypeInfo kFloatArray{TypeKind::Array, "", {}, Type::Float, ""};
  static const TypeInfo kSimple{TypeKind::Void, "", {}, Type::Void, ""};
  if (t == Type::IntArray) return kIntArray;
  if (t == Type::FloatArray) return kFloatArray;
  uint32_t id = uint32_t(t);
  if (id < kFirstInternedType || id >= kMaxTypes) return kSimple;
  const TypeInfo* info = g_types[id].load(std::memory_order_acquire);
  return info != nullptr ? *info : kSimple;
}

Type array_of(Type elem) {
  if (elem == Type::Int) return Type::IntArray;
  if (elem == Type::Float) return Type::FloatArray;
  return intern({TypeKind::Array, "", {}, elem, ""});
}
Type class_type(std::string_view name, const std::vector<Type>& args) {
  return intern({TypeKind::Class, std::string(name), args, Type::Void, ""});
}
Type function_type(const std::vector<Type>& params, Type result) {
  return intern({TypeKind::Function, "", params, result, ""});
}
Type type_param(std::string_view owner, std::string_view name) {
  return intern({TypeKind::TypeParam, std::string(name), {}, Type::Void, std::string(owner)});
}

std::string type_name(Type t) {
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
  const TypeInfo& info = type_info(t);
  switch (info.kind) {
    case TypeKind::Array: {
      std::string elem = type_name(info.elem);
      // A function type's element needs parentheses: (fn(int): int)[].
      return type_kind(info.elem) == TypeKind::Function ? "(" + elem + ")[]" : elem + "[]";
    }
    case TypeKind::Class: {
      std::string out = info.name;
      for (size_t i = 0; i < info.args.size(); i++) out += (i ? ", " : "<") + type_name(info.args[i]);
      return info.args.empty() ? out : out + ">";
    }
    case TypeKind::Function: {
      std::string out = "fn(";
      for (size_t i = 0; i < info.args.size(); i++) out += (i ? ", " : "") + type_name(info.args[i]);
      out += ")";
      return info.elem == Type::Void ? out : out + ": " + type_name(info.elem);
    }
    case TypeKind::TypeParam: return info.name;
    default: return "?";
  }
}

char type_letter(Type t) {
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
  return 'L';
}

Type letter_type(char c) {
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

}  // namespace vm
