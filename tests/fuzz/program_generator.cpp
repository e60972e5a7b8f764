// The generator works in two passes: first every declaration (interfaces, classes with
// their fields, init and method signatures, globals, functions), then every body, so a
// body may use anything the program declares. Bodies come from a typed expression
// generator: gen(T) writes an expression whose static type converts to T, and returns
// that static type, which inferred locals, `==` and generic calls need exactly.
#include "tests/fuzz/program_generator.h"

#include <climits>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "tests/fuzz/gen_types.h"

namespace minigen {

namespace {

constexpr int kFuel = 300;     // calls a program may make before every call returns at once
constexpr int kMaxOuts = 150;  // prints outside main's own statements

struct Var {
  std::string name;  // as read: a local, a global, `this.f` or a bare field name
  TypeP type;
  bool mut = true;
  bool nullable = false;  // declared for null: only compared, tested and printed
};

struct E {
  std::string s;
  TypeP t;  // the static type
};

struct Ctx {
  std::vector<Var> vars;
  TypeP self;                // `this`'s type, or null
  TypeP ret;                 // result type of the body being written (Kind::Void for none)
  int loops = 0;             // loops around the statement within this body
  int blocks = 0;            // blocks around the statement within this body
  int indent = 1;
  bool main = false;         // main's own body
  bool init = false;         // an init: no calls, no reads of `this`'s fields
  bool can_super = false;    // a method's own body
  int max_new = INT_MAX;     // `new` only of classes created before this index
  bool in_generic_function = false;
  bool pure = false;         // no calls, so no side effects: the expression may be written twice
  std::map<std::string, std::string> anchors;  // type parameter -> an expression of it
};

struct Function {
  std::string name;
  std::vector<TypeParam> type_params;
  std::vector<Param> params;
  TypeP result;
  std::string annotation;
  std::string body;
  enum Kind { Plain, Same, Max, Apply } kind = Plain;
};

// Builders for the two declaration structs (brace initialisers would leave members out).
Method method(std::string name, std::vector<Param> params, TypeP result, bool is_abstract = false) {
  Method m;
  m.name = std::move(name);
  m.params = std::move(params);
  m.result = std::move(result);
  m.is_abstract = is_abstract;
  return m;
}

Function function(std::string name, std::vector<TypeParam> type_params, std::vector<Param> params, TypeP result) {
  Function f;
  f.name = std::move(name);
  f.type_params = std::move(type_params);
  f.params = std::move(params);
  f.result = std::move(result);
  return f;
}

using Prod = std::pair<int, std::function<std::optional<E>()>>;

class Generator {
 public:
  Generator(Choices& c, const GenOptions& o) : c_(c), o_(o), budget_(o.statements) {}

  Generated run() {
    make_interfaces();
    int n = int(c_.range(2, std::max(2, o_.classes)));
    for (int i = 0; i < n; i++) make_class(nullptr, nullptr, false);
    complete_classes();
    make_globals();
    make_functions();
    write_bodies();
    Generated g;
    g.source = print_program();
    g.expected_error = expected_error_;
    return g;
  }

 private:
  Choices& c_;
  GenOptions o_;
  int budget_;
  int names_ = 0;
  std::vector<std::unique_ptr<Class>> classes_;  // interfaces and classes, in creation order
  std::vector<TypeP> universe_;                  // object types a program uses as values
  std::vector<TypeP> fn_types_;
  std::map<std::string, TypeP> bounds_;  // type parameter -> its bound
  std::vector<Function> functions_;
  std::vector<std::pair<Var, std::string>> globals_;  // and their initialisers
  std::vector<std::pair<std::string, TypeP>> late_globals_;  // reference globals main assigns first
  std::string worker_;                                      // the function threads run
  std::string deep_;                                        // unbounded recursion (runtime_error mode)
  std::string main_body_;
  bool main_returns_int_ = false;
  std::string expected_error_;

  std::string fresh(const char* prefix) { return prefix + std::to_string(names_++); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[c_.below(uint32_t(v.size()))];
  }
  static std::string ind(int n) { return std::string(size_t(n) * 4, ' '); }

  // ---- literals ----

  std::string int_lit() {
    switch (c_.below(10)) {
      case 0: return std::to_string(c_.range(0, 3));
      case 1: return "(-" + std::to_string(c_.range(1, 100)) + ")";
      case 2: return "0x" + std::string(1, "0123456789abcdef"[c_.below(16)]) + "f";
      case 3: return pick(std::vector<std::string>{"9223372036854775807", "(-9223372036854775808)", "4611686018427387904",
                                                  "0x7fff_ffff", "1_000_000"});
      default: return std::to_string(c_.range(0, 100));
    }
  }
  std::string float_lit() {
    return pick(std::vector<std::string>{"0.0", "0.5", "1.5", "2.0", "3.25", "100.0", "1e3", "2.5e-3", "1e300", "(-1.5)",
                                         "0.1", "7.0"});
  }
  std::string string_lit() {
    return pick(std::vector<std::string>{"\"\"", "\"a\"", "\"hi\"", "\"h\xc3\xa9llo\"", "\"x\\\"y\"", "\"tab\\tz\"",
                                         "\"b\\\\s\"", "\"mini\"", "\"0\""});
  }
  // A literal a global may be initialised with.
  std::string global_lit(const TypeP& t) {
    switch (t->kind) {
      case Kind::Int: return std::to_string(c_.range(0, 1000));
      case Kind::Float: return pick(std::vector<std::string>{"0.5", "2.0", "1e3", "0.25"});
      case Kind::Bool: return c_.chance(1, 2) ? "true" : "false";
      default: return string_lit();
    }
  }

  // ---- types ----

  // Concrete object types of classes created before max_index that convert to t.
  std::vector<TypeP> concrete_for(const TypeP& t, int max_index) {
    std::vector<TypeP> out;
    for (auto& u : universe_)
      if (!u->cls->is_interface && !u->cls->is_abstract && u->cls->index < max_index && converts(u, t)) out.push_back(u);
    return out;
  }
  bool constructible(const TypeP& t, int max_index) {
    return t->kind != Kind::Object || !concrete_for(t, max_index).empty();
  }

  // A type for a parameter, field, result or local: primitives, strings, primitive arrays,
  // object types of the universe that can be constructed with classes before max_index,
  // function types, and the type parameters in scope.
  TypeP value_type(int max_index, const std::vector<std::string>& params = {}) {
    for (;;) {
      switch (c_.below(11)) {
        case 0:
        case 1: return int_type();
        case 2: return float_type();
        case 3: return bool_type();
        case 4: return string_type();
        case 5: return array_of(pick(std::vector<TypeP>{int_type(), float_type(), bool_type()}));
        case 6:
        case 7: {
          std::vector<TypeP> ok;
          for (auto& u : universe_)
            if (constructible(u, max_index)) ok.push_back(u);
          if (!ok.empty()) return pick(ok);
          break;
        }
        case 8:
          if (!fn_types_.empty()) return pick(fn_types_);
          break;
        default:
          if (!params.empty()) return param_type(pick(params));
          break;
      }
    }
  }
  TypeP result_type(const std::vector<std::string>& params = {}) {
    return c_.chance(1, 4) ? void_type() : value_type(INT_MAX, params);
  }
  std::vector<Param> make_params(int max, const std::vector<std::string>& tparams = {}, int max_index = INT_MAX) {
    std::vector<Param> ps;
    for (int i = int(c_.range(0, max)); i > 0; i--) ps.push_back({fresh("p"), value_type(max_index, tparams)});
    return ps;
  }
  static std::vector<std::string> names_of(const std::vector<TypeParam>& tps) {
    std::vector<std::string> out;
    for (auto& tp : tps) out.push_back(tp.name);
    return out;
  }

  // ---- declarations ----

  Class& new_class(const std::string& prefix) {
    classes_.push_back(std::make_unique<Class>());
    Class& c = *classes_.back();
    c.index = int(classes_.size()) - 1;
    c.name = fresh(prefix.c_str());
    return c;
  }
  std::vector<Class*> interfaces() {
    std::vector<Class*> out;
    for (auto& c : classes_)
      if (c->is_interface) out.push_back(c.get());
    return out;
  }

