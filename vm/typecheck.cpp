#include "vm/typecheck.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "vm/builtins.h"
#include "vm/generics.h"

namespace vm {

using namespace ast;

namespace {

[[noreturn]] void fail(SourcePos at, std::string message) { throw FrontendError{at, std::move(message)}; }

bool before(SourcePos a, SourcePos b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }

// The language has no implicit conversions; when int meets float, say how to convert.
std::string conversion_hint(Type a, Type b) {
  if ((a == Type::Int && b == Type::Float) || (a == Type::Float && b == Type::Int))
    return "; convert with float(x) or int(x)";
  return "";
}

std::string plural(size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

// A builtin callable by name (print and spawn are handled separately).
struct Builtin {
  std::string_view name;
  Callee callee;
  NativeId native;         // for Callee::Native
  std::string_view params;  // opcodes.def letters; '*' = any array
  Type result;
};
constexpr Builtin kBuiltins[] = {
    {"len", Callee::Len, NativeId::count, "*", Type::Int},
    {"sqrt", Callee::Sqrt, NativeId::count, "F", Type::Float},
    {"atomic_add", Callee::AtomicAdd, NativeId::count, "AII", Type::Int},
    {"nanotime", Callee::Native, NativeId::nanotime, "", Type::Int},
    {"sleep_ms", Callee::Native, NativeId::sleep_ms, "I", Type::Void},
    {"native_spin_ns", Callee::Native, NativeId::native_spin_ns, "I", Type::Void},
    {"join", Callee::Native, NativeId::join, "I", Type::Void},
    {"arraycopy", Callee::Native, NativeId::arraycopy, "*I*II", Type::Void},
    {"crc32", Callee::Native, NativeId::crc32, "AII", Type::Int},
    {"substring", Callee::Substring, NativeId::count, "SII", Type::String},
};

const Builtin* find_builtin(std::string_view name) {
  for (auto& b : kBuiltins)
    if (b.name == name) return &b;
  return nullptr;
}
bool is_builtin_name(std::string_view name) { return name == "print" || find_builtin(name) != nullptr; }


bool is_true_literal(const Expr& e) { return e.kind == ExprKind::BoolLit && e.bool_value; }

class Checker {
 public:
  explicit Checker(Program& p) : prog_(p) {}

  void run() {
    // Signatures first: functions and classes may be used before their definition. The
    // first definition of a name wins; later duplicates are reported when reached in order.
    // Top-level functions take the first function indices, then each class's methods.
    for (size_t i = 0; i < prog_.functions.size(); i++) {
      prog_.functions[i]->index = uint32_t(i);
      fns_.emplace(prog_.functions[i]->name, prog_.functions[i].get());
    }
    uint32_t next_fn = uint32_t(prog_.functions.size());
    for (size_t i = 0; i < prog_.classes.size(); i++) {
      ClassDecl& c = *prog_.classes[i];
      c.index = uint32_t(i);
      classes_.emplace(c.type, &c);
      for (auto& m : c.methods) m->index = next_fn++;
    }
    for (size_t i = 0; i < prog_.globals.size(); i++) globals_.emplace(prog_.globals[i]->name, uint32_t(i));
    for (auto& g : prog_.generic_classes) {
      auto [it, fresh] = generic_classes_.emplace(g->name, g.get());
      if (!fresh || classes_.count(class_type(g->name)))
        fail(g->name_pos, fmt::format("{} '{}' is already defined", kind_word(*g), g->name));
    }
    for (auto& g : prog_.generic_functions) {
      auto [it, fresh] = generic_fns_.emplace(g->name, g.get());
      if (!fresh || fns_.count(g->name)) fail(g->name_pos, fmt::format("function '{}' is already defined", g->name));
      if (g->name == "main") fail(g->type_params[0].pos, "'main' cannot be generic");
    }
    next_fn_ = next_fn;
    source_classes_ = prog_.classes.size();
    // Instances of generic classes join the list as their uses are found (index loops).
    for (size_t i = 0; i < prog_.classes.size(); i++) hierarchy(*prog_.classes[i]);
    for (size_t i = 0; i < prog_.classes.size(); i++) layout(*prog_.classes[i]);
    laid_out_all_ = true;
    for (auto& [params, args, at] : pending_bounds_) check_bounds(params, args, at);
    pending_bounds_.clear();
    if (next_fn > 65535) fail(SourcePos{1, 1}, fmt::format("too many functions and methods ({}; at most 65535)", next_fn));
    if (prog_.classes.size() > 65535) fail(prog_.classes[65535]->name_pos, "too many classes (at most 65535)");
    if (prog_.globals.size() > 65535) fail(prog_.globals[65535]->name_pos, "too many globals (at most 65535)");
    // Every type a signature or a field names, so that an instance of a generic class that
    // only a later signature or field names (fn make(): Box<int>) exists, with its
    // interfaces, when an earlier body converts its value. An error in a signature is
    // reported before any error in a body.
    for (auto& f : prog_.functions) signature_types(*f);
    for (size_t i = 0; i < source_classes_; i++) {
      for (auto& m : prog_.classes[i]->methods) signature_types(*m);
      for (auto& f : prog_.classes[i]->fields) check_type(f.type, f.type_pos);
    }
    for (auto& g : prog_.globals) check_type(g->type, g->type_pos);
    // Then every item in source order, so the first error reported is the first in the file
    // (after the signatures').
    struct Item {
      SourcePos pos;
      int kind;  // 0 global, 1 function, 2 class
      size_t index;
    };
    std::vector<Item> items;
    for (size_t i = 0; i < prog_.globals.size(); i++) items.push_back({prog_.globals[i]->pos, 0, i});
    for (size_t i = 0; i < prog_.functions.size(); i++) items.push_back({prog_.functions[i]->pos, 1, i});
    for (size_t i = 0; i < source_classes_; i++) items.push_back({prog_.classes[i]->pos, 2, i});
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return before(a.pos, b.pos); });
    for (const Item& it : items) {
      if (it.kind == 0) global(it.index);
      else if (it.kind == 1) function(*prog_.functions[it.index]);
      else class_decl(*prog_.classes[it.index]);
    }
    // Then each instance of a generic class or function, as its first use made it.
    for (size_t i = 0; i < pending_.size(); i++) {
      if (pending_[i].cls != nullptr) class_decl(*pending_[i].cls);
      else function(*pending_[i].fn);
    }
    if (!fns_.count("main")) fail(SourcePos{1, 1}, "the program has no 'main' function");
  }

 private:
  struct Local {
    uint32_t slot;
    Type type;
    bool read_only;  // the variable of a `for` loop
    SourcePos pos;
  };
  struct Loop {
    bool has_break = false;
  };

  // ---- top level ----

  // `from` can be stored where `to` is expected: the same type, null to a reference, or a
  // class to one of its superclasses.
  bool assignable(Type from, Type to) {
    if (vm::converts_to(from, to)) return true;
    const ClassDecl* a = class_of(from);
    const ClassDecl* b = class_of(to);
    return a != nullptr && b != nullptr && a->conforms_to(b);
  }

  // "function 'f'" or "method 'C.m'", for messages.
  static std::string describe_fn(const FnDecl& f) {
    if (f.is_lambda()) return fmt::format("the lambda at line {}", f.pos.line);
    if (f.owner != nullptr) return fmt::format("method '{}.{}'", type_name(f.owner->type), f.name);
    return fmt::format("function '{}'", f.name);
  }

  // A type written in the program: every class it names must exist.
  void check_type(Type t, SourcePos at) {
    switch (type_kind(t)) {
      case TypeKind::Array: return check_type(type_info(t).elem, at);
      case TypeKind::Function:
        for (Type p : type_info(t).args) check_type(p, at);
        return check_type(type_info(t).elem, at);
      case TypeKind::Class:
        if (!type_info(t).args.empty()) {
          instance(t, at);
        } else if (!classes_.count(t)) {
          if (auto g = generic_classes_.find(type_info(t).name); g != generic_classes_.end())
            fail(at, fmt::format("'{}' is generic: give its type arguments, {}", g->first, generic_example(*g->second)));
          fail(at, fmt::format("unknown type '{}'", type_name(t)));
        }
        return;
      default: return;
    }
  }

