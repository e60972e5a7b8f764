// The program generator's model of Mini v2 types and declarations (LANGUAGE.md, "Objects,
// generics, closures and strings"): enough of the type checker's rules to write only
// programs it accepts: nominal subtyping through instantiated superclasses and
// interfaces, members looked up with type arguments substituted, invariant generics.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace minigen {

struct Class;
struct Type;
using TypeP = std::shared_ptr<const Type>;

enum class Kind { Void, Int, Float, Bool, String, Array, Object, Function, Param };

struct Type {
  Kind kind = Kind::Void;
  TypeP elem;                  // Array: the element type
  const Class* cls = nullptr;  // Object: the class or interface
  std::vector<TypeP> args;     // Object: type arguments; Function: parameter types
  TypeP result;                // Function: the result (Kind::Void for none)
  std::string name;            // Param: the type parameter's name (unique in the program)
};

TypeP void_type();
TypeP int_type();
TypeP float_type();
TypeP bool_type();
TypeP string_type();
TypeP array_of(TypeP elem);
TypeP object_of(const Class* cls, std::vector<TypeP> args = {});
TypeP function_of(std::vector<TypeP> params, TypeP result);
TypeP param_type(const std::string& name);

std::string text(const TypeP& t);  // as written in Mini source
bool same(const TypeP& a, const TypeP& b);
bool is_reference(const TypeP& t);  // null is one of its values
bool is_primitive(const TypeP& t);  // int, float, bool
using Substitution = std::map<std::string, TypeP>;
TypeP subst(const TypeP& t, const Substitution& s);

struct TypeParam {
  std::string name;
  TypeP bound;  // an interface type, or null
};

struct Param {
  std::string name;
  TypeP type;
};

struct Method {
  std::string name;
  std::vector<Param> params;
  TypeP result;  // Kind::Void for none
  bool is_abstract = false;
  bool is_override = false;
  std::string body;  // the statements between the braces, written after every signature is known
};

struct Field {
  std::string name;
  TypeP type;
};

struct Class {
  std::string name;
  int index = 0;  // creation order: a class's init constructs only classes created before it
  bool is_interface = false;
  bool is_abstract = false;
  std::vector<TypeParam> type_params;
  TypeP super;                    // an Object type (of a class), or null
  std::vector<TypeP> interfaces;  // Object types of interfaces
  std::vector<Field> fields;
  std::vector<Method> methods;
  bool has_init = false;
  std::vector<Param> init_params;
  std::string init_body;
  std::string anchor_field;  // generic classes: a field of the first type parameter, always assigned
};

// The substitution of a class's type parameters by an Object type's arguments.
Substitution bindings(const TypeP& object);
// The direct supertypes of an Object type (superclass, then interfaces), substituted.
std::vector<TypeP> supertypes(const TypeP& object);
// Whether a value of static type `from` converts implicitly to `to`.
bool converts(const TypeP& from, const TypeP& to);

// A method as seen on a receiver type: its declaration and its substituted signature.
struct MethodView {
  const Method* method = nullptr;
  const Class* owner = nullptr;
  std::vector<TypeP> params;
  TypeP result;
};
// Every method callable on a receiver of this type (the most derived declaration of each
// name). A type parameter with a bound has its bound's methods.
std::vector<MethodView> methods_of(const TypeP& receiver, const std::map<std::string, TypeP>& bounds);
// A method of the superclass chain strictly above `cls` (for super.m and overrides).
bool find_inherited(const Class* cls, const std::string& name, MethodView& out);
// Every field of an Object type of a class (its own and inherited), with types substituted.
std::vector<Param> fields_of(const TypeP& object);

}  // namespace minigen