  void make_interfaces() {
    for (int n = int(c_.range(1, 3)); n > 0; n--) {
      std::vector<Class*> earlier = interfaces();
      Class& i = new_class("I");
      i.is_interface = true;
      if (!earlier.empty() && c_.chance(1, 3)) {
        Class* base = pick(earlier);
        if (base->type_params.empty()) i.interfaces.push_back(object_of(base));
      }
      for (int m = int(c_.range(1, 2)); m > 0; m--) {
        Method mt = method(fresh("im"), {}, nullptr);
        for (int p = int(c_.range(0, 2)); p > 0; p--)
          mt.params.push_back({fresh("p"), pick(std::vector<TypeP>{int_type(), float_type(), string_type(), bool_type()})});
        mt.result = pick(std::vector<TypeP>{int_type(), string_type(), float_type(), void_type()});
        mt.is_abstract = true;
        i.methods.push_back(mt);
      }
      universe_.push_back(object_of(&i));
    }
    if (c_.chance(2, 3)) {  // interface Cmp<T> { fn cmp(o: T): int; }, for bounds
      Class& i = new_class("Cmp");
      i.is_interface = true;
      std::string t = fresh("T");
      i.type_params.push_back({t, nullptr});
      i.methods.push_back(method(fresh("cmp"), {{fresh("p"), param_type(t)}}, int_type(), true));
    }
    if (c_.chance(2, 3)) {  // interface Get<T> { fn get(): T; }
      Class& i = new_class("Get");
      i.is_interface = true;
      std::string t = fresh("T");
      i.type_params.push_back({t, nullptr});
      i.methods.push_back(method(fresh("get"), {}, param_type(t), true));
    }
  }

  Class* generic_interface(const char* prefix) {
    for (auto* i : interfaces())
      if (i->name.rfind(prefix, 0) == 0) return i;
    return nullptr;
  }

  // The parameters of the init `new` of this type runs, or nullopt when its class and
  // superclasses have none.
  std::optional<std::vector<TypeP>> effective_init(const TypeP& object) {
    for (TypeP t = object; t;) {
      Substitution s = bindings(t);
      if (t->cls->has_init) {
        std::vector<TypeP> out;
        for (auto& p : t->cls->init_params) out.push_back(subst(p.type, s));
        return out;
      }
      t = t->cls->super ? subst(t->cls->super, s) : nullptr;
    }
    return std::nullopt;
  }

  // A class: forced_super / forced_interface make one that completes an abstract class
  // or an interface nothing implements yet.
  void make_class(TypeP forced_super, TypeP forced_interface, bool concrete) {
    std::vector<TypeP> supers;  // classes to extend: non-generic classes and instances of generic ones
    for (auto& u : universe_)
      if (!u->cls->is_interface) supers.push_back(u);
    uint32_t form = forced_super || forced_interface ? 9 : c_.below(10);
    int generics = 0;
    for (auto& c : classes_) generics += !c->is_interface && !c->type_params.empty();
    bool generic = (form == 6 || form == 7) && generics < 3;
    Class& c = new_class(generic ? "Box" : "C");
    if (forced_super) c.super = forced_super;
    else if (!generic && form >= 3 && !supers.empty()) c.super = pick(supers);
    c.is_abstract = !concrete && !generic && c_.chance(1, 4);
    if (generic) {
      for (int n = int(c_.range(1, 2)); n > 0; n--) c.type_params.push_back({fresh("T"), nullptr});
      Class* cmp = generic_interface("Cmp");
      if (cmp && c_.chance(1, 2)) {
        TypeParam& tp = c.type_params[0];
        tp.bound = object_of(cmp, {param_type(tp.name)});
        bounds_[tp.name] = tp.bound;
      }
    }
    TypeP self = object_of(&c, [&] {
      std::vector<TypeP> args;
      for (auto& tp : c.type_params) args.push_back(param_type(tp.name));
      return args;
    }());
    std::vector<std::string> tparams = names_of(c.type_params);

    // Interfaces: not those the superclass has already.
    std::vector<TypeP> implement;
    if (forced_interface) implement.push_back(forced_interface);
    for (auto* i : interfaces()) {
      if (forced_interface || !c_.chance(1, 3)) continue;
      TypeP it;
      if (i->type_params.empty()) it = object_of(i);
      else if (i->name.rfind("Cmp", 0) == 0) {
        if (generic) continue;
        it = object_of(i, {self});
      } else {
        it = object_of(i, {generic ? param_type(tparams[0]) : pick(std::vector<TypeP>{int_type(), string_type()})});
      }
      if (c.super && reaches(c.super, i)) continue;  // one instance of an interface per class
      implement.push_back(it);
    }
    c.interfaces = implement;

    for (int n = int(c_.range(0, 3)); n > 0; n--) c.fields.push_back({fresh("f"), value_type(c.index, tparams)});
    for (auto& tp : c.type_params) {  // a field of each type parameter, always assigned: gen's anchor
      c.fields.push_back({fresh("a"), param_type(tp.name)});
      if (c.anchor_field.empty()) c.anchor_field = c.fields.back().name;
    }

    // Overrides of the superclass chain's methods; every abstract one in a concrete class.
    if (c.super) {
      std::vector<std::string> seen;
      for (TypeP t = c.super; t;) {
        Substitution s = bindings(t);
        for (auto& m : t->cls->methods) {
          if (std::find(seen.begin(), seen.end(), m.name) != seen.end()) continue;
          seen.push_back(m.name);
          if (!(m.is_abstract && !c.is_abstract) && !c_.chance(1, 4)) continue;
          Method o = method(m.name, {}, subst(m.result, s));
          for (auto& p : m.params) o.params.push_back({fresh("p"), subst(p.type, s)});
          o.is_override = true;
          c.methods.push_back(o);
        }
        t = t->cls->super ? subst(t->cls->super, s) : nullptr;
      }
    }
    // Interface methods not inherited.
    for (auto& it : implement) {
      for (auto& v : methods_of(it, bounds_)) {
        bool have = false;
        for (auto& m : c.methods) have |= m.name == v.method->name;
        MethodView inherited;
        if (have || find_inherited(&c, v.method->name, inherited)) continue;
        Method m = method(v.method->name, {}, v.result);
        for (auto& p : v.params) m.params.push_back({fresh("p"), p});
        c.methods.push_back(m);
      }
    }
    for (int n = int(c_.range(c.super ? 0 : 1, 3)); n > 0; n--) {
      Method m = method(fresh("m"), make_params(3, tparams), result_type(tparams));
      m.is_abstract = c.is_abstract && c_.chance(1, 3);
      c.methods.push_back(m);
    }

    // init: needed for type parameters' anchors and a superclass init with parameters.
    std::optional<std::vector<TypeP>> super_init = c.super ? effective_init(c.super) : std::nullopt;
    c.has_init = generic || !c.fields.empty() || (super_init && !super_init->empty()) || c_.chance(1, 2);
    if (c.has_init) {
      for (auto& tp : c.type_params) c.init_params.push_back({fresh("p"), param_type(tp.name)});
      for (int n = int(c_.range(0, 2)); n > 0; n--) c.init_params.push_back({fresh("p"), value_type(c.index, tparams)});
      write_init(c, self, super_init);
    }

    if (generic) instantiate(c);
    else universe_.push_back(self);
    for (auto& it : implement)
      if (!it->args.empty() && !it->cls->type_params.empty() && c.type_params.empty()) add_universe(it);
  }

  // Whether t is or extends or implements some instance of class or interface c.
  static bool reaches(const TypeP& t, const Class* c) {
    if (t->cls == c) return true;
    for (auto& s : supertypes(t))
      if (reaches(s, c)) return true;
    return false;
  }

  void add_universe(const TypeP& t) {
    for (auto& u : universe_)
      if (same(u, t)) return;
    universe_.push_back(t);
  }

  // One to three instances of a generic class, with type arguments constructible before it.
  void instantiate(const Class& c) {
    for (int n = int(c_.range(1, 3)); n > 0; n--) {
      std::vector<TypeP> args;
      for (auto& tp : c.type_params) {
        std::vector<TypeP> options{int_type(), string_type(), float_type(), bool_type()};
        for (auto& u : universe_)
          if (u->cls != &c && constructible(u, c.index)) options.push_back(u);
        std::vector<TypeP> ok;
        for (auto& o : options)
          if (!tp.bound || converts(o, subst(tp.bound, {{tp.name, o}}))) ok.push_back(o);
        if (ok.empty()) return;
        args.push_back(pick(ok));
      }
      add_universe(object_of(&c, args));
    }
  }

  // Every abstract class and interface in the universe gets a concrete class, so a value
  // of each type can be made.
  void complete_classes() {
    for (size_t i = 0; i < universe_.size(); i++) {
      TypeP u = universe_[i];
      if (!concrete_for(u, INT_MAX).empty()) continue;
      if (u->cls->is_interface) make_class(nullptr, u, true);
      else make_class(u, nullptr, true);
    }
  }

