#include "tests/fuzz/gen_types.h"

#include <set>

namespace minigen {

namespace {

TypeP make(Kind k) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  return t;
}

}  // namespace

TypeP void_type() {
  static const TypeP t = make(Kind::Void);
  return t;
}
TypeP int_type() {
  static const TypeP t = make(Kind::Int);
  return t;
}
TypeP float_type() {
  static const TypeP t = make(Kind::Float);
  return t;
}
TypeP bool_type() {
  static const TypeP t = make(Kind::Bool);
  return t;
}
TypeP string_type() {
  static const TypeP t = make(Kind::String);
  return t;
}

TypeP array_of(TypeP elem) {
  auto t = std::make_shared<Type>();
  t->kind = Kind::Array;
  t->elem = std::move(elem);
  return t;
}

TypeP object_of(const Class* cls, std::vector<TypeP> args) {
  auto t = std::make_shared<Type>();
  t->kind = Kind::Object;
  t->cls = cls;
  t->args = std::move(args);
  return t;
}

TypeP function_of(std::vector<TypeP> params, TypeP result) {
  auto t = std::make_shared<Type>();
  t->kind = Kind::Function;
  t->args = std::move(params);
  t->result = std::move(result);
  return t;
}

TypeP param_type(const std::string& name) {
  auto t = std::make_shared<Type>();
  t->kind = Kind::Param;
  t->name = name;
  return t;
}

std::string text(const TypeP& t) {
  switch (t->kind) {
    case Kind::Void: return "void";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Bool: return "bool";
    case Kind::String: return "string";
    case Kind::Param: return t->name;
    case Kind::Array:
      // Parentheses group a function type: (fn(int): int)[] is an array of functions.
      return t->elem->kind == Kind::Function ? "(" + text(t->elem) + ")[]" : text(t->elem) + "[]";
    case Kind::Object: {
      std::string out = t->cls->name;
      if (t->args.empty()) return out;
      out += "<";
      for (size_t i = 0; i < t->args.size(); i++) out += (i ? ", " : "") + text(t->args[i]);
      return out + ">";
    }
    case Kind::Function: {
      std::string out = "fn(";
      for (size_t i = 0; i < t->args.size(); i++) out += (i ? ", " : "") + text(t->args[i]);
      out += ")";
      return t->result->kind == Kind::Void ? out : out + ": " + text(t->result);
    }
  }
  return "?";
}

// Names are unique in a generated program, so the text is the type's identity.
bool same(const TypeP& a, const TypeP& b) { return a == b || text(a) == text(b); }

bool is_reference(const TypeP& t) {
  return t->kind == Kind::String || t->kind == Kind::Array || t->kind == Kind::Object || t->kind == Kind::Function;
}

bool is_primitive(const TypeP& t) { return t->kind == Kind::Int || t->kind == Kind::Float || t->kind == Kind::Bool; }

TypeP subst(const TypeP& t, const Substitution& s) {
  switch (t->kind) {
    case Kind::Param: {
      auto it = s.find(t->name);
      return it == s.end() ? t : it->second;
    }
    case Kind::Array: return array_of(subst(t->elem, s));
    case Kind::Object: {
      std::vector<TypeP> args;
      for (auto& a : t->args) args.push_back(subst(a, s));
      return object_of(t->cls, std::move(args));
    }
    case Kind::Function: {
      std::vector<TypeP> params;
      for (auto& a : t->args) params.push_back(subst(a, s));
      return function_of(std::move(params), subst(t->result, s));
    }
    default: return t;
  }
}

Substitution bindings(const TypeP& object) {
  Substitution s;
  const Class& c = *object->cls;
  for (size_t i = 0; i < c.type_params.size() && i < object->args.size(); i++) s[c.type_params[i].name] = object->args[i];
  return s;
}

std::vector<TypeP> supertypes(const TypeP& object) {
  std::vector<TypeP> out;
  if (object->kind != Kind::Object) return out;
  Substitution s = bindings(object);
  if (object->cls->super) out.push_back(subst(object->cls->super, s));
  for (auto& i : object->cls->interfaces) out.push_back(subst(i, s));
  return out;
}

bool converts(const TypeP& from, const TypeP& to) {
  if (same(from, to)) return true;
  if (from->kind != Kind::Object || to->kind != Kind::Object) return false;
  for (auto& s : supertypes(from))
    if (converts(s, to)) return true;
  return false;
}

std::vector<MethodView> methods_of(const TypeP& receiver, const std::map<std::string, TypeP>& bounds) {
  std::vector<MethodView> out;
  std::set<std::string> seen;
  std::vector<TypeP> work{receiver};
  while (!work.empty()) {
    TypeP t = work.front();
    work.erase(work.begin());
    if (t->kind == Kind::Param) {
      auto it = bounds.find(t->name);
      if (it != bounds.end() && it->second) work.push_back(it->second);
      continue;
    }
    if (t->kind != Kind::Object) continue;
    Substitution s = bindings(t);
    for (auto& m : t->cls->methods) {
      if (!seen.insert(m.name).second) continue;
      MethodView v{&m, t->cls, {}, subst(m.result, s)};
      for (auto& p : m.params) v.params.push_back(subst(p.type, s));
      out.push_back(std::move(v));
    }
    for (auto& sup : supertypes(t)) work.push_back(sup);
  }
  return out;
}

bool find_inherited(const Class* cls, const std::string& name, MethodView& out) {
  // The superclass chain only: an interface's declaration is not a body to inherit.
  for (TypeP t = cls->super; t;) {
    Substitution s = bindings(t);
    for (auto& m : t->cls->methods) {
      if (m.name != name) continue;
      out = MethodView{&m, t->cls, {}, subst(m.result, s)};
      for (auto& p : m.params) out.params.push_back(subst(p.type, s));
      return true;
    }
    t = t->cls->super ? subst(t->cls->super, s) : nullptr;
  }
  return false;
}

std::vector<Param> fields_of(const TypeP& object) {
  std::vector<Param> out;
  for (TypeP t = object; t && t->kind == Kind::Object;) {
    Substitution s = bindings(t);
    for (auto& f : t->cls->fields) out.push_back({f.name, subst(f.type, s)});
    t = t->cls->super ? subst(t->cls->super, s) : nullptr;
  }
  return out;
}

}  // namespace minigen