  // Where a class is named (new C(...), extends C): the instance of a generic one, or the
  // error for a generic one without type arguments; an unknown one is the caller's error.
  void generic_use(Type t, SourcePos at) {
    if (!type_info(t).args.empty() || generic_classes_.count(type_info(t).name)) check_type(t, at);
  }

  static std::string generic_example(const ClassDecl& g) {
    std::string out = g.name + "<";
    for (size_t i = 0; i < g.type_params.size(); i++) out += (i ? ", " : "") + g.type_params[i].name;
    return out + ">";
  }

  // ---- generics: one declaration per type argument (vm/generics.h) ----

  // The class or interface `Name<Args>`, made from its generic declaration on first use.
  ClassDecl& instance(Type t, SourcePos at) {
    if (auto it = classes_.find(t); it != classes_.end()) return *it->second;
    const TypeInfo& info = type_info(t);
    auto g = generic_classes_.find(info.name);
    if (g == generic_classes_.end())
      fail(at, classes_.count(class_type(info.name)) ? fmt::format("'{}' is not generic; write it without type arguments", info.name)
                                                     : fmt::format("unknown type '{}'", info.name));
    const ClassDecl& generic = *g->second;
    if (info.args.size() != generic.type_params.size())
      fail(at, fmt::format("'{}' takes {}, got {}", generic_example(generic), plural(generic.type_params.size(), "type argument"),
                           info.args.size()));
    for (Type a : info.args) check_type(a, at);
    std::vector<Type> args = info.args;  // `info` may move as types are interned
    if (auto it = classes_.find(t); it != classes_.end()) return *it->second;  // an argument's check made it
    count_instance(at);
    if (prog_.classes.size() >= 65535) fail(at, "too many classes (at most 65535)");
    auto made = instantiate(generic, args);
    ClassDecl& c = *made;
    c.index = uint32_t(prog_.classes.size());
    classes_.emplace(c.type, &c);
    for (auto& m : c.methods) m->index = next_function_index(at);
    prog_.classes.push_back(std::move(made));
    pending_.push_back({&c, nullptr});
    hierarchy(c);
    if (laid_out_all_) layout(c);
    bounds(generic.type_params, args, at);
    // Its members' types now, so that a use of a member finds every class it names.
    for (auto& f : c.fields) check_type(f.type, f.type_pos);
    for (auto& m : c.methods) signature_types(*m);
    return c;
  }

  void signature_types(const FnDecl& f) {
    for (auto& p : f.params) check_type(p.type, p.pos);
    if (f.result != Type::Void) check_type(f.result, f.result_pos);
  }

  void count_instance(SourcePos at) {
    if (++instances_ > 1000)
      fail(at, "too many instances of generic classes and functions (at most 1000): does a generic type use itself with a "
               "bigger type argument?");
  }
  uint32_t next_function_index(SourcePos at) {
    if (next_fn_ >= 65535) fail(at, "too many functions, methods and lambdas (at most 65535)");
    return next_fn_++;
  }

  // Each type argument converts to its parameter's bound (with the arguments written for
  // the parameters in it: T: Comparable<T> with T = Circle wants a Comparable<Circle>).
  // Before every class is laid out, the check waits until they are.
  void bounds(const std::vector<TypeParamDecl>& params, const std::vector<Type>& args, SourcePos at) {
    if (laid_out_all_) check_bounds(params, args, at);
    else pending_bounds_.push_back({params, args, at});
  }
  void check_bounds(const std::vector<TypeParamDecl>& params, const std::vector<Type>& args, SourcePos at) {
    TypeSubst s = substitution(params, args);
    for (size_t i = 0; i < params.size(); i++) {
      if (params[i].bound == Type::Void) continue;
      Type bound = substitute(params[i].bound, s);
      check_type(bound, params[i].bound_pos);
      if (!assignable(args[i], bound))
        fail(at, fmt::format("type argument {} does not satisfy the bound {} of {}", type_name(args[i]), type_name(bound),
                             params[i].name));
    }
  }

  // The instance of generic function `generic` for these type arguments.
  FnDecl& function_instance(const FnDecl& generic, const std::vector<Type>& args, SourcePos at) {
    auto key = std::make_pair(&generic, args);
    if (auto it = fn_instances_.find(key); it != fn_instances_.end()) return *it->second;
    count_instance(at);
    auto made = instantiate(generic, args);
    FnDecl& f = *made;
    f.index = next_function_index(at);
    fn_instances_.emplace(key, &f);
    prog_.function_instances.push_back(std::move(made));
    pending_.push_back({nullptr, &f});
    bounds(generic.type_params, args, at);
    signature_types(f);
    return f;
  }

  // What type parameter k of `generic` takes from an argument of type `got` where the
  // parameter type `want` is expected: the first argument that gives it decides.
  static void infer(const FnDecl& generic, Type want, Type got, std::vector<Type>& found) {
    for (size_t k = 0; k < generic.type_params.size(); k++)
      if (want == class_type(generic.type_params[k].name)) {
        if (found[k] == Type::Void && got != Type::Null) found[k] = got;
        return;
      }
    if (got == Type::Null || (uint32_t(want) < kFirstInternedType && !is_array(want))) return;
    TypeKind wk = type_kind(want), gk = type_kind(got);
    if (wk != gk) return;
    const TypeInfo& w = type_info(want);
    const TypeInfo& g = type_info(got);
    if (wk == TypeKind::Array) return infer(generic, w.elem, g.elem, found);
    if ((wk == TypeKind::Class && w.name == g.name) || wk == TypeKind::Function) {
      if (w.args.size() != g.args.size()) return;
      std::vector<Type> wa = w.args, ga = g.args;
      Type we = w.elem, ge = g.elem;
      for (size_t i = 0; i < wa.size(); i++) infer(generic, wa[i], ga[i], found);
      if (wk == TypeKind::Function) infer(generic, we, ge, found);
    }
  }

  // A call of a generic function: its type arguments inferred from the arguments' types.
  Type generic_call(Expr& e, const FnDecl& generic) {
    if (e.args.size() != generic.params.size())
      fail(e.op_pos, fmt::format("'{}' takes {}, got {}", generic.name, plural(generic.params.size(), "argument"), e.args.size()));
    std::vector<Type> got;
    for (auto& a : e.args) got.push_back(value(*a));
    std::vector<Type> found(generic.type_params.size(), Type::Void);
    for (size_t i = 0; i < got.size(); i++) infer(generic, generic.params[i].type, got[i], found);
    for (size_t k = 0; k < found.size(); k++)
      if (found[k] == Type::Void)
        fail(e.op_pos, fmt::format("cannot infer type parameter {} of '{}' from the arguments (a parameter of type {} needs an "
                                   "argument that is not null)", generic.type_params[k].name, generic.name,
                                   generic.type_params[k].name));
    FnDecl& f = function_instance(generic, found, e.op_pos);
    for (size_t i = 0; i < got.size(); i++)
      if (!assignable(got[i], f.params[i].type))
        fail(e.args[i]->pos, fmt::format("argument {} of '{}' must be {}, got {}{}", i + 1, generic.name, type_name(f.params[i].type),
                                         type_name(got[i]), conversion_hint(f.params[i].type, got[i])));
    e.callee = Callee::User;
    e.index = f.index;
    return f.result;
  }
  // Where an earlier declaration is, for an error at `here`: "line 3" in the same file,
  // "lib/vector.mini:3" in another of the program's files.
  std::string place(SourcePos first, SourcePos here) const {
    if (first.file == here.file || first.file >= prog_.files.size()) return fmt::format("line {}", first.line);
    return fmt::format("{}:{}", prog_.files[first.file], first.line);
  }

  ClassDecl* class_of(Type t) {
    auto it = classes_.find(t);
    return it == classes_.end() ? nullptr : it->second;
  }

  static std::string_view kind_word(const ClassDecl& c) { return c.is_interface ? "interface" : "class"; }