  void write_init(Class& c, const TypeP& self, const std::optional<std::vector<TypeP>>& super_init) {
    Ctx cx;
    cx.self = self;
    cx.ret = void_type();
    cx.init = true;
    cx.max_new = c.index;
    cx.indent = 2;
    for (auto& p : c.init_params) cx.vars.push_back({p.name, p.type});
    for (size_t i = 0; i < c.type_params.size(); i++) cx.anchors[c.type_params[i].name] = c.init_params[i].name;
    std::string out;
    if (super_init && (!super_init->empty() || c_.chance(1, 3))) {
      out += ind(2) + "super.init(";
      for (size_t i = 0; i < super_init->size(); i++) out += (i ? ", " : "") + gen((*super_init)[i], cx, 2).s;
      out += ");\n";
    }
    for (auto& f : c.fields) {
      std::string place = c_.chance(1, 2) ? "this." + f.name : f.name;
      out += ind(2) + place + " = " + gen(f.type, cx, 2).s + ";\n";
    }
    c.init_body = out;
  }

  void make_globals() {
    for (int n = int(c_.range(1, 4)); n > 0; n--) {
      TypeP t = pick(std::vector<TypeP>{int_type(), float_type(), bool_type(), string_type()});
      Var v{fresh("g"), t};
      globals_.push_back({v, global_lit(t)});
    }
    for (int n = int(c_.range(0, 2)); n > 0; n--) {  // reference globals: null until main's first statements
      TypeP t = value_type(INT_MAX);
      if (!is_reference(t) || t->kind == Kind::String) continue;
      std::string name = fresh("g");
      globals_.push_back({Var{name, t}, "null"});
      late_globals_.push_back({name, t});
    }
  }

  void make_functions() {
    fn_types_ = {function_of({int_type()}, int_type()), function_of({int_type(), int_type()}, int_type()),
                 function_of({string_type()}, string_type()), function_of({int_type()}, void_type()),
                 function_of({}, int_type()), function_of({float_type()}, bool_type())};
    for (int n = int(c_.range(2, 5)); n > 0; n--) {
      Function f = function(fresh("fun"), {}, make_params(3), result_type());
      f.annotation = pick(std::vector<std::string>{"", "", "", "@inline\n", "@noinline\n"});
      std::vector<TypeP> ps;
      for (auto& p : f.params) ps.push_back(p.type);
      fn_types_.push_back(function_of(ps, f.result));  // so its name is a value gen can use
      functions_.push_back(f);
    }
    if (c_.chance(2, 3)) {
      Function f = function(fresh("same"), {{fresh("T"), nullptr}}, {}, nullptr);
      TypeP t = param_type(f.type_params[0].name);
      f.params = {{fresh("p"), t}, {fresh("p"), t}, {fresh("p"), bool_type()}};
      f.result = t;
      f.kind = Function::Same;
      functions_.push_back(f);
    }
    if (Class* cmp = generic_interface("Cmp"); cmp && c_.chance(2, 3)) {
      Function f = function(fresh("most"), {{fresh("T"), nullptr}}, {}, nullptr);
      TypeP t = param_type(f.type_params[0].name);
      f.type_params[0].bound = object_of(cmp, {t});
      bounds_[t->name] = f.type_params[0].bound;
      f.params = {{fresh("p"), t}, {fresh("p"), t}};
      f.result = t;
      f.kind = Function::Max;
      functions_.push_back(f);
    }
    if (c_.chance(2, 3)) {
      Function f = function(fresh("apply"), {{fresh("T"), nullptr}, {fresh("T"), nullptr}}, {}, nullptr);
      TypeP a = param_type(f.type_params[0].name), b = param_type(f.type_params[1].name);
      // The third parameter is B's anchor: an anchor that called f would be a fallback
      // that calls, and a fuel guard's fallback must end at once.
      f.params = {{fresh("p"), function_of({a}, b)}, {fresh("p"), a}, {fresh("p"), b}};
      f.result = b;
      f.kind = Function::Apply;
      functions_.push_back(f);
    }
    std::string w = fresh("work");
    worker_ = w;
  }

  // ---- expressions ----

  std::optional<E> choose(std::vector<Prod>& ps) {
    while (!ps.empty()) {
      int total = 0;
      for (auto& p : ps) total += p.first;
      int r = int(c_.below(uint32_t(total)));
      size_t i = 0;
      for (; i + 1 < ps.size() && r >= ps[i].first; i++) r -= ps[i].first;
      if (auto e = ps[i].second()) return e;
      ps.erase(ps.begin() + long(i));
    }
    return std::nullopt;
  }

  std::optional<E> var_of(const TypeP& want, Ctx& cx) {
    std::vector<const Var*> ok;
    for (auto& v : cx.vars)
      if (!v.nullable && converts(v.type, want)) ok.push_back(&v);
    if (ok.empty()) return std::nullopt;
    const Var* v = pick(ok);
    return E{v->name, v->type};
  }

  std::string array_new(const TypeP& elem, const std::string& n) {
    // new (fn(int): int)[n] for functions; new int[][n] for arrays of arrays.
    std::string t = text(elem);
    return elem->kind == Kind::Function ? "new (" + t + ")[" + n + "]" : "new " + t + "[" + n + "]";
  }

  std::string args_for(const std::vector<TypeP>& params, Ctx& cx, int d) {
    std::string out;
    for (size_t i = 0; i < params.size(); i++) out += (i ? ", " : "") + gen(params[i], cx, d).s;
    return out;
  }

  // new U(args). `bounded`: the arguments construct only classes older than U, so that a
  // chain of fallbacks ends (each class's init parameters were chosen to allow it).
  std::string new_of(const TypeP& u, Ctx& cx, int d, bool bounded = false) {
    int saved = cx.max_new;
    if (bounded) cx.max_new = std::min(saved, u->cls->index);
    std::string args;
    if (u->cls->has_init) {
      Substitution s = bindings(u);
      std::vector<TypeP> ps;
      for (auto& p : u->cls->init_params) ps.push_back(subst(p.type, s));
      args = args_for(ps, cx, d);
    }
    cx.max_new = saved;
    return "new " + text(u) + "(" + args + ")";
  }

  // An expression of `want` that always exists: a literal, a construction, a trivial
  // lambda, a type parameter's anchor.
  E fallback(const TypeP& want, Ctx& cx) {
    switch (want->kind) {
      case Kind::Int: return {int_lit(), want};
      case Kind::Float: return {float_lit(), want};
      case Kind::Bool: return {c_.chance(1, 2) ? "true" : "false", want};
      case Kind::String: return {string_lit(), want};
      case Kind::Array: return {array_new(want->elem, std::to_string(c_.range(1, 4))), want};
      case Kind::Object: {
        std::vector<TypeP> ok = concrete_for(want, cx.max_new);
        if (ok.empty()) return {"null /* no class for " + text(want) + " */", want};  // never: see constructible
        TypeP u = pick(ok);
        return {new_of(u, cx, 0, true), u};
      }
      case Kind::Function: return lambda(want, cx, 0);
      case Kind::Param: return {cx.anchors.at(want->name), want};
      case Kind::Void: break;
    }
    return {"0", int_type()};
  }

  E leaf(const TypeP& want, Ctx& cx) {
    if (c_.chance(2, 3))
      if (auto v = var_of(want, cx)) return *v;
    return fallback(want, cx);
  }

