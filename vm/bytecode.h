// The compiled form of a Mini program: a Module of Functions, each with its code,
// constants, locals, line table and loop table. Produced by the front end
// (vm/frontend.h), checked by the verifier, read by everything above vm/.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/opcodes.h"
#include "vm/types.h"

namespace vm {

struct Constant {
  Type type;      // Int, Float, Bool or String
  int64_t bits;   // the slot value: int, bool 0/1, the bits of a double; a String's index in Function::strings
};

// One argument of a `print`: a value taken from the stack, or a text known when compiling
// (a string literal, or `null`).
struct PrintItem {
  Type type;              // Void means "string literal"
  uint16_t string_index;  // into Function::strings when type == Void
};
struct PrintDescriptor {
  std::vector<PrintItem> items;  // in source order; values are pushed in that order
  uint16_t value_count() const {
    uint16_t n = 0;
    for (auto& i : items) n += i.type != Type::Void;
    return n;
  }
};

struct LineEntry {
  uint32_t bci;   // first bci of a run of code from `line`
  uint32_t line;
};

struct LoopEntry {
  uint32_t header_bci;  // where each iteration starts: the target of the loop's backward branch
  uint32_t latch_bci;   // the backward branch itself
  bool counted;         // `for i in a..b` (true) or `while` (false)
};

enum class InlineHint : uint8_t { Default, Inline, NoInline };

struct Function {
  std::string name;               // a method's is "Class.method"
  uint16_t index = 0;             // in Module::functions
  int32_t owner = -1;             // a method's class (Module::classes), -1 for a function
  uint32_t line = 0;              // line of the `fn` keyword
  uint16_t file = 0;              // the file it is written in (Module::files); every line of it is there
  InlineHint inline_hint = InlineHint::Default;

  std::vector<Type> params;
  Type result = Type::Void;
  std::vector<Type> local_types;  // params first, then every other local slot
  std::vector<std::string> local_names;
  uint16_t max_stack = 0;         // in slots, computed by the front end, checked by the verifier

  std::vector<uint8_t> code;
  std::vector<Constant> constants;
  std::vector<std::string> strings;
  std::vector<Type> types;        // the array types anewarray makes, the function types callvalue calls
  // A lambda's: what its closure holds after the Method* (cells of captured variables,
  // `this`), every one a reference; its local 0 is the closure.
  std::vector<Type> captures;
  bool is_lambda = false;  // its local 0 is its closure (params[0], its value's type); made by newclosure
  bool is_abstract = false;  // an abstract or interface method: a placeholder body no call runs
  std::vector<PrintDescriptor> prints;
  std::vector<LineEntry> lines;   // sorted by bci, first entry at bci 0
  std::vector<LoopEntry> loops;   // sorted by header_bci
  // The bytes of the slowdown instructions --slowdown put in (vm/slowdown.h): the JIT's
  // inlining decisions measure the code without them, so a slowdown does not change them.
  uint32_t slowdown_bytes = 0;

  uint16_t param_count() const { return uint16_t(params.size()); }
  uint16_t local_count() const { return uint16_t(local_types.size()); }
  // Source line of the instruction at `bci` (the line-table run that contains it).
  uint32_t line_at(uint32_t bci) const {
    uint32_t line = this->line;
    for (auto& e : lines) {
      if (e.bci > bci) break;
      line = e.line;
    }
    return line;
  }
};

// A class of the program: its fields in slot order and its methods.
struct ClassField {
  std::string name;
  Type type;
};
struct ClassInfo {
  std::string name;
  Type type;                      // class_type(name)
  std::vector<ClassField> fields; // the object's layout: the superclass's fields first
  std::vector<uint16_t> methods;  // function indices, one per method slot (the vtable): the
                                  // superclass's slots first, overridden in place
  int32_t init = -1;              // the function index of the init new runs (its own or inherited), -1 for none
  int32_t super = -1;             // the superclass's index, -1 for none
  bool is_abstract = false;
  bool is_interface = false;      // methods holds its abstract methods (those it extends first)
  std::vector<int32_t> interfaces = {};  // a class's `implements`, an interface's `extends`
  // An interface's method slot k has the selector first_selector + k, unique in the module.
  uint32_t first_selector = 0;
  // A class's function per selector (kNoMethod where it implements no interface that has
  // it); empty when it implements none. invokeinterface dispatches through it.
  std::vector<uint16_t> itable = {};
};
inline constexpr uint16_t kNoMethod = 0xFFFF;

struct Global {
  std::string name;
  Type type;
  int64_t init_bits;      // slot value of the literal initialiser (0: null, or a string)
  std::string init_text = {};  // a string global's initial text (the runtime makes the string)
  bool init_is_string = false;  // initialised with a string literal (else a string global starts null)
};

struct Module {
  // The program's files, as messages, traces and profiles name them: the program as
  // given on the command line first, then the files it imports (relative to it).
  std::vector<std::string> files;
  const std::string& program_file() const { return file_at(0); }
  const std::string& file_of(const Function& f) const { return file_at(f.file); }
  const std::string& file_at(size_t k) const {
    static const std::string none;  // a module built by hand (tests) may name no file
    return k < files.size() ? files[k] : none;
  }
  std::vector<Global> globals;
  std::vector<ClassInfo> classes;
  std::vector<std::unique_ptr<Function>> functions;
  uint16_t main_index = 0;