  // The superclass of `c` and its interfaces, and no cycle through them.
  void hierarchy(ClassDecl& c) {
    if (!hierarchy_done_.insert(&c).second) return;
    ClassDecl* first = classes_.at(c.type);
    if (first != &c)
      fail(c.name_pos, fmt::format("{} '{}' is already defined at {}", kind_word(c), c.name, place(first->pos, c.pos)));
    for (size_t i = 0; i < c.interface_types.size(); i++) {
      generic_use(c.interface_types[i], c.interface_pos[i]);
      ClassDecl* in = class_of(c.interface_types[i]);
      if (in == nullptr) fail(c.interface_pos[i], fmt::format("unknown interface '{}'", type_name(c.interface_types[i])));
      if (!in->is_interface)
        fail(c.interface_pos[i], c.is_interface
                                     ? fmt::format("'{}' is a class; an interface extends interfaces only", in->name)
                                     : fmt::format("'{}' is a class; extend it with: class {} extends {}", in->name, c.name, in->name));
      for (const ClassDecl* seen : c.interfaces)
        if (seen == in) fail(c.interface_pos[i], fmt::format("interface '{}' is named twice", in->name));
      c.interfaces.push_back(in);
    }
    if (c.super_type == Type::Void) return;
    generic_use(c.super_type, c.super_pos);
    c.super = class_of(c.super_type);
    if (c.super == nullptr) fail(c.super_pos, fmt::format("unknown class '{}'", type_name(c.super_type)));
    if (c.super->is_interface)
      fail(c.super_pos, fmt::format("'{}' is an interface; implement it with: class {} implements {}", c.super->name, c.name,
                                    c.super->name));
    for (const ClassDecl* a = c.super; a != nullptr; a = a->super)
      if (a == &c) fail(c.super_pos, fmt::format("class '{}' extends itself (through '{}')", c.name, c.super->name));
  }

  static bool same_signature(const FnDecl& a, const FnDecl& b) {
    bool same = a.result == b.result && a.params.size() == b.params.size();
    for (size_t i = 0; same && i < a.params.size(); i++) same = a.params[i].type == b.params[i].type;
    return same;
  }

  // An interface's methods: those of the interfaces it extends (one slot per name, which
  // must have one signature), then its own.
  void interface_layout(ClassDecl& c) {
    auto add = [&](const FnDecl* m, SourcePos at) {
      int slot = c.method_slot(m->name);
      if (slot < 0) {
        c.vtable.push_back(m);
        return;
      }
      const FnDecl& had = *c.vtable[size_t(slot)];
      if (!same_signature(had, *m))
        fail(at, fmt::format("interface '{}' gets method '{}' twice with different types: {} from {} and {} from {}", c.name,
                             m->name, signature_text(had), had.owner->name, signature_text(*m), m->owner->name));
      if (m->owner == &c) c.vtable[size_t(slot)] = m;
    };
    for (size_t i = 0; i < c.interfaces.size(); i++) {
      layout(*c.interfaces[i]);
      for (const FnDecl* m : c.interfaces[i]->vtable) add(m, c.interface_pos[i]);
    }
    std::unordered_map<std::string, SourcePos> own;
    for (auto& m : c.methods) {
      if (m->name == "init") fail(m->name_pos, fmt::format("interface '{}' cannot have an init; classes construct objects", c.name));
      auto [it, fresh] = own.emplace(m->name, m->name_pos);
      if (!fresh) fail(m->name_pos, fmt::format("interface '{}' already declares '{}' (line {})", c.name, m->name, it->second.line));
      add(m.get(), m->name_pos);
    }
    c.first_selector = selectors_;  // its methods take the next selectors (vm::ClassInfo::itable)
    selectors_ += uint32_t(c.vtable.size());
    if (selectors_ > 65535) fail(c.name_pos, "too many interface methods in the program (at most 65535)");
  }

  // Interface `i` and every interface it extends, each once, appended to `out`.
  static void with_extended(const ClassDecl& i, std::vector<const ClassDecl*>& out) {
    if (std::find(out.begin(), out.end(), &i) != out.end()) return;
    out.push_back(&i);
    for (const ClassDecl* e : i.interfaces) with_extended(*e, out);
  }

  // Every method of every interface `c` implements is one of its methods, with the
  // interface's types.
  void check_implements(ClassDecl& c) {
    std::vector<const ClassDecl*> all;
    for (const ClassDecl* i : c.interfaces) with_extended(*i, all);
    for (const ClassDecl* i : all)
      for (const FnDecl* want : i->vtable) {
        const FnDecl* have = c.method(want->name);
        if (have == nullptr && c.is_abstract) {  // its concrete subclasses will define it
          c.vtable.push_back(want);
          continue;
        }
        if (have == nullptr)
          fail(c.name_pos, fmt::format("class '{}' implements {} but has no method '{}'; define fn {}{}", c.name, i->name,
                                       want->name, want->name, signature_text(*want).substr(2)));
        if (!same_signature(*have, *want))
          fail(have->owner == &c ? have->name_pos : c.name_pos,
               fmt::format("'{}.{}' implements {}.{} and must have its parameter and result types: {}", have->owner->name,
                           have->name, i->name, want->name, signature_text(*want)));
      }
  }

  // The object layout and vtable of `c` after its superclass's, and the rules of its
  // members: one per name (fields and methods share a namespace, inherited ones too),
  // `override` exactly where a superclass declares the method, with the same types;
  // abstract methods only in abstract classes, and none left in a concrete one.
  void layout(ClassDecl& c) {
    if (laid_out_.count(&c)) return;
    if (!laying_out_.insert(&c).second)
      fail(c.name_pos, fmt::format("interface '{}' extends itself (through the interfaces it extends)", c.name));
    if (c.is_interface) {
      interface_layout(c);
      laying_out_.erase(&c);
      laid_out_.insert(&c);
      return;
    }
    for (ClassDecl* i : c.interfaces) layout(*i);
    laying_out_.erase(&c);
    laid_out_.insert(&c);
    if (c.super != nullptr) {
      layout(*c.super);
      c.all_fields = c.super->all_fields;
      c.vtable = c.super->vtable;
    }
    std::unordered_map<std::string, SourcePos> members;
    auto member = [&](const std::string& name, SourcePos at) {
      auto [it, fresh] = members.emplace(name, at);
      if (!fresh)
        fail(at, fmt::format("class '{}' already has a member '{}' (line {}); fields and methods share one namespace",
                             c.name, name, it->second.line));
    };
    for (auto& f : c.fields) {
      member(f.name, f.name_pos);
      if (c.super != nullptr && (c.super->field(f.name) >= 0 || c.super->method(f.name) != nullptr))
        fail(f.name_pos, fmt::format("class '{}' cannot declare '{}': its superclass '{}' has a member of that name", c.name,
                                     f.name, c.super->name));
      c.all_fields.push_back(&f);
    }
    for (auto& m : c.methods) {
      member(m->name, m->name_pos);
      if (m->name == "init") {
        c.init = m.get();
        if (m->result != Type::Void) fail(m->result_pos, "'init' returns nothing: it initialises the object new made");
        if (m->is_override || m->is_abstract)
          fail(m->modifier_pos, fmt::format("'init' is not inherited, so it is never {}", m->is_override ? "overridden" : "abstract"));
        continue;
      }
      if (m->is_abstract && !c.is_abstract)
        fail(m->modifier_pos, fmt::format("abstract method '{}' in class '{}', which is not abstract; declare it abstract class {}",
                                          m->name, c.name, c.name));
      int slot = c.super != nullptr ? c.super->method_slot(m->name) : -1;
      if (slot < 0) {
        if (c.super != nullptr && c.super->field(m->name) >= 0)
          fail(m->name_pos, fmt::format("class '{}' cannot declare '{}': its superclass '{}' has a field of that name", c.name,
                                        m->name, c.super->name));
        if (m->is_override)
          fail(m->modifier_pos, fmt::format("'{}' is marked override, but no superclass of '{}' declares it", m->name, c.name));
        c.vtable.push_back(m.get());
        continue;
      }
      const FnDecl& base = *c.vtable[size_t(slot)];
      if (base.owner->is_interface) {  // an abstract superclass left it to its subclasses
        if (m->is_override)
          fail(m->modifier_pos, fmt::format("'{}' implements {}.{}, which no superclass of '{}' declares; drop 'override'", m->name,
                                            base.owner->name, base.name, c.name));
        if (!same_signature(*m, base))
          fail(m->name_pos, fmt::format("'{}' implements {}.{} and must have its parameter and result types: {}", m->name,
                                        base.owner->name, base.name, signature_text(base)));
        c.vtable[size_t(slot)] = m.get();
        continue;
      }
      if (!m->is_override)
        fail(m->name_pos, fmt::format("'{}' redefines {}.{}; mark it: override fn {}(...)", m->name, base.owner->name,
                                      base.name, m->name));
      if (!same_signature(*m, base))
        fail(m->name_pos, fmt::format("'{}' overrides {}.{} and must have its parameter and result types: {}", m->name,
                                      base.owner->name, base.name, signature_text(base)));
      c.vtable[size_t(slot)] = m.get();
    }
    c.effective_init = c.init != nullptr ? c.init : c.super != nullptr ? c.super->effective_init : nullptr;
    check_implements(c);
    if (!c.is_abstract) {
      for (const FnDecl* m : c.vtable)
        if (m->is_abstract)
          fail(c.name_pos, m->owner->is_interface
                               ? fmt::format("class '{}' implements {} but has no method '{}'; define fn {}{}", c.name,
                                             m->owner->name, m->name, m->name, signature_text(*m).substr(2))
                               : fmt::format("class '{}' must override abstract method {}.{} (or be declared abstract)", c.name,
                                             m->owner->name, m->name));
    }
    // Without an init of its own (or one that calls super.init first), the superclass's
    // init runs implicitly, so it must take no arguments.
    const FnDecl* super_init = c.super != nullptr ? c.super->effective_init : nullptr;
    if (super_init != nullptr && !super_init->params.empty() && c.init == nullptr)
      fail(c.name_pos, fmt::format("class '{}' needs an init that calls super.init(...): {}.init takes {}", c.name,
                                   super_init->owner->name, plural(super_init->params.size(), "argument")));
  }