  // gen(want): an expression whose static type converts to want. `pure` leaves out calls
  // (and so every side effect): the expression may be written twice.
  E gen(const TypeP& want, Ctx& cx, int d, bool pure = false) {
    struct Restore {
      Ctx& cx;
      bool saved;
      ~Restore() { cx.pure = saved; }
    } restore{cx, cx.pure};
    cx.pure = cx.pure || pure;
    pure = cx.pure;
    if (d <= 0 || want->kind == Kind::Void) return leaf(want, cx);
    bool calls = !pure && !cx.init;
    std::vector<Prod> ps;
    ps.push_back({3, [&] { return var_of(want, cx); }});
    ps.push_back({3, [&] { return member(want, cx, d, calls); }});
    ps.push_back({2, [&] { return element(want, cx, d); }});
    if (calls) {
      ps.push_back({3, [&] { return call_function(want, cx, d); }});
      ps.push_back({2, [&] { return call_value(want, cx, d); }});
      // Not from a generic function: apply<A, B> calling apply<int, fn(string): B> would
      // instantiate without end.
      if (!cx.in_generic_function) ps.push_back({1, [&] { return call_generic(want, cx, d); }});
    }
    auto sub = [&](const TypeP& t) { return gen(t, cx, d - 1, pure).s; };
    auto lit = [&](const std::string& s) { return [s, &want]() -> std::optional<E> { return E{s, want}; }; };
    switch (want->kind) {
      case Kind::Int:
        ps.push_back({2, lit(int_lit())});
        ps.push_back({6, [&]() -> std::optional<E> {
                        static const char* ops[] = {"+", "-", "*", "&", "|", "^", "<<", ">>", ">>>", "/", "%"};
                        std::string op = ops[c_.below(11)];
                        std::string a = sub(want), b = sub(want);
                        if (op == "/" || op == "%") b = "(" + b + " | 1)";  // never zero
                        return E{"(" + a + " " + op + " " + b + ")", want};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> { return E{"(" + std::string(c_.chance(1, 2) ? "-" : "~") + sub(want) + ")", want}; }});
        ps.push_back({1, [&]() -> std::optional<E> {
                        if (c_.chance(1, 2)) return E{"len(" + sub(string_type()) + ")", want};
                        auto a = array_place(cx, d, nullptr);
                        return a ? std::optional<E>(E{"len(" + a->s + ")", want}) : std::nullopt;
                      }});
        ps.push_back({1, [&]() -> std::optional<E> {  // a byte of a string that is never empty
                        std::string s = "(" + gen(string_type(), cx, d - 1, true).s + " + \"#\")";
                        return E{s + "[(" + gen(int_type(), cx, d - 1, true).s + " & 1023) % len(" + s + ")]", want};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> { return E{"int(" + sub(float_type()) + ")", want}; }});
        if (calls) {
          ps.push_back({1, [&]() -> std::optional<E> {
                          auto a = array_place(cx, d, int_type());
                          if (!a) return std::nullopt;
                          return E{"atomic_add(" + a->s + ", " + index(*a, cx, d) + ", " + sub(want) + ")", want};
                        }});
        }
        ps.push_back({1, [&]() -> std::optional<E> {
                        auto a = array_place(cx, d, int_type());
                        if (!a) return std::nullopt;
                        return E{"crc32(" + a->s + ", 0, len(" + a->s + "))", want};
                      }});
        break;
      case Kind::Float:
        ps.push_back({2, lit(float_lit())});
        ps.push_back({4, [&]() -> std::optional<E> {
                        static const char* ops[] = {"+", "-", "*", "/"};
                        return E{"(" + sub(want) + " " + ops[c_.below(4)] + " " + sub(want) + ")", want};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> { return E{"(-" + sub(want) + ")", want}; }});
        ps.push_back({2, [&]() -> std::optional<E> { return E{"float(" + sub(int_type()) + ")", want}; }});
        ps.push_back({1, [&]() -> std::optional<E> { return E{"sqrt(" + sub(want) + ")", want}; }});
        break;
      case Kind::Bool:
        ps.push_back({1, lit(c_.chance(1, 2) ? "true" : "false")});
        ps.push_back({4, [&]() -> std::optional<E> {
                        static const char* ops[] = {"<", "<=", ">", ">=", "==", "!="};
                        TypeP t = c_.chance(3, 4) ? int_type() : float_type();
                        return E{"(" + sub(t) + " " + ops[c_.below(6)] + " " + sub(t) + ")", want};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> { return E{"(!" + sub(want) + ")", want}; }});
        ps.push_back({2, [&]() -> std::optional<E> {
                        static const char* ops[] = {"&&", "||", "&", "|", "^"};
                        return E{"(" + sub(want) + " " + ops[c_.below(5)] + " " + sub(want) + ")", want};
                      }});
        ps.push_back({2, [&]() -> std::optional<E> { return equality(cx, d, pure); }});
        ps.push_back({1, [&]() -> std::optional<E> { return type_test(cx, d); }});
        ps.push_back({1, [&]() -> std::optional<E> {
                        std::vector<const Var*> ok;
                        for (auto& v : cx.vars)
                          if (v.nullable) ok.push_back(&v);
                        if (ok.empty()) return std::nullopt;
                        return E{"(" + pick(ok)->name + (c_.chance(1, 2) ? " == null)" : " != null)"), want};
                      }});
        break;
      case Kind::String:
        ps.push_back({2, lit(string_lit())});
        // Every concatenation is clipped, so no string grows with the iterations of a loop.
        ps.push_back({3, [&]() -> std::optional<E> { return E{"clip(" + sub(want) + " + " + sub(want) + ")", want}; }});
        ps.push_back({2, [&]() -> std::optional<E> {
                        TypeP t = pick(std::vector<TypeP>{int_type(), float_type(), bool_type(), string_type()});
                        return E{"string(" + sub(t) + ")", want};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> {
                        std::string s = gen(want, cx, d - 1, true).s, i = gen(int_type(), cx, d - 1, true).s;
                        std::string cut = "(" + i + " & 1023) % (len(" + s + ") + 1)";
                        return E{c_.chance(1, 2) ? "substring(" + s + ", " + cut + ", len(" + s + "))"
                                                 : "substring(" + s + ", 0, " + cut + ")",
                                 want};
                      }});
        break;
      case Kind::Object:
        ps.push_back({3, [&]() -> std::optional<E> {
                        std::vector<TypeP> ok = concrete_for(want, cx.max_new);
                        if (ok.empty()) return std::nullopt;
                        TypeP u = pick(ok);
                        return E{new_of(u, cx, d - 1), u};
                      }});
        ps.push_back({1, [&]() -> std::optional<E> {  // an upcast, free
                        auto v = var_of(want, cx);
                        if (!v) return std::nullopt;
                        return E{"(" + v->s + " as " + text(want) + ")", want};
                      }});
        break;
      case Kind::Function:
        ps.push_back({3, [&]() -> std::optional<E> { return lambda(want, cx, d); }});
        ps.push_back({2, [&]() -> std::optional<E> {
                        for (auto& f : functions_) {
                          if (f.kind != Function::Plain) continue;
                          std::vector<TypeP> ps2;
                          for (auto& p : f.params) ps2.push_back(p.type);
                          if (same(function_of(ps2, f.result), want)) return E{f.name, want};
                        }
                        return std::nullopt;
                      }});
        break;
      case Kind::Param:
        ps.push_back({2, [&]() -> std::optional<E> { return E{cx.anchors.at(want->name), want}; }});
        break;
      case Kind::Array:
        ps.push_back({2, [&]() -> std::optional<E> {
                        if (is_reference(want->elem)) return std::nullopt;  // elements would be null
                        return E{array_new(want->elem, std::to_string(c_.range(1, 5))), want};
                      }});
        break;
      case Kind::Void: break;
    }
    if (auto e = choose(ps)) return *e;
    return leaf(want, cx);
  }

  // `(i & 1023) % len(a)`: always an index of a, which is never empty.
  std::string index(const E& array, Ctx& cx, int d) {
    return "(" + gen(int_type(), cx, d - 1, true).s + " & 1023) % len(" + array.s + ")";
  }

  // An array expression without side effects (it is written twice): a variable, or an
  // element of an array of arrays. elem: the element type wanted, or null for any.
  std::optional<E> array_place(Ctx& cx, int d, const TypeP& elem) {
    std::vector<E> ok;
    for (auto& v : cx.vars) {
      if (v.nullable || v.type->kind != Kind::Array) continue;
      if (!elem || same(v.type->elem, elem)) ok.push_back({v.name, v.type});
      if (v.type->elem->kind == Kind::Array && (!elem || same(v.type->elem->elem, elem))) {
        E outer{v.name, v.type};
        ok.push_back({v.name + "[" + index(outer, cx, d) + "]", v.type->elem});
      }
    }
    if (ok.empty()) return std::nullopt;
    return pick(ok);
  }

  std::optional<E> element(const TypeP& want, Ctx& cx, int d) {
    std::vector<E> ok;
    for (auto& v : cx.vars)
      if (!v.nullable && v.type->kind == Kind::Array && converts(v.type->elem, want)) ok.push_back({v.name, v.type});
    if (ok.empty()) {
      auto a = array_place(cx, d, nullptr);
      if (!a || !converts(a->t->elem, want)) return std::nullopt;
      ok.push_back(*a);
    }
    E a = pick(ok);
    return E{a.s + "[" + index(a, cx, d) + "]", a.t->elem};
  }

  // Receivers of member accesses: `this`, object variables, elements of arrays of
  // objects, and a new object.
  std::vector<E> receivers(Ctx& cx, int d, bool calls) {
    std::vector<E> out;
    if (cx.self && !cx.init) out.push_back({"this", cx.self});
    for (auto& v : cx.vars) {
      if (v.nullable) continue;
      if (v.type->kind == Kind::Object || (v.type->kind == Kind::Param && bounds_.count(v.type->name)))
        out.push_back({v.name, v.type});
      if (v.type->kind == Kind::Array && v.type->elem->kind == Kind::Object) {
        E a{v.name, v.type};
        out.push_back({a.s + "[" + index(a, cx, d) + "]", v.type->elem});
      }
    }
    if (calls && c_.chance(1, 3) && !universe_.empty()) {
      TypeP u = pick(universe_);
      std::vector<TypeP> ok = concrete_for(u, cx.max_new);
      if (!ok.empty()) {
        TypeP k = pick(ok);
        out.push_back({"(" + new_of(k, cx, d - 1) + ")", k});
      }
    }
    return out;
  }

  // A field read, a method call or a call of a function-typed field, on some receiver.
  std::optional<E> member(const TypeP& want, Ctx& cx, int d, bool calls) {
    std::vector<E> rs = receivers(cx, d, calls);
    for (int tries = 0; tries < 3 && !rs.empty(); tries++) {
      E r = pick(rs);
      std::vector<std::function<E()>> options;
      bool bare = r.s == "this" && c_.chance(1, 2);  // a member of this may be named bare
      std::string dot = bare ? "" : r.s + ".";
      if (r.t->kind == Kind::Object && r.s != "this") {  // this's fields are variables already
        for (auto& f : fields_of(r.t)) {
          if (converts(f.type, want)) options.push_back([=] { return E{dot + f.name, f.type}; });
          if (calls && f.type->kind == Kind::Function && f.type->result->kind != Kind::Void &&
              converts(f.type->result, want))
            options.push_back([=, this, &cx] { return E{dot + f.name + "(" + args_for(f.type->args, cx, d - 1) + ")", f.type->result}; });
        }
      }
      if (calls) {
        for (auto& m : methods_of(r.t, bounds_)) {
          if (m.result->kind == Kind::Void || !converts(m.result, want)) continue;
          options.push_back([=, this, &cx] { return E{dot + m.method->name + "(" + args_for(m.params, cx, d - 1) + ")", m.result}; });
        }
        if (r.s == "this" && cx.can_super && cx.self->cls->super) {
          for (auto& m : cx.self->cls->methods) {
            MethodView v;
            if (!m.is_override || !find_inherited(cx.self->cls, m.name, v) || v.method->is_abstract) continue;
            if (v.result->kind == Kind::Void || !converts(v.result, want)) continue;
            options.push_back([=, this, &cx] { return E{"super." + v.method->name + "(" + args_for(v.params, cx, d - 1) + ")", v.result}; });
          }
        }
      }
      if (!options.empty()) return pick(options)();
    }
    return std::nullopt;
  }

  std::optional<E> call_function(const TypeP& want, Ctx& cx, int d) {
    std::vector<const Function*> ok;
    for (auto& f : functions_)
      if (f.kind == Function::Plain && f.result->kind != Kind::Void && converts(f.result, want)) ok.push_back(&f);
    if (ok.empty()) return std::nullopt;
    const Function* f = pick(ok);
    std::vector<TypeP> ps;
    for (auto& p : f->params) ps.push_back(p.type);
    return E{f->name + "(" + args_for(ps, cx, d - 1) + ")", f->result};
  }

  std::optional<E> call_value(const TypeP& want, Ctx& cx, int d) {
    std::vector<const Var*> ok;
    for (auto& v : cx.vars)
      if (!v.nullable && v.type->kind == Kind::Function && v.type->result->kind != Kind::Void &&
          converts(v.type->result, want))
        ok.push_back(&v);
    if (ok.empty() || c_.chance(1, 5)) {  // a lambda called where it is written
      TypeP t = function_of({int_type()}, want);
      return E{"(" + lambda(t, cx, d - 1).s + ")(" + gen(int_type(), cx, d - 1).s + ")", want};
    }
    const Var* v = pick(ok);
    return E{v->name + "(" + args_for(v->type->args, cx, d - 1) + ")", v->type->result};
  }

  // An argument whose static type is exactly t: type arguments of generic functions are
  // inferred from the first argument that gives them.
  std::string exact(const TypeP& t, Ctx& cx, int d) {
    E e = gen(t, cx, d);
    if (same(e.t, t)) return e.s;
    return "(" + e.s + " as " + text(t) + ")";  // an upcast to a class or interface
  }

  std::optional<E> call_generic(const TypeP& want, Ctx& cx, int d) {
    std::vector<const Function*> ok;
    for (auto& f : functions_) {
      if (f.kind == Function::Same && want->kind != Kind::Array && want->kind != Kind::Function) ok.push_back(&f);
      if (f.kind == Function::Max && want->kind == Kind::Object &&
          converts(want, subst(f.type_params[0].bound, {{f.type_params[0].name, want}})))
        ok.push_back(&f);
      if (f.kind == Function::Apply && want->kind != Kind::Array) ok.push_back(&f);
    }
    if (ok.empty()) return std::nullopt;
    const Function* f = pick(ok);
    switch (f->kind) {
      case Function::Same:
        return E{f->name + "(" + exact(want, cx, d - 1) + ", " + gen(want, cx, d - 1).s + ", " +
                     gen(bool_type(), cx, d - 1).s + ")",
                 want};
      case Function::Max:
        return E{f->name + "(" + exact(want, cx, d - 1) + ", " + gen(want, cx, d - 1).s + ")", want};
      case Function::Apply: {
        TypeP a = pick(std::vector<TypeP>{int_type(), string_type(), float_type()});
        return E{f->name + "(" + exact(function_of({a}, want), cx, d - 1) + ", " + gen(a, cx, d - 1).s + ", " +
                     gen(want, cx, d - 1).s + ")",
                 want};
      }
      default: return std::nullopt;
    }
  }

  std::optional<E> equality(Ctx& cx, int d, bool pure) {
    std::vector<TypeP> types{string_type(), string_type()};
    for (auto& v : cx.vars)
      if (!v.nullable && (v.type->kind == Kind::Object || v.type->kind == Kind::Function || v.type->kind == Kind::Param ||
                          v.type->kind == Kind::Array))
        types.push_back(v.type);
    TypeP t = pick(types);
    E a = gen(t, cx, d - 1, pure);
    E b = gen(a.t, cx, d - 1, pure);  // b converts to a's type: comparable
    return E{"(" + a.s + (c_.chance(1, 2) ? " == " : " != ") + b.s + ")", bool_type()};
  }

  // Types `is` and `as` may name for a value of static type t: related classes, and
  // interfaces without type arguments (no relation needed).
  std::vector<TypeP> related(const TypeP& t) {
    std::vector<TypeP> out;
    for (auto& u : universe_)
      if (converts(u, t) || converts(t, u) || (u->cls->is_interface && u->args.empty())) out.push_back(u);
    return out;
  }

  std::optional<E> type_test(Ctx& cx, int d) {
    std::vector<E> rs = receivers(cx, d, false);
    std::vector<E> objects;
    for (auto& r : rs)
      if (r.t->kind == Kind::Object) objects.push_back(r);
    if (objects.empty()) return std::nullopt;
    E r = pick(objects);
    std::vector<TypeP> to = related(r.t);
    if (to.empty()) return std::nullopt;
    return E{"(" + r.s + " is " + text(pick(to)) + ")", bool_type()};
  }

  // fn(p: A): R { body }: with depth 0 a trivial body; else statements that may write the
  // captured locals.
  E lambda(const TypeP& t, Ctx& cx, int d) {
    Ctx lc;
    for (auto& v : cx.vars) lc.vars.push_back(v);
    if (cx.init && cx.self)  // runs after init, when every field is assigned
      for (auto& f : fields_of(cx.self)) lc.vars.push_back({c_.chance(1, 2) ? f.name : "this." + f.name, f.type});
    lc.self = cx.self;
    lc.ret = t->result;
    lc.anchors = cx.anchors;
    lc.in_generic_function = cx.in_generic_function;
    lc.indent = cx.indent + 1;
    std::string head = "fn(";
    for (size_t i = 0; i < t->args.size(); i++) {
      std::string p = fresh("q");
      head += (i ? ", " : "") + p + ": " + text(t->args[i]);
      lc.vars.push_back({p, t->args[i]});
    }
    head += ")";
    if (t->result->kind != Kind::Void) head += ": " + text(t->result);
    if (d <= 0 || budget_ <= 0) {
      if (t->result->kind == Kind::Void) return {head + " { }", t};
      return {head + " { return " + leaf(t->result, lc).s + "; }", t};
    }
    std::string body = guard(lc);
    block(lc, int(c_.range(1, 3)), body);
    if (t->result->kind != Kind::Void) body += ind(lc.indent) + "return " + gen(t->result, lc, 2).s + ";\n";
    return {head + " {\n" + body + ind(cx.indent) + "}", t};
  }

  // ---- statements ----

  std::string guard(Ctx& cx) {
    std::string r = cx.ret->kind == Kind::Void ? "return;" : "return " + fallback(cx.ret, cx).s + ";";
    return ind(cx.indent) + "if (fuel <= 0) { " + r + " }\n" + ind(cx.indent) + "fuel -= 1;\n";
  }

  void block(Ctx& cx, int n, std::string& out) {
    size_t scope = cx.vars.size();
    for (int i = 0; i < n; i++) statement(cx, out);
    cx.vars.resize(scope);
  }

  // `{ ... }` of n statements, one level deeper.
  std::string nested(Ctx& cx, int n, const std::vector<Var>& locals = {}) {
    std::string out = "{\n";
    cx.indent++;
    cx.blocks++;
    size_t scope = cx.vars.size();
    for (auto& v : locals) cx.vars.push_back(v);
    block(cx, budget_ > 0 ? n : std::min(n, 1), out);
    cx.vars.resize(scope);
    cx.blocks--;
    cx.indent--;
    return out + ind(cx.indent) + "}";
  }

  std::string print_stmt(Ctx& cx, const std::string& args) {
    if (cx.main && cx.loops == 0) return "print(" + args + ");";
    return "if (outs < " + std::to_string(kMaxOuts) + ") { outs += 1; print(" + args + "); }";
  }

  TypeP local_type(Ctx& cx) {
    std::vector<std::string> ps;
    for (auto& [name, expr] : cx.anchors) ps.push_back(name);
    return value_type(cx.max_new, ps);
  }

  void statement(Ctx& cx, std::string& out) {
    budget_--;
    std::string pre = ind(cx.indent);
    bool deep = cx.blocks >= 3;
    int kind = 0;
    for (int tries = 0;; tries++) {
      kind = int(c_.below(24));
      if (tries > 20) kind = 0;
      if (cx.init && kind != 0 && kind != 1) continue;
      if ((kind >= 7 && kind <= 10) && deep) continue;
      if ((kind == 9 || kind == 10) && cx.loops >= 2) continue;
      if (kind == 11 && cx.loops == 0) continue;
      if (kind == 12 && cx.main && o_.runtime_error) continue;  // main must reach its error
      if (kind == 21 && !(cx.main && cx.blocks == 0)) continue;
      break;
    }
    int d = int(c_.range(1, 3));
    switch (kind) {
      case 0:
      case 1:
      case 2: {  // var
        TypeP t = local_type(cx);
        E e = gen(t, cx, d);
        std::string name = fresh("v");
        if (c_.chance(1, 2)) {
          out += pre + "var " + name + " = " + e.s + ";\n";
          cx.vars.push_back({name, e.t});
        } else {
          out += pre + "var " + name + ": " + text(t) + " = " + e.s + ";\n";
          cx.vars.push_back({name, t});
        }
        return;
      }
      case 3:
      case 4:
      case 5: return assign(cx, out, d);
      case 6: {  // a call as a statement
        std::vector<std::string> calls;
        for (auto& f : functions_) {
          if (f.kind != Function::Plain) continue;
          std::vector<TypeP> ps;
          for (auto& p : f.params) ps.push_back(p.type);
          calls.push_back(f.name + "(" + args_for(ps, cx, d - 1) + ")");
        }
        std::vector<E> rs = receivers(cx, d, true);
        if (!rs.empty()) {
          E r = pick(rs);
          std::vector<MethodView> ms = methods_of(r.t, bounds_);
          if (!ms.empty()) {
            MethodView m = pick(ms);
            calls.push_back(r.s + "." + m.method->name + "(" + args_for(m.params, cx, d - 1) + ")");
          }
        }
        for (auto& v : cx.vars)
          if (!v.nullable && v.type->kind == Kind::Function) calls.push_back(v.name + "(" + args_for(v.type->args, cx, d - 1) + ")");
        if (calls.empty()) return;
        out += pre + pick(calls) + ";\n";
        return;
      }
      case 7: {  // if
        out += pre + "if (" + gen(bool_type(), cx, d).s + ") " + nested(cx, int(c_.range(1, 3)));
        if (c_.chance(1, 3)) out += " else if (" + gen(bool_type(), cx, d).s + ") " + nested(cx, int(c_.range(1, 2)));
        if (c_.chance(1, 2)) out += " else " + nested(cx, int(c_.range(1, 2)));
        out += "\n";
        return;
      }
      case 8:
      case 9: {  // for
        std::string i = fresh("i");
        std::string bounds = c_.chance(1, 2) ? "0.." + std::to_string(c_.range(0, 6))
                                             : "(" + gen(int_type(), cx, 1).s + " & 3)..(" + gen(int_type(), cx, 1).s + " & 7)";
        cx.loops++;
        out += pre + "for " + i + " in " + bounds + " " + nested(cx, int(c_.range(1, 4)), {Var{i, int_type(), false}}) + "\n";
        cx.loops--;
        return;
      }
      case 10: {  // while, with a counter the body cannot skip
        std::string w = fresh("w");
        std::string limit = std::to_string(c_.range(1, 6));
        std::string cond = w + " < " + limit;
        if (c_.chance(1, 2)) cond += " && " + gen(bool_type(), cx, 1).s;
        out += pre + "var " + w + " = 0;\n";
        cx.vars.push_back({w, int_type(), false});
        cx.loops++;
        std::string body = nested(cx, int(c_.range(1, 4)));
        cx.loops--;
        body.insert(2, ind(cx.indent + 1) + w + " += 1;\n");  // after "{\n"
        out += pre + "while (" + cond + ") " + body + "\n";
        return;
      }
      case 11:
        out += pre + "if (" + gen(bool_type(), cx, 1).s + ") { " + (c_.chance(1, 2) ? "break" : "continue") + "; }\n";
        return;
      case 12: {
        std::string r = cx.ret->kind == Kind::Void ? "return;" : "return " + gen(cx.ret, cx, d).s + ";";
        out += pre + "if (" + gen(bool_type(), cx, 1).s + ") { " + r + " }\n";
        return;
      }
      case 13:
      case 14: {  // print
        std::string args;
        for (int n = int(c_.range(1, 3)), i = 0; i < n; i++) {
          std::string a;
          if (c_.chance(1, 3) && !cx.vars.empty()) a = pick(cx.vars).name;  // any type, null too
          else a = gen(local_type(cx), cx, d).s;
          args += (i ? ", " : "") + a;
        }
        out += pre + print_stmt(cx, args) + "\n";
        return;
      }
      case 15:
        out += pre + "chk = (chk * 31) + " + gen(int_type(), cx, d).s + ";\n";
        return;
      case 16: return downcast(cx, out, d);
      case 17: return fill_array(cx, out, d);
      case 18: return null_block(cx, out, d);
      case 19: {  // each byte of a string
        std::string s = gen(string_type(), cx, d, true).s, i = fresh("i");
        out += pre + "for " + i + " in 0..len(" + s + ") { chk += " + s + "[" + i + "]; }\n";
        return;
      }
      case 20: {  // a closure that writes a captured local
        std::string n = fresh("v"), f = fresh("v");
        out += pre + "var " + n + " = " + gen(int_type(), cx, 1).s + ";\n";
        out += pre + "var " + f + " = fn(k: int): int { " + n + " += k; return " + n + "; };\n";
        out += pre + f + "(" + gen(int_type(), cx, 1).s + ");\n";
        out += pre + print_stmt(cx, n + ", " + f + "(1), " + n) + "\n";
        cx.vars.push_back({n, int_type()});
        cx.vars.push_back({f, function_of({int_type()}, int_type()), false});
        return;
      }
      case 21: return spawn_block(cx, out);
      case 22: {  // arraycopy between two arrays of one element type
        std::vector<const Var*> arrays;
        for (auto& v : cx.vars)
          if (!v.nullable && v.type->kind == Kind::Array) arrays.push_back(&v);
        if (arrays.empty()) return;
        const Var* a = pick(arrays);
        const Var* b = pick(arrays);
        if (!same(a->type, b->type)) return;
        out += pre + "if (len(" + a->name + ") <= len(" + b->name + ")) { arraycopy(" + a->name + ", 0, " + b->name +
               ", 0, len(" + a->name + ")); }\n";
        return;
      }
      default: {  // s += t: only in main's own statements, which run once
        if (!(cx.main && cx.loops == 0)) return assign(cx, out, d);
        std::vector<const Var*> ok;
        for (auto& v : cx.vars)
          if (v.mut && !v.nullable && v.type->kind == Kind::String) ok.push_back(&v);
        if (ok.empty()) return assign(cx, out, d);
        out += pre + pick(ok)->name + " += " + gen(string_type(), cx, d).s + ";\n";
        return;
      }
    }
  }

  void assign(Ctx& cx, std::string& out, int d) {
    struct Place {
      std::string s;
      TypeP t;
    };
    std::vector<Place> places;
    for (auto& v : cx.vars)
      if (v.mut) places.push_back({v.name, v.type});  // a nullable one gets a non-null value
    for (auto& v : cx.vars) {
      if (v.nullable || v.type->kind != Kind::Array) continue;
      E a{v.name, v.type};
      places.push_back({v.name + "[" + index(a, cx, d) + "]", v.type->elem});
    }
    if (!cx.init) {
      std::vector<E> rs = receivers(cx, d, false);
      if (!rs.empty()) {
        E r = pick(rs);
        if (r.t->kind == Kind::Object && r.s != "this")
          for (auto& f : fields_of(r.t)) places.push_back({r.s + "." + f.name, f.type});
      }
    }
    if (places.empty()) return;
    Place p = pick(places);
    std::string pre = ind(cx.indent);
    if (p.t->kind == Kind::Int && c_.chance(1, 2)) {
      static const char* ops[] = {"+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>=", "/=", "%="};
      std::string op = ops[c_.below(10)];
      std::string v = gen(int_type(), cx, d).s;
      if (op == "/=" || op == "%=") v = "(" + v + " | 1)";
      out += pre + p.s + " " + op + " " + v + ";\n";
      return;
    }
    if (p.t->kind == Kind::Float && c_.chance(1, 2)) {
      static const char* ops[] = {"+=", "-=", "*=", "/="};
      out += pre + p.s + " " + ops[c_.below(4)] + " " + gen(float_type(), cx, d).s + ";\n";
      return;
    }
    out += pre + p.s + " = " + gen(p.t, cx, d).s + ";\n";
  }

  void downcast(Ctx& cx, std::string& out, int d) {
    std::vector<E> rs;
    for (auto& r : receivers(cx, d, false))
      if (r.t->kind == Kind::Object) rs.push_back(r);
    if (rs.empty()) return;
    E r = pick(rs);
    std::vector<TypeP> to = related(r.t);
    if (to.empty()) return;
    TypeP t = pick(to);
    std::string y = fresh("v");
    out += ind(cx.indent) + "if (" + r.s + " is " + text(t) + ") " +
           nested(cx, int(c_.range(1, 3)), {Var{y, t, false}}).insert(2, ind(cx.indent + 1) + "var " + y + " = " + r.s +
                                                                              " as " + text(t) + ";\n") +
           "\n";
  }

  // var a = new T[n]; every element assigned: arrays of objects and of arrays hold no null.
  void fill_array(Ctx& cx, std::string& out, int d) {
    TypeP elem = c_.chance(1, 4) ? array_of(int_type()) : local_type(cx);
    int n = int(c_.range(1, 4));
    std::string a = fresh("v"), i = fresh("i");
    std::string pre = ind(cx.indent);
    out += pre + "var " + a + " = " + array_new(elem, std::to_string(n)) + ";\n";
    cx.vars.push_back({i, int_type(), false});
    std::string value = gen(elem, cx, d).s;
    cx.vars.pop_back();
    out += pre + "for " + i + " in 0.." + std::to_string(n) + " { " + a + "[" + i + "] = " + value + "; }\n";
    cx.vars.push_back({a, array_of(elem), false});
  }

  void null_block(Ctx& cx, std::string& out, int d) {
    TypeP t = local_type(cx);
    if (!is_reference(t)) t = string_type();
    std::string n = fresh("v"), pre = ind(cx.indent);
    out += pre + "var " + n + ": " + text(t) + " = null;\n";
    cx.vars.push_back({n, t, true, true});
    std::string tests = n + " == null, " + n;
    if (t->kind == Kind::Object) tests += ", " + n + " is " + text(t) + ", " + n + " as " + text(t);
    out += pre + print_stmt(cx, tests) + "\n";
    if (c_.chance(1, 2)) out += pre + "if (" + gen(bool_type(), cx, d).s + ") { " + n + " = " + gen(t, cx, d).s + "; }\n";
    out += pre + "if (" + n + " != null) " + nested(cx, int(c_.range(1, 2)), {Var{n, t, false}}) + "\n";
  }

  // Two threads on their own elements of one array, and atomic_add on a shared one;
  // both joined at once, so the output is the same every run.
  void spawn_block(Ctx& cx, std::string& out) {
    std::string pre = ind(cx.indent);
    std::string a = fresh("v"), lw = fresh("v"), wf = fresh("v"), h1 = fresh("v"), h2 = fresh("v"), i = fresh("i");
    out += pre + "var " + a + " = new int[4];\n";
    out += pre + "var " + lw + " = fn(k: int) { for " + i + " in 0..40 { " + a + "[k] += " + i + " * k; } atomic_add(" + a +
           ", 0, k); };\n";
    out += pre + "var " + wf + " = " + worker_ + ";\n";
    out += pre + "var " + h1 + " = spawn " + (c_.chance(1, 2) ? worker_ : wf) + "(" + a + ", 1);\n";
    out += pre + "var " + h2 + " = spawn " + lw + "(2);\n";
    out += pre + "join(" + h1 + ");\n" + pre + "join(" + h2 + ");\n";
    out += pre + "print(" + a + ");\n";
    cx.vars.push_back({a, array_of(int_type()), false});
  }

  // ---- bodies ----

  void write_bodies() {
    std::vector<Var> globals;
    for (auto& [v, init] : globals_) globals.push_back(v);
    for (auto& cp : classes_) {
      Class& c = *cp;
      if (c.is_interface) continue;
      std::vector<TypeP> args;
      for (auto& tp : c.type_params) args.push_back(param_type(tp.name));
      TypeP self = object_of(&c, args);
      for (auto& m : c.methods) {
        if (m.is_abstract) continue;
        Ctx cx;
        cx.vars = globals;
        for (auto& f : fields_of(self)) cx.vars.push_back({c_.chance(1, 2) ? f.name : "this." + f.name, f.type});
        for (auto& p : m.params) cx.vars.push_back({p.name, p.type});
        cx.self = self;
        cx.ret = m.result;
        cx.can_super = true;
        cx.indent = 2;
        for (auto& tp : c.type_params)
          for (auto& f : c.fields)
            if (f.type->kind == Kind::Param && f.type->name == tp.name && !cx.anchors.count(tp.name))
              cx.anchors[tp.name] = "this." + f.name;
        m.body = body(cx, int(c_.range(1, 4)));
      }
    }
    for (auto& f : functions_) {
      Ctx cx;
      cx.vars = globals;
      for (auto& p : f.params) cx.vars.push_back({p.name, p.type});
      cx.ret = f.result;
      cx.in_generic_function = f.kind != Function::Plain;
      switch (f.kind) {
        case Function::Plain: break;
        case Function::Same:
        case Function::Max: cx.anchors[f.type_params[0].name] = f.params[0].name; break;
        case Function::Apply:
          cx.anchors[f.type_params[0].name] = f.params[1].name;
          cx.anchors[f.type_params[1].name] = f.params[2].name;
          break;
      }
      f.body = body(cx, int(c_.range(1, 5)));
    }
    main_returns_int_ = c_.chance(1, 4);
    Ctx cx;
    cx.main = true;
    cx.ret = main_returns_int_ ? int_type() : void_type();
    // The reference globals first, each made from the globals that hold a value already.
    for (auto& [v, init] : globals_)
      if (init != "null") cx.vars.push_back(v);
    std::string out;
    for (auto& [name, t] : late_globals_) {
      out += ind(1) + name + " = " + fallback(t, cx).s + ";\n";
      cx.vars.push_back({name, t});
    }
    block(cx, int(c_.range(6, 14)), out);
    hot_loop(cx, out);
    out += ind(1) + "print(\"end\", chk, fuel, outs);\n";
    if (o_.runtime_error) out += runtime_error(cx);
    if (main_returns_int_) out += ind(1) + "return chk & 63;\n";
    main_body_ = out;
  }

  // A loop long enough for tiered mode to compile main and enter it by OSR (the default
  // back-edge threshold is 10,000), and the functions it calls; with fuel of its own,
  // since main's statements may have spent all of it.
  void hot_loop(Ctx& cx, std::string& out) {
    std::string i = fresh("i");
    out += ind(1) + "fuel = " + std::to_string(kFuel) + ";\n";
    cx.indent = 2;
    cx.loops = 1;
    cx.vars.push_back({i, int_type(), false});
    std::string body = ind(2) + "chk = (chk * 31) + " + gen(int_type(), cx, 3).s + ";\n";
    if (c_.chance(1, 2)) assign(cx, body, 2);
    cx.vars.pop_back();
    cx.loops = 0;
    cx.indent = 1;
    out += ind(1) + "for " + i + " in 0.." + std::to_string(c_.range(11000, 15000)) + " {\n" + body + ind(1) + "}\n";
  }

  std::string body(Ctx& cx, int n) {
    std::string out = guard(cx);
    block(cx, n, out);
    if (cx.ret->kind != Kind::Void) out += ind(cx.indent) + "return " + gen(cx.ret, cx, 2).s + ";\n";
    return out;
  }

  // The last statement of main in runtime_error mode: one that must fail, and the text
  // its error must contain.
  std::string runtime_error(Ctx& cx) {
    std::string pre = ind(1);
    // A class with a field or a method, for the null dereferences.
    const Class* withf = nullptr;
    const Class* withm = nullptr;
    for (auto& c : classes_) {
      if (c->is_interface || !c->type_params.empty()) continue;
      if (!c->fields.empty() && !withf) withf = c.get();
      if (!c->methods.empty() && !withm) withm = c.get();
    }
    switch (c_.below(11)) {
      case 0:
        expected_error_ = "division by zero";
        return pre + "var ez = chk - chk;\n" + pre + "print(7 " + (c_.chance(1, 2) ? "/" : "%") + " ez);\n";
      case 1:
        expected_error_ = "index 3 out of bounds for length 3";
        return pre + "var ea = new int[3];\n" + pre + "print(ea[len(ea) + (chk & 0)]);\n";
      case 2:
        if (withf) {
          expected_error_ = "null reference: field " + withf->fields[0].name + " of " + withf->name;
          return pre + "var en: " + withf->name + " = null;\n" + pre + "print(en." + withf->fields[0].name + ");\n";
        }
        [[fallthrough]];
      case 3:
        if (withm) {
          const Method& m = withm->methods[0];
          std::vector<TypeP> ps;
          for (auto& p : m.params) ps.push_back(p.type);
          expected_error_ = "null reference: method " + m.name;
          return pre + "var en: " + withm->name + " = null;\n" + pre + "en." + m.name + "(" + args_for(ps, cx, 1) + ");\n";
        }
        [[fallthrough]];
      case 4:
        expected_error_ = "call of a null function";
        return pre + "var ef: fn(int): int = null;\n" + pre + "print(ef(1));\n";
      case 5:
        expected_error_ = "substring 1..9 out of bounds for length 3";
        return pre + "print(substring(\"abc\", 1, 9 + (chk & 0)));\n";
      case 6:
        expected_error_ = "index 3 out of bounds for length 3";
        return pre + "var es = \"abc\";\n" + pre + "print(es[3 + (chk & 0)]);\n";
      case 7:
        expected_error_ = "negative array size";
        return pre + "print(new int[(chk & 0) - 1]);\n";
      case 8:
        expected_error_ = "len of null";
        return pre + "var el: int[] = null;\n" + pre + "print(len(el));\n";
      case 9:
        expected_error_ = "stack overflow";
        deep_ = fresh("deep");
        return pre + "print(" + deep_ + "(0));\n";
      default:
        // A downcast to a sibling: two concrete classes with one superclass.
        for (auto& a : universe_)
          for (auto& b : universe_) {
            if (a == b || a->cls->is_interface || b->cls->is_interface || a->cls->is_abstract) continue;
            if (!a->cls->super || !b->cls->super || !same(a->cls->super, b->cls->super)) continue;
            if (converts(a, b) || converts(b, a) || !a->args.empty() || !b->args.empty()) continue;
            expected_error_ = "cannot cast " + a->cls->name + " to " + b->cls->name;
            return pre + "var eb: " + text(a->cls->super) + " = " + new_of(a, cx, 0) + ";\n" + pre + "print(eb as " +
                   text(b) + ");\n";
          }
        expected_error_ = "index of a null array";
        return pre + "var en: int[] = null;\n" + pre + "print(en[0]);\n";
    }
  }

  // ---- the text ----

  static std::string params_text(const std::vector<Param>& ps) {
    std::string out;
    for (size_t i = 0; i < ps.size(); i++) out += (i ? ", " : "") + ps[i].name + ": " + text(ps[i].type);
    return out;
  }
  static std::string type_params_text(const std::vector<TypeParam>& tps) {
    if (tps.empty()) return "";
    std::string out = "<";
    for (size_t i = 0; i < tps.size(); i++)
      out += (i ? ", " : "") + tps[i].name + (tps[i].bound ? ": " + text(tps[i].bound) : "");
    return out + ">";
  }
  static std::string signature(const std::string& name, const std::vector<Param>& ps, const TypeP& result) {
    std::string out = name + "(" + params_text(ps) + ")";
    return result->kind == Kind::Void ? out : out + ": " + text(result);
  }

  std::string print_class(const Class& c) {
    std::string out = c.is_interface ? "interface " : c.is_abstract ? "abstract class " : "class ";
    out += c.name + type_params_text(c.type_params);
    if (c.super) out += " extends " + text(c.super);
    for (size_t i = 0; i < c.interfaces.size(); i++)
      out += (i ? ", " : c.is_interface ? " extends " : " implements ") + text(c.interfaces[i]);
    out += " {\n";
    for (auto& f : c.fields) out += ind(1) + "var " + f.name + ": " + text(f.type) + ";\n";
    if (c.has_init) out += ind(1) + "fn init(" + params_text(c.init_params) + ") {\n" + c.init_body + ind(1) + "}\n";
    for (auto& m : c.methods) {
      if (c.is_interface) {
        out += ind(1) + "fn " + signature(m.name, m.params, m.result) + ";\n";
        continue;
      }
      std::string mod = m.is_abstract ? "abstract " : m.is_override ? "override " : "";
      if (m.is_abstract) {
        out += ind(1) + mod + "fn " + signature(m.name, m.params, m.result) + ";\n";
        continue;
      }
      out += ind(1) + mod + "fn " + signature(m.name, m.params, m.result) + " {\n" + m.body + ind(1) + "}\n";
    }
    return out + "}\n";
  }

  std::string print_program() {
    std::string out = "// Generated by tests/fuzz/program_generator.cpp.\n";
    out += "var fuel: int = " + std::to_string(kFuel) + ";\nvar outs: int = 0;\nvar chk: int = 0;\n";
    for (auto& [v, init] : globals_) out += "var " + v.name + ": " + text(v.type) + " = " + init + ";\n";
    out += "\nfn clip(s: string): string {\n    if (len(s) > 24) { return substring(s, len(s) - 24, len(s)); }\n"
           "    return s;\n}\n\n";
    out += "fn " + worker_ + "(out: int[], k: int) {\n    for i in 0..100 { out[k] += (i ^ k) * 3; }\n"
           "    atomic_add(out, 0, k);\n}\n\n";
    if (!deep_.empty()) out += "fn " + deep_ + "(n: int): int { return " + deep_ + "(n + 1) + 1; }\n\n";
    for (auto& c : classes_) out += print_class(*c) + "\n";
    for (auto& f : functions_)
      out += f.annotation + "fn " + signature(f.name + type_params_text(f.type_params), f.params, f.result) + " {\n" + f.body +
             "}\n\n";
    out += "fn main()" + std::string(main_returns_int_ ? ": int" : "") + " {\n" + main_body_ + "}\n";
    return out;
  }
};

}  // namespace

Generated generate_program(Choices& choices, const GenOptions& options) { return Generator(choices, options).run(); }

}  // namespace minigen