  // The index of the class a class type names, -1 for none.
  int32_t class_index(Type t) const {
    for (size_t i = 0; i < classes.size(); i++)
      if (classes[i].type == t) return int32_t(i);
    return -1;
  }
  uint32_t selector_count = 0;  // the interface methods of all interfaces
  // The --slowdown sites (vm/slowdown.h) the code counts passes of: each thread keeps a
  // counter per site, which `slowdown S N` adds one to.
  uint16_t slowdown_sites = 0;

  // Whether class `c` is class `ancestor` or extends it (a cycle, which the verifier
  // rejects, ends the walk).
  bool extends(int32_t c, int32_t ancestor) const {
    for (size_t steps = 0; c >= 0 && size_t(c) < classes.size() && steps <= classes.size(); steps++) {
      if (c == ancestor) return true;
      c = classes[size_t(c)].super;
    }
    return false;
  }
  // Whether a value of class or interface `c` converts to `target`: `c` extends it or
  // implements it through itself, a superclass or an interface. Each class is visited
  // once, so a cycle (which the verifier rejects) ends too.
  bool conforms(int32_t c, int32_t target) const {
    if (c < 0 || size_t(c) >= classes.size()) return false;
    std::vector<bool> seen(classes.size());
    std::vector<int32_t> work{c};
    while (!work.empty()) {
      int32_t k = work.back();
      work.pop_back();
      if (k < 0 || size_t(k) >= classes.size() || seen[size_t(k)]) continue;
      if (k == target) return true;
      seen[size_t(k)] = true;
      work.push_back(classes[size_t(k)].super);
      work.insert(work.end(), classes[size_t(k)].interfaces.begin(), classes[size_t(k)].interfaces.end());
    }
    return false;
  }

  const Function* find(std::string_view name) const {
    for (auto& f : functions)
      if (f->name == name) return f.get();
    return nullptr;
  }
};

// Appends instructions to a function's code; used by the code generator and by tests
// that build bytecode by hand.
class CodeBuilder {
 public:
  explicit CodeBuilder(std::vector<uint8_t>& code) : code_(code) {}
  size_t here() const { return code_.size(); }
  void op(Op o) { code_.push_back(uint8_t(o)); }
  void u8(uint8_t v) { code_.push_back(v); }
  void u16(uint16_t v) { code_.push_back(uint8_t(v)); code_.push_back(uint8_t(v >> 8)); }
  void i32(int32_t v) { for (int i = 0; i < 4; i++) code_.push_back(uint8_t(uint32_t(v) >> (8 * i))); }
  void patch_i32(size_t at, int32_t v) { for (int i = 0; i < 4; i++) code_[at + i] = uint8_t(uint32_t(v) >> (8 * i)); }

  void emit(Op o) { op(o); }
  void emit_u8(Op o, uint8_t a) { op(o); u8(a); }
  void emit_u16(Op o, uint16_t a) { op(o); u16(a); }
  void emit_u16u16(Op o, uint16_t a, uint16_t b) { op(o); u16(a); u16(b); }
  void emit_iinc(uint16_t local, int32_t delta) { op(Op::iinc); u16(local); i32(delta); }
  void emit_slowdown(uint16_t site, uint32_t ns) { op(Op::slowdown); u16(site); i32(int32_t(ns)); }
  // Emits a branch to a known target (backward branches).
  void emit_branch_to(Op o, size_t target) { size_t at = here(); op(o); i32(int32_t(target - at)); }
  // Emits a branch whose target is patched later with patch_branch(); returns its bci.
  size_t emit_branch(Op o) { size_t at = here(); op(o); i32(0); return at; }
  void patch_branch(size_t insn_bci, size_t target) { patch_i32(insn_bci + kOperandA, int32_t(target - insn_bci)); }
  void emit_forloop(uint16_t var, uint16_t limit, size_t target) {
    size_t at = here(); op(Op::forloop); u16(var); u16(limit); i32(int32_t(target - at));
  }

 private:
  std::vector<uint8_t>& code_;
};

}  // namespace vm