  static std::string signature_text(const FnDecl& f) {
    std::string out = "fn(";
    for (size_t i = 0; i < f.params.size(); i++) out += (i ? ", " : "") + type_name(f.params[i].type);
    out += ")";
    return f.result == Type::Void ? out : out + ": " + type_name(f.result);
  }

  void class_decl(ClassDecl& c) {
    for (auto& f : c.fields) check_type(f.type, f.type_pos);
    for (auto& m : c.methods) function(*m);
  }

  void global(size_t index) {
    GlobalDecl& g = *prog_.globals[index];
    uint32_t first = globals_.at(g.name);
    if (first != index) fail(g.name_pos, fmt::format("global '{}' is already defined at {}", g.name, place(prog_.globals[first]->pos, g.pos)));
    check_type(g.type, g.type_pos);
    if (!assignable(g.init_type, g.type))
      fail(g.init_pos, fmt::format("global '{}' of type {} cannot be initialised with a literal of type {}{}", g.name,
                                   type_name(g.type), type_name(g.init_type), conversion_hint(g.type, g.init_type)));
  }

  void function(FnDecl& f) {
    if (f.owner == nullptr && fns_.count(f.name)) {  // (an instance of a generic function is not among them)
      FnDecl* first = fns_.at(f.name);
      if (first != &f) fail(f.name_pos, fmt::format("function '{}' is already defined at {}", f.name, place(first->pos, f.pos)));
      if (is_builtin_name(f.name)) fail(f.name_pos, fmt::format("'{}' is a builtin and cannot be redefined", f.name));
    }
    for (auto& p : f.params) check_type(p.type, p.pos);
    if (f.result != Type::Void) check_type(f.result, f.result_pos);
    if (f.name == "main" && f.owner == nullptr) {
      if (!f.params.empty()) fail(f.params[0].pos, "'main' must take no parameters");
      if (f.result != Type::Void && f.result != Type::Int)
        fail(f.result_pos, fmt::format("'main' must return int or nothing, not {}", type_name(f.result)));
    }
    fn_ = &f;
    for_count_ = 0;
    scopes_.assign(1, {});
    loops_.clear();
    f.local_types.clear();
    f.local_names.clear();
    f.self_class = f.owner;
    f.cell_slots.clear();
    if (f.owner != nullptr) new_slot("this", f.owner->type, f.pos);  // a method's receiver: local 0
    for (auto& p : f.params) {
      if (scopes_[0].count(p.name)) fail(p.pos, fmt::format("parameter '{}' is declared twice", p.name));
      declare(p.name, p.type, p.pos, false);
    }
    if (f.is_abstract) {  // a signature only
      fn_ = nullptr;
      return;
    }
    if (f.owner != nullptr && &f == f.owner->init) super_init_first(f);
    bool completes = block(*f.body, /*function_body=*/true);
    if (completes && f.result != Type::Void)
      fail(f.body->end_pos, fmt::format("{} must return a value of type {} on every path; add a return at the end",
                                        describe_fn(f), type_name(f.result)));
    fn_ = nullptr;
  }

  // An init runs its superclass's init first: the one its first statement calls with
  // super.init(...), else implicitly, which needs one without parameters.
  void super_init_first(FnDecl& f) {
    const ClassDecl& c = *f.owner;
    const FnDecl* base = c.super != nullptr ? c.super->effective_init : nullptr;
    if (base == nullptr) return;
    const auto& stmts = f.body->stmts;
    bool explicit_call = !stmts.empty() && stmts[0]->kind == StmtKind::ExprStmt &&
                         stmts[0]->value->kind == ExprKind::SuperCall && stmts[0]->value->text == "init";
    if (explicit_call) return;
    if (!base->params.empty())
      fail(f.name_pos, fmt::format("the init of '{}' must call super.init(...) first: {}.init takes {}", c.name,
                                   base->owner->name, plural(base->params.size(), "argument")));
    f.implicit_super_init = base;
  }

  // ---- locals ----

  const Local* find_local(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = s->find(name);
      if (it != s->end()) return &it->second;
    }
    return nullptr;
  }
  // A variable of a function enclosing the lambda being checked: it and the level of
  // the function (an index into outer_).
  std::pair<const Local*, size_t> find_outer(const std::string& name) const {
    for (size_t j = outer_.size(); j-- > 0;)
      for (auto s = outer_[j].scopes.rbegin(); s != outer_[j].scopes.rend(); ++s) {
        auto it = s->find(name);
        if (it != s->end()) return {&it->second, j};
      }
    return {nullptr, 0};
  }
  // A variable of this function or of one enclosing it.
  const Local* visible_local(const std::string& name) const {
    const Local* l = find_local(name);
    return l != nullptr ? l : find_outer(name).first;
  }
  void check_not_declared(const std::string& name, SourcePos at) {
    if (const Local* l = visible_local(name))
      fail(at, fmt::format("'{}' is already declared at {}:{} and still in scope", name, l->pos.line, l->pos.col));
  }

  // ---- captures ----

  // The function at nesting level m: outer_[m], or the one being checked.
  FnDecl& fn_at(size_t m) { return m < outer_.size() ? *outer_[m].fn : *fn_; }

  static uint32_t add_capture(FnDecl& lambda, FnDecl::Capture c, SourcePos at) {
    for (size_t i = 0; i < lambda.captures.size(); i++) {
      const FnDecl::Capture& k = lambda.captures[i];
      if (k.cell == c.cell && k.from_capture == c.from_capture && k.index == c.index) return uint32_t(i);
    }
    if (lambda.captures.size() >= 65535) fail(at, "a lambda captures too many variables (at most 65535)");
    lambda.captures.push_back(c);
    return uint32_t(lambda.captures.size() - 1);
  }

  // Variable `l` of the function at level j, used by the lambda being checked: it moves
  // into a cell there, and each lambda from level j + 1 inwards captures the cell.
  // Returns the capture of the innermost.
  uint32_t capture_variable(const Local& l, size_t j, const std::string& name, SourcePos at) {
    FnDecl& owner = fn_at(j);
    if (owner.cell_slots.size() <= l.slot) owner.cell_slots.resize(l.slot + 1, -1);
    if (owner.cell_slots[l.slot] < 0) {
      if (owner.local_types.size() >= 65535) fail(at, fmt::format("too many local variables in '{}' (at most 65535)", owner.name));
      owner.local_types.push_back(array_of(l.type));
      owner.local_names.push_back("$cell_" + name);
      owner.cell_slots[l.slot] = int32_t(owner.local_types.size() - 1);
    }
    bool from_capture = false;
    uint32_t source = uint32_t(owner.cell_slots[l.slot]);
    for (size_t m = j + 1; m <= outer_.size(); m++) {
      source = add_capture(fn_at(m), {true, from_capture, source, array_of(l.type)}, at);
      from_capture = true;
    }
    return source;
  }

  // `this` used in a lambda: each lambda from the method inwards captures it.
  void capture_this(SourcePos at) {
    if (!fn_->is_lambda() || fn_->this_capture >= 0) return;
    bool from_capture = false;
    uint32_t source = 0;  // the method's local 0
    for (size_t m = 1; m <= outer_.size(); m++) {
      FnDecl& lambda = fn_at(m);
      if (lambda.this_capture < 0)
        lambda.this_capture = int32_t(add_capture(lambda, {false, from_capture, source, fn_->self_class->type}, at));
      from_capture = true;
      source = uint32_t(lambda.this_capture);
    }
  }

  // The type of a variable named `name` (a local, a captured one, a field of `this` or a
  // global), or Void when none has that name.
  Type variable_type(const std::string& name) {
    if (const Local* l = visible_local(name)) return l->type;
    if (fn_->self_class != nullptr) {
      int field = fn_->self_class->field(name);
      if (field >= 0) return fn_->self_class->all_fields[size_t(field)]->type;
    }
    auto g = globals_.find(name);
    return g != globals_.end() ? prog_.globals[g->second]->type : Type::Void;
  }
  uint32_t new_slot(const std::string& name, Type t, SourcePos at) {
    if (fn_->local_types.size() >= 65535) fail(at, fmt::format("too many local variables in '{}' (at most 65535)", fn_->name));
    fn_->local_types.push_back(t);
    fn_->local_names.push_back(name);
    return uint32_t(fn_->local_types.size() - 1);
  }
  uint32_t declare(const std::string& name, Type t, SourcePos at, bool read_only) {
    uint32_t slot = new_slot(name, t, at);
    scopes_.back().emplace(name, Local{slot, t, read_only, at});
    return slot;
  }

  // ---- statements ----

  bool block(Stmt& b, bool function_body = false) {
    scopes_.emplace_back();
    bool completes = true;
    for (size_t i = 0; i < b.stmts.size(); i++) {
      first_statement_ = function_body && i == 0;
      if (!stmt(*b.stmts[i])) completes = false;  // later statements are unreachable; still checked
    }
    first_statement_ = false;
    scopes_.pop_back();
    b.completes = completes;
    return completes;
  }

  bool stmt(Stmt& s) {
    s.completes = stmt_completes(s);
    return s.completes;
  }

  void condition(Expr& c, std::string_view what) {
    Type t = value(c);
    if (t != Type::Bool) fail(c.pos, fmt::format("condition of '{}' must be bool, got {}", what, type_name(t)));
  }

  bool stmt_completes(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Block: return block(s);
      case StmtKind::VarDecl: {
        check_not_declared(s.name, s.name_pos);
        if (s.has_declared_type) check_type(s.declared_type, s.name_pos);
        Type t = value(*s.value);
        if (s.has_declared_type && !assignable(t, s.declared_type))
          fail(s.op_pos, fmt::format("cannot initialise '{}' of type {} with a value of type {}{}", s.name,
                                     type_name(s.declared_type), type_name(t), conversion_hint(s.declared_type, t)));
        if (!s.has_declared_type && t == Type::Null)
          fail(s.value->pos, fmt::format("the type of '{}' cannot be inferred from null; declare it, e.g. var {}: string = null;",
                                         s.name, s.name));
        s.slot = declare(s.name, s.has_declared_type ? s.declared_type : t, s.name_pos, false);
        return true;
      }
      case StmtKind::Assign: {
        Type target = assign_target(*s.target);
        Type v = value(*s.value);
        if (s.compound) {
          std::string op = fmt::format("{}=", binop_text(s.binop));
          Type r = binary_type(s.binop, op, target, v, s.op_pos);
          if (r != target)  // cannot happen for the compound operators; kept as a guard
            fail(s.op_pos, fmt::format("operator '{}' gives {}, which cannot be stored in {}", op, type_name(r), type_name(target)));
        } else if (!assignable(v, target)) {
          fail(s.op_pos, fmt::format("cannot assign a value of type {} to {} of type {}{}", type_name(v), describe_target(*s.target),
                                     type_name(target), conversion_hint(target, v)));
        }
        return true;
      }
      case StmtKind::If: {
        condition(*s.cond, "if");
        bool then_completes = block(*s.body);
        if (!s.else_branch) return true;
        bool else_completes = stmt(*s.else_branch);
        return then_completes || else_completes;
      }
      case StmtKind::While: {
        condition(*s.cond, "while");
        loops_.push_back({});
        block(*s.body);
        bool has_break = loops_.back().has_break;
        loops_.pop_back();
        return !is_true_literal(*s.cond) || has_break;
      }
      case StmtKind::For: {
        check_not_declared(s.name, s.name_pos);
        for (Expr* bound : {s.value.get(), s.limit.get()}) {
          Type t = value(*bound);
          if (t != Type::Int) fail(bound->pos, fmt::format("for loop bounds must be int, got {}", type_name(t)));
        }
        scopes_.emplace_back();
        s.slot = declare(s.name, Type::Int, s.name_pos, true);
        s.limit_slot = new_slot(fmt::format("$limit{}", for_count_++), Type::Int, s.pos);
        loops_.push_back({});
        block(*s.body);
        loops_.pop_back();
        scopes_.pop_back();
        return true;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
        if (loops_.empty())
          fail(s.pos, fmt::format("'{}' outside a loop", s.kind == StmtKind::Break ? "break" : "continue"));
        if (s.kind == StmtKind::Break) loops_.back().has_break = true;
        return false;
      case StmtKind::Return: {
        Type want = fn_->result;
        if (!s.value) {
          if (want != Type::Void)
            fail(s.pos, fmt::format("{} must return a value of type {}", describe_fn(*fn_), type_name(want)));
          return false;
        }
        if (want == Type::Void)
          fail(s.pos, fmt::format("{} has no result type, so it cannot return a value", describe_fn(*fn_)));
        Type t = value(*s.value);
        if (!assignable(t, want))
          fail(s.value->pos, fmt::format("{} must return {}, got {}{}", describe_fn(*fn_), type_name(want), type_name(t),
                                         conversion_hint(want, t)));
        return false;
      }
      case StmtKind::ExprStmt:
        expr(*s.value);  // a call or spawn; its value, if any, is dropped
        return true;
    }
    return true;
  }

  // The type of an assignment target (a Name or an Index), resolving it.
  Type assign_target(Expr& t) {
    if (t.kind == ExprKind::Index) {
      Type elem = expr(t);
      if (t.args[0]->type == Type::String)
        fail(t.op_pos, "strings cannot be assigned into; build a new one, e.g. with substring(s, from, to) and +");
      return elem;
    }
    if (const Local* l = t.kind == ExprKind::Name ? visible_local(t.text) : nullptr) {
      if (l->read_only) fail(t.pos, fmt::format("cannot assign to '{}': a for loop variable is read-only", t.text));
    }
    return expr(t);
  }
  static std::string describe_target(const Expr& t) {
    if (t.kind == ExprKind::Name) return fmt::format("'{}'", t.text);
    if (t.kind == ExprKind::Field) return fmt::format("field '{}'", t.text);
    return "an array element";
  }

  // ---- expressions ----

  // An expression whose value is used: not a call without result, not a string.
  Type value(Expr& e) {
    Type t = expr(e);
    if (t == Type::Void) fail(e.op_pos, fmt::format("'{}' returns no value", e.text));
    return t;
  }

  Type expr(Expr& e) {
    e.type = expr_type(e);
    return e.type;
  }

  Type expr_type(Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return Type::Int;
      case ExprKind::FloatLit: return Type::Float;
      case ExprKind::BoolLit: return Type::Bool;
      case ExprKind::StringLit: return Type::String;
      case ExprKind::NullLit: return Type::Null;
      case ExprKind::Name: {
        if (const Local* l = find_local(e.text)) {
          e.ref = NameRef::Local;
          e.index = l->slot;
          return l->type;
        }
        if (auto [l, level] = find_outer(e.text); l != nullptr) {  // a variable of an enclosing function
          e.ref = NameRef::Capture;
          e.index = capture_variable(*l, level, e.text, e.pos);
          return l->type;
        }
        if (const ClassDecl* self = fn_->self_class) {  // a field of `this`, named bare
          int field = self->field(e.text);
          if (field >= 0) {
            capture_this(e.pos);
            e.ref = NameRef::Field;
            e.class_index = self->index;
            e.index = uint32_t(field);
            return self->all_fields[size_t(field)]->type;
          }
          if (self->method(e.text) != nullptr)
            fail(e.pos, fmt::format("'{}' is a method, not a value; call it with {}(...), or wrap it: fn(...) {{ {}(...); }}",
                                    e.text, e.text, e.text));
        }
        auto g = globals_.find(e.text);
        if (g != globals_.end()) {
          e.ref = NameRef::Global;
          e.index = g->second;
          return prog_.globals[g->second]->type;
        }
        if (auto f = fns_.find(e.text); f != fns_.end()) {  // a top-level function as a value
          e.ref = NameRef::Function;
          e.index = f->second->index;
          return fn_type(*f->second);
        }
        if (generic_fns_.count(e.text))
          fail(e.pos, fmt::format("'{}' is generic, so it has no one value; call it, or wrap a call in a lambda", e.text));
        if (is_builtin_name(e.text))
          fail(e.pos, fmt::format("'{}' is a builtin, not a value; call it with {}(...), or wrap it in a lambda", e.text, e.text));
        fail(e.pos, fmt::format("unknown name '{}'", e.text));
      }
      case ExprKind::Unary: {
        Type t = value(*e.args[0]);
        switch (e.unop) {
          case UnOp::Neg:
            if (t != Type::Int && t != Type::Float) fail(e.op_pos, fmt::format("operator '-' needs an int or float operand, got {}", type_name(t)));
            return t;
          case UnOp::Not:
            if (t != Type::Bool) fail(e.op_pos, fmt::format("operator '!' needs a bool operand, got {}", type_name(t)));
            return t;
          case UnOp::BitNot:
            if (t != Type::Int) fail(e.op_pos, fmt::format("operator '~' needs an int operand, got {}", type_name(t)));
            return t;
        }
        return t;
      }
      case ExprKind::Binary: {
        Type a = value(*e.args[0]);
        Type b = value(*e.args[1]);
        return binary_type(e.binop, binop_text(e.binop), a, b, e.op_pos);
      }
      case ExprKind::Index: {
        Type a = value(*e.args[0]);
        if (!is_array(a) && a != Type::String)
          fail(e.op_pos, fmt::format("cannot index a value of type {} (only arrays and strings)", type_name(a)));
        Type i = value(*e.args[1]);
        if (i != Type::Int)
          fail(e.args[1]->pos, fmt::format("{} index must be int, got {}", a == Type::String ? "string" : "array", type_name(i)));
        return a == Type::String ? Type::Int : type_info(a).elem;  // a string's byte is an int
      }
      case ExprKind::NewArray: {
        check_type(e.type_operand, e.type_pos);
        Type n = value(*e.args[0]);
        if (n != Type::Int) fail(e.args[0]->pos, fmt::format("array size must be int, got {}", type_name(n)));
        return e.type_operand;
      }
      case ExprKind::Convert: {
        Type t = value(*e.args[0]);
        if (e.type_operand == Type::String) {
          if (t != Type::Int && t != Type::Float && t != Type::Bool && !assignable(t, Type::String))
            fail(e.args[0]->pos, fmt::format("string(x) converts an int, float, bool or string, got {}", type_name(t)));
        } else if (t != Type::Int && t != Type::Float) {
          fail(e.args[0]->pos, fmt::format("{}(x) converts an int or float, got {}", e.text, type_name(t)));
        }
        return e.type_operand;
      }
      case ExprKind::Call: return call(e);
      case ExprKind::This:
        if (fn_->self_class == nullptr) fail(e.pos, "'this' is only available inside a method");
        capture_this(e.pos);
        return fn_->self_class->type;
      case ExprKind::Field: {
        ClassDecl& c = receiver_class(*e.args[0], "field", e);
        int field = c.field(e.text);
        if (field < 0) {
          if (c.method(e.text) != nullptr)
            fail(e.op_pos, fmt::format("'{}' is a method of {}, not a field; call it with .{}(...)", e.text, c.name, e.text));
          fail(e.op_pos, c.is_interface ? fmt::format("interface {} has no fields; '{}' is not one of its methods either", c.name, e.text)
                                        : fmt::format("class {} has no field '{}'", c.name, e.text));
        }
        e.class_index = c.index;
        e.index = uint32_t(field);
        return c.all_fields[size_t(field)]->type;
      }
      case ExprKind::MethodCall: {
        ClassDecl& c = receiver_class(*e.args[0], "method", e);
        const FnDecl* m = c.method(e.text);
        if (m == nullptr && c.field(e.text) >= 0 &&
            type_kind(c.all_fields[size_t(c.field(e.text))]->type) == TypeKind::Function) {  // obj.handler(x)
          auto field = std::make_unique<Expr>();
          field->kind = ExprKind::Field;
          field->pos = e.pos;
          field->op_pos = e.op_pos;
          field->text = e.text;
          field->depth = e.args[0]->depth + 1;
          field->class_index = c.index;
          field->index = uint32_t(c.field(e.text));
          field->type = c.all_fields[field->index]->type;
          field->args.push_back(std::move(e.args[0]));
          e.args[0] = std::move(field);
          e.kind = ExprKind::CallValue;
          return call_value(e, /*callee_checked=*/true);
        }
        if (m == nullptr) {
          if (c.field(e.text) >= 0) fail(e.op_pos, fmt::format("'{}' is a field of {}, not a method", e.text, c.name));
          if (e.text == "init") fail(e.op_pos, fmt::format("'init' cannot be called: new {}(...) calls it", c.name));
          fail(e.op_pos, fmt::format("{} {} has no method '{}'", kind_word(c), c.name, e.text));
        }
        method_arguments(e, *m, 1);
        e.class_index = c.index;
        e.index = uint32_t(c.method_slot(e.text));
        return m->result;
      }
      case ExprKind::New: {
        generic_use(e.type_operand, e.op_pos);
        ClassDecl* c = class_of(e.type_operand);
        if (c == nullptr) fail(e.op_pos, fmt::format("unknown class '{}'", e.text));
        if (c->is_interface)
          fail(e.op_pos, fmt::format("'{}' is an interface and cannot be instantiated; create an object of a class that implements it", c->name));
        if (c->is_abstract) fail(e.op_pos, fmt::format("class '{}' is abstract and cannot be instantiated", c->name));
        e.class_index = c->index;
        if (c->init != nullptr) {
          method_arguments(e, *c->init, 0);
        } else if (!e.args.empty()) {
          fail(e.op_pos, fmt::format("class {} has no init, so new {}() takes no arguments", c->name, c->name));
        }
        return c->type;
      }
      case ExprKind::SuperCall: return super_call(e);
      case ExprKind::CallValue: return call_value(e);
      case ExprKind::Lambda: return lambda(e);
      case ExprKind::Is:
      case ExprKind::As: {
        Type from = value(*e.args[0]);
        check_type(e.type_operand, e.type_pos);
        const ClassDecl* to = class_of(e.type_operand);
        std::string_view op = e.kind == ExprKind::Is ? "is" : "as";
        if (to == nullptr)
          fail(e.type_pos, fmt::format("'{}' needs a class or interface on its right, got {}", op, type_name(e.type_operand)));
        const ClassDecl* c = class_of(from);
        if (c == nullptr && from != Type::Null)
          fail(e.op_pos, fmt::format("'{}' tests an object, got {}", op, type_name(from)));
        // Between two classes, one must extend the other; a class unrelated to an interface
        // may still have a subclass that implements it.
        if (c != nullptr && !c->is_interface && !to->is_interface && !c->extends(to) && !to->extends(c))
          fail(e.op_pos, fmt::format("'{} {}' can never succeed: {} and {} are not related", op, to->name, c->name, to->name));
        e.class_index = to->index;
        return e.kind == ExprKind::Is ? Type::Bool : to->type;
      }
      case ExprKind::Spawn: {
        if (type_kind(variable_type(e.text)) == TypeKind::Function) {  // spawn f(x) of a function value
          callee_to_argument(e);
          call_value(e);
          e.callee = Callee::Value;
          return Type::Int;
        }
        if (is_builtin_name(e.text))
          fail(e.op_pos, fmt::format("spawn needs a function of the program, but '{}' is a builtin", e.text));
        user_call(e);
        return Type::Int;  // the thread handle
      }
    }
    return Type::Void;
  }

  // The result type of `a op b`, or an error at the operator. `text` is the operator as
  // written ("+" or "+=" for a compound assignment).
  Type binary_type(BinOp op, std::string_view text, Type a, Type b, SourcePos at) {
    if (op == BinOp::Add && (a == Type::String || b == Type::String)) {
      for (Type t : {a, b})
        if (!assignable(t, Type::String))
          fail(at, fmt::format("operator '{}' joins two strings, got {} and {}; convert the {} with string(x)", text,
                               type_name(a), type_name(b), type_name(t)));
      return Type::String;
    }
    if ((op == BinOp::Eq || op == BinOp::Ne) && (is_reference(a) || is_reference(b))) {
      const ClassDecl* ca = class_of(a);
      const ClassDecl* cb = class_of(b);
      bool interface_side = ca != nullptr && cb != nullptr && (ca->is_interface || cb->is_interface);
      if (!assignable(a, b) && !assignable(b, a) && !interface_side)
        fail(at, fmt::format("operator '{}' cannot compare {} with {}", text, type_name(a), type_name(b)));
      return Type::Bool;
    }
    enum Allowed { IntOnly, Arith, IntOrBool, BoolOnly, Equality };
    Allowed allowed = Arith;
    switch (op) {
      case BinOp::Rem: case BinOp::Shl: case BinOp::Shr: case BinOp::Ushr: allowed = IntOnly; break;
      case BinOp::Add: case BinOp::Sub: case BinOp::Mul: case BinOp::Div:
      case BinOp::Lt: case BinOp::Le: case BinOp::Gt: case BinOp::Ge: allowed = Arith; break;
      case BinOp::BitAnd: case BinOp::BitOr: case BinOp::BitXor: allowed = IntOrBool; break;
      case BinOp::And: case BinOp::Or: allowed = BoolOnly; break;
      case BinOp::Eq: case BinOp::Ne: allowed = Equality; break;
    }
    auto ok = [&](Type t) {
      switch (allowed) {
        case IntOnly: return t == Type::Int;
        case Arith: return t == Type::Int || t == Type::Float;
        case IntOrBool: return t == Type::Int || t == Type::Bool;
        case BoolOnly: return t == Type::Bool;
        case Equality: return t == Type::Int || t == Type::Float || t == Type::Bool;
      }
      return false;
    };
    static constexpr std::string_view kWants[] = {"int", "int or float", "int or bool", "bool", "int, float or bool"};
    for (Type t : {a, b})
      if (!ok(t)) fail(at, fmt::format("operator '{}' needs {} operands, got {}", text, kWants[allowed], type_name(t)));
    if (a != b)
      fail(at, fmt::format("operator '{}' needs both operands of the same type, got {} and {}{}", text, type_name(a),
                           type_name(b), conversion_hint(a, b)));
    return is_comparison(op) ? Type::Bool : a;
  }

  // Checks the arguments of `e` against `params` (types; Void = "any array").
  void arguments(Expr& e, const std::vector<Type>& params, std::string_view what) {
    if (e.args.size() != params.size())
      fail(e.op_pos, fmt::format("{} takes {}, got {}", what, plural(params.size(), "argument"), e.args.size()));
    for (size_t i = 0; i < params.size(); i++) {
      Type t = value(*e.args[i]);
      if (params[i] == Type::Void) {
        if (!is_array(t)) fail(e.args[i]->pos, fmt::format("argument {} of {} must be an array, got {}", i + 1, what, type_name(t)));
      } else if (!assignable(t, params[i])) {
        fail(e.args[i]->pos, fmt::format("argument {} of {} must be {}, got {}{}", i + 1, what, type_name(params[i]),
                                         type_name(t), conversion_hint(params[i], t)));
      }
    }
  }

  // The class of the receiver of `.name` (a field or a method).
  ClassDecl& receiver_class(Expr& receiver, std::string_view what, const Expr& access) {
    Type t = value(receiver);
    ClassDecl* c = class_of(t);
    if (c == nullptr)
      fail(access.op_pos, fmt::format("cannot access {} '{}' of a value of type {} (only objects have members)", what,
                                      access.text, type_name(t)));
    return *c;
  }

  // The arguments of a method call, args[first...] of `e`.
  void method_arguments(Expr& e, const FnDecl& m, size_t first) {
    std::string what = fmt::format("'{}.{}'", m.owner->name, m.name);
    size_t n = e.args.size() - first;
    if (n != m.params.size())
      fail(e.op_pos, fmt::format("{} takes {}, got {}", what, plural(m.params.size(), "argument"), n));
    for (size_t i = 0; i < n; i++) {
      Type t = value(*e.args[first + i]);
      if (!assignable(t, m.params[i].type))
        fail(e.args[first + i]->pos, fmt::format("argument {} of {} must be {}, got {}{}", i + 1, what,
                                                 type_name(m.params[i].type), type_name(t),
                                                 conversion_hint(m.params[i].type, t)));
    }
  }

  // A call or spawn of a function of the program.
  Type user_call(Expr& e) {
    auto it = fns_.find(e.text);
    if (it == fns_.end()) {
      if (auto g = generic_fns_.find(e.text); g != generic_fns_.end()) return generic_call(e, *g->second);
      if (Type t = variable_type(e.text); t != Type::Void)
        fail(e.op_pos, fmt::format("'{}' is a variable of type {}, not a function; only functions can be called", e.text, type_name(t)));
      fail(e.op_pos, fmt::format("unknown function '{}'", e.text));
    }
    FnDecl& f = *it->second;
    std::vector<Type> params;
    for (auto& p : f.params) params.push_back(p.type);
    arguments(e, params, fmt::format("'{}'", f.name));
    e.callee = Callee::User;
    e.index = f.index;
    return f.result;
  }

  Type call(Expr& e) {
    // A variable of function type comes before the functions of that name (a name means
    // a local, a field, a global, then a function); one of another type does not hide them.
    if (type_kind(variable_type(e.text)) == TypeKind::Function) {
      callee_to_argument(e);
      e.kind = ExprKind::CallValue;
      return call_value(e);
    }
    if (e.text == "print") {
      for (auto& a : e.args) value(*a);
      e.callee = Callee::Print;
      return Type::Void;
    }
    if (const Builtin* b = find_builtin(e.text)) {
      if (b->callee == Callee::Len) {  // len takes an array or a string
        if (e.args.size() != 1) fail(e.op_pos, fmt::format("'len' takes 1 argument, got {}", e.args.size()));
        Type t = value(*e.args[0]);
        if (!is_array(t) && !assignable(t, Type::String))
          fail(e.args[0]->pos, fmt::format("argument 1 of 'len' must be an array or a string, got {}", type_name(t)));
        e.callee = Callee::Len;
        return Type::Int;
      }
      std::vector<Type> params;
      for (char c : b->params) params.push_back(letter_type(c));  // '*' -> Void = any array
      arguments(e, params, fmt::format("'{}'", b->name));
      if (b->native == NativeId::arraycopy && e.args[0]->type != e.args[2]->type)
        fail(e.args[2]->pos, fmt::format("arraycopy needs src and dst arrays of the same type, got {} and {}",
                                         type_name(e.args[0]->type), type_name(e.args[2]->type)));
      e.callee = b->callee;
      e.index = uint32_t(b->native);
      return b->result;
    }
    if (const ClassDecl* self = fn_->self_class) {  // a method of `this`, named bare
      if (e.text == "init") fail(e.op_pos, fmt::format("'init' cannot be called: new {}(...) calls it", self->name));
      if (const FnDecl* m = self->method(e.text)) {
        capture_this(e.pos);
        method_arguments(e, *m, 0);
        e.callee = Callee::Method;
        e.class_index = self->index;
        e.index = uint32_t(self->method_slot(e.text));
        return m->result;
      }
    }
    return user_call(e);
  }

  // super.m(args): the superclass's m, or super.init(args) as the first statement of an
  // init. e.index is the function called (no dispatch).
  Type super_call(Expr& e) {
    const ClassDecl* c = fn_->self_class;
    if (c == nullptr || c->super == nullptr)
      fail(e.pos, c == nullptr ? "'super' is only available inside a method" : fmt::format("class '{}' has no superclass", c->name));
    const FnDecl* m = e.text == "init" ? c->super->effective_init : c->super->method(e.text);
    if (e.text == "init") {
      if (fn_ != c->init || !first_statement_)
        fail(e.pos, "super.init(...) can only be the first statement of an init");
      if (m == nullptr) fail(e.op_pos, fmt::format("'{}' has no init to call", c->super->name));
    } else if (m == nullptr) {
      fail(e.op_pos, fmt::format("superclass '{}' has no method '{}'", c->super->name, e.text));
    } else if (m->is_abstract) {
      fail(e.op_pos, fmt::format("{}.{} is abstract: it has no body to call", m->owner->name, m->name));
    }
    capture_this(e.pos);
    method_arguments(e, *m, 0);
    e.index = m->index;
    return m->result;
  }

  // A call f(args) or spawn f(args) of a variable `f` of function type: the variable
  // becomes args[0], a Name.
  static void callee_to_argument(Expr& e) {
    auto name = std::make_unique<Expr>();
    name->kind = ExprKind::Name;
    name->pos = e.pos;
    name->op_pos = e.op_pos;
    name->text = e.text;
    e.args.insert(e.args.begin(), std::move(name));
  }

  // args[0](args[1...]): args[0] is of a function type, whose parameters the arguments
  // convert to. type_operand is the function type.
  Type call_value(Expr& e, bool callee_checked = false) {
    Type f = callee_checked ? e.args[0]->type : value(*e.args[0]);
    if (type_kind(f) != TypeKind::Function)
      fail(e.op_pos, fmt::format("cannot call a value of type {} (only functions can be called)", type_name(f)));
    const TypeInfo& info = type_info(f);
    size_t n = e.args.size() - 1;
    if (n != info.args.size())
      fail(e.op_pos, fmt::format("a function of type {} takes {}, got {}", type_name(f), plural(info.args.size(), "argument"), n));
    for (size_t i = 0; i < n; i++) {
      Type t = value(*e.args[1 + i]);
      if (!assignable(t, info.args[i]))
        fail(e.args[1 + i]->pos, fmt::format("argument {} of a function of type {} must be {}, got {}{}", i + 1, type_name(f),
                                             type_name(info.args[i]), type_name(t), conversion_hint(info.args[i], t)));
    }
    e.type_operand = f;
    return info.elem;
  }

  static Type fn_type(const FnDecl& f) {
    std::vector<Type> params;
    for (auto& p : f.params) params.push_back(p.type);
    return function_type(params, f.result);
  }

  // fn(params): R { body }: a function of its own, named after the one it is written in
  // (main$fn@12), that sees that function's variables (captured into cells) and `this`.
  Type lambda(Expr& e) {
    FnDecl& f = *e.lambda;
    f.enclosing = fn_;
    f.self_class = fn_->self_class;
    f.name = fmt::format("{}{}$fn@{}", fn_->owner != nullptr ? fn_->owner->name + "." : "", fn_->name, f.pos.line);
    if (next_fn_ >= 65535) fail(f.pos, "too many functions, methods and lambdas (at most 65535)");
    f.index = next_fn_++;
    prog_.lambdas.push_back(&f);
    for (auto& p : f.params) check_type(p.type, p.pos);
    if (f.result != Type::Void) check_type(f.result, f.result_pos);
    f.value_type = fn_type(f);
    outer_.push_back({fn_, std::move(scopes_), std::move(loops_), for_count_});
    bool first_statement = first_statement_;
    fn_ = &f;
    scopes_.assign(1, {});
    loops_.clear();
    for_count_ = 0;
    f.local_types.clear();
    f.local_names.clear();
    new_slot("$closure", f.value_type, f.pos);  // local 0: the closure, which holds the captures
    for (auto& p : f.params) {
      if (scopes_[0].count(p.name)) fail(p.pos, fmt::format("parameter '{}' is declared twice", p.name));
      check_not_declared(p.name, p.pos);
      declare(p.name, p.type, p.pos, false);
    }
    bool completes = block(*f.body, /*function_body=*/true);
    if (completes && f.result != Type::Void)
      fail(f.body->end_pos, fmt::format("the lambda must return a value of type {} on every path; add a return at the end",
                                        type_name(f.result)));
    Context outer = std::move(outer_.back());
    outer_.pop_back();
    fn_ = outer.fn;
    scopes_ = std::move(outer.scopes);
    loops_ = std::move(outer.loops);
    for_count_ = outer.for_count;
    first_statement_ = first_statement;
    return f.value_type;
  }

  Program& prog_;
  std::unordered_map<Type, ClassDecl*> classes_;
  std::unordered_set<const ClassDecl*> laid_out_;
  std::unordered_set<const ClassDecl*> laying_out_;  // a cycle of interfaces ends here
  bool first_statement_ = false;  // checking the first statement of a function's body
  std::unordered_map<std::string, FnDecl*> fns_;
  std::unordered_map<std::string, uint32_t> globals_;
  FnDecl* fn_ = nullptr;
  std::vector<std::unordered_map<std::string, Local>> scopes_;
  std::vector<Loop> loops_;
  int for_count_ = 0;
  // The functions enclosing the lambda being checked, outermost first, each with its
  // scopes and loops as they were where the lambda is written.
  struct Context {
    FnDecl* fn;
    std::vector<std::unordered_map<std::string, Local>> scopes;
    std::vector<Loop> loops;
    int for_count;
  };
  std::vector<Context> outer_;
  uint32_t next_fn_ = 0;  // the next function index: lambdas and instances come after the source's functions and methods
  // Generics: the declarations by name, the instances made, what is left to check.
  std::unordered_map<std::string, const ClassDecl*> generic_classes_;
  std::unordered_map<std::string, const FnDecl*> generic_fns_;
  std::map<std::pair<const FnDecl*, std::vector<Type>>, FnDecl*> fn_instances_;
  struct Pending {
    ClassDecl* cls;
    FnDecl* fn;
  };
  std::vector<Pending> pending_;
  struct PendingBounds {
    std::vector<TypeParamDecl> params;
    std::vector<Type> args;
    SourcePos at;
  };
  std::vector<PendingBounds> pending_bounds_;
  std::unordered_set<const ClassDecl*> hierarchy_done_;
  size_t source_classes_ = 0;  // prog_.classes before the first instance
  bool laid_out_all_ = false;  // every class of the source laid out: an instance is laid out when made
  uint32_t selectors_ = 0;
  int instances_ = 0;
};

}  // namespace

void check_program(Program& program) { Checker(program).run(); }

}  // namespace vm
