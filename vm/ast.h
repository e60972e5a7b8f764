// The Mini abstract syntax tree. The parser builds it; the type checker fills in the
// fields marked "checker" (types, name resolution, local slots, reachability); the code
// generator reads the result. Nodes are plain structs with a kind tag: the language is
// small, and one struct per family keeps every pass a readable switch.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vm/builtins.h"
#include "vm/lexer.h"
#include "vm/types.h"

namespace vm::ast {

// Binary operators, lowest precedence first (LANGUAGE.md, "Expressions").
enum class BinOp : uint8_t {
  Or, And, BitOr, BitXor, BitAnd, Eq, Ne, Lt, Le, Gt, Ge, Shl, Shr, Ushr, Add, Sub, Mul, Div, Rem,
};
enum class UnOp : uint8_t { Neg, Not, BitNot };

std::string_view binop_text(BinOp op);  // "+", "<<", "&&", ...
std::string_view unop_text(UnOp op);    // "-", "!", "~"
inline bool is_comparison(BinOp op) { return op >= BinOp::Eq && op <= BinOp::Ge; }

enum class ExprKind : uint8_t {
  IntLit,     // int_value
  FloatLit,   // float_value
  BoolLit,    // bool_value
  StringLit,  // text (decoded)
  NullLit,    // null
  Name,       // text
  Unary,      // unop, args[0]
  Binary,     // binop, args[0] op args[1]
  Call,       // text(args...)
  Index,      // args[0][args[1]]
  NewArray,   // new int[args[0]] / new float[args[0]]; result type in `type_operand`
  Convert,    // int(args[0]) / float(args[0]) / string(args[0]); target type in `type_operand`
  Spawn,      // spawn text(args...)
  This,       // this
  Field,      // args[0].text
  MethodCall, // args[0].text(args[1...])
  New,        // new C(args...); the class type in `type_operand`
  SuperCall,  // super.text(args...): the superclass's method, without dispatch
  Is,         // args[0] is type_operand
  As,         // args[0] as type_operand
  CallValue,  // args[0](args[1...]): a call of a function value
  Lambda,     // fn(params): R { body }, in `lambda`
};

// What a Name refers to (checker).
// Field: a bare field of `this`; Capture: a variable of an enclosing function, inside a
// lambda (index: the capture); Function: a top-level function as a value (index: it).
enum class NameRef : uint8_t { Unresolved, Local, Global, Field, Capture, Function };

// What a Call refers to (checker). Native covers the builtins called via `native N`.
// Method: a bare call of a method of `this`.
// Value: a spawn of a function value (args[0]).
enum class Callee : uint8_t { Unresolved, User, Print, Len, Sqrt, AtomicAdd, Substring, Native, Method, Value };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct FnDecl;

struct Expr {
  ExprKind kind;
  SourcePos pos;     // first token of the expression
  SourcePos op_pos;  // the operator (Unary/Binary/Is/As), '[' (Index), the callee or member name
  SourcePos type_pos;  // Is/As: the type

  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string text;  // Name / callee / decoded string
  UnOp unop = UnOp::Neg;
  BinOp binop = BinOp::Add;
  Type type_operand = Type::Void;  // NewArray: IntArray/FloatArray; Convert: Int/Float/String
  std::vector<ExprPtr> args;
  std::unique_ptr<FnDecl> lambda;  // Lambda: its parameters, result and body (owner of the decl)
  // Height of this subtree (1 for a leaf); the parser bounds it so that the recursive
  // passes over the tree cannot overflow the native stack.
  int depth = 1;

  // checker
  Type type = Type::Void;          // Void for a call of a function without result
  NameRef ref = NameRef::Unresolved;
  Callee callee = Callee::Unresolved;
  uint32_t index = 0;              // local slot / global index / function index / NativeId / field index / method slot
  uint32_t class_index = 0;        // Field, MethodCall, New, a bare field or method: the class
};

enum class StmtKind : uint8_t {
  VarDecl,   // var name [: declared] = value
  Assign,    // target = value, or target op= value (compound)
  If,        // if (cond) body else else_branch
  While,     // while (cond) body
  For,       // for name in value..limit body
  Break,
  Continue,
  Return,    // return [value]
  ExprStmt,  // value;  (a call or spawn)
  Block,     // { stmts }
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourcePos pos;      // first token
  SourcePos op_pos;   // '=' or the compound operator (VarDecl, Assign)
  SourcePos end_pos;  // Block: the closing '}'

  std::string name;   // VarDecl / For variable
  SourcePos name_pos;
  bool has_declared_type = false;  // VarDecl with ": T"
  Type declared_type = Type::Void;
  bool compound = false;           // Assign: target binop= value
  BinOp binop = BinOp::Add;

  ExprPtr target;  // Assign: a Name, an Index or a Field
  ExprPtr value;   // VarDecl init, Assign value, Return value (may be null), ExprStmt, For start
  ExprPtr cond;    // If / While condition
  ExprPtr limit;   // For: the end bound (exclusive)
  StmtPtr body;    // If then-block, While/For body (a Block)
  StmtPtr else_branch;  // If: a Block, another If, or null
  std::vector<StmtPtr> stmts;  // Block

  // checker
  uint32_t slot = 0;        // VarDecl / For: the variable's local slot
  uint32_t limit_slot = 0;  // For: the hidden slot holding the end bound
  bool completes = true;    // can execution continue after this statement?
};

enum class InlineHintAst : uint8_t { Default, Inline, NoInline };

struct Param {
  std::string name;
  SourcePos pos;
  Type type;
};

struct ClassDecl;

// A type parameter of a generic class, interface or function: `K: Comparable<K>`. In the
// declaration's text it is the class type of its name, which instantiation replaces.
struct TypeParamDecl {
  std::string name;
  SourcePos pos;
  Type bound = Type::Void;  // Void: unbounded
  SourcePos bound_pos;
};

struct FnDecl {
  ClassDecl* owner = nullptr;  // the class of a method
  bool is_abstract = false;    // `abstract fn`: no body
  bool is_override = false;    // `override fn`
  SourcePos modifier_pos;      // the 'abstract' or 'override' keyword
  std::string name;
  SourcePos pos;       // the 'fn' keyword
  SourcePos name_pos;
  InlineHintAst hint = InlineHintAst::Default;
  std::vector<Param> params;
  Type result = Type::Void;
  SourcePos result_pos;  // the result type (when present)
  StmtPtr body;          // a Block; null for an abstract method
  std::vector<TypeParamDecl> type_params;  // a generic function's (a template, never checked itself)

  // checker: every local slot (params first; a method's `this` before them), as the
  // Function will have them
  uint32_t index = 0;
  const FnDecl* implicit_super_init = nullptr;  // an init: the superclass's init it runs first
  const ClassDecl* self_class = nullptr;  // what `this` is: a method's class, a lambda's enclosing method's
  // A lambda: the function it is written in, its function type, and what its closure
  // holds. Its local 0 is the closure; a captured variable lives in a cell (a one-element
  // array) that the closure and the enclosing function share.
  const FnDecl* enclosing = nullptr;
  Type value_type = Type::Void;
  struct Capture {
    bool cell;          // a variable's cell; else `this` itself
    bool from_capture;  // taken from the enclosing lambda's capture `index`; else from the enclosing function's local `index`
    uint32_t index;
    Type type;          // the cell's type (T[] for a T variable), or the class of `this`
  };
  std::vector<Capture> captures;
  int32_t this_capture = -1;     // the capture holding `this`, -1 for none
  // Per local slot: the slot of its cell when a lambda captures the variable, else -1
  // (shorter than the locals when the last ones are not captured).
  std::vector<int32_t> cell_slots;
  bool is_lambda() const { return enclosing != nullptr; }
  int32_t cell_of(uint32_t slot) const { return slot < cell_slots.size() ? cell_slots[slot] : -1; }
  std::vector<Type> local_types;
  std::vector<std::string> local_names;
};

struct GlobalDecl {
  std::string name;
  SourcePos pos;       // the 'var' keyword
  SourcePos name_pos;
  Type type;
  SourcePos type_pos;
  Type init_type;      // type of the literal initialiser (Int, Float, Bool, String or Null)
  int64_t init_bits;   // slot value of the literal (0 for a string or null)
  std::string init_text;  // the string literal's decoded text
  SourcePos init_pos;
};

struct FieldDecl {
  std::string name;
  SourcePos pos;  // the 'var' keyword
  SourcePos name_pos;
  Type type;
  SourcePos type_pos;
};

struct ClassDecl {
  std::string name;
  SourcePos pos;  // 'abstract' or 'class'
  SourcePos name_pos;
  Type type;      // class_type(name)
  bool is_abstract = false;
  bool is_interface = false;     // `interface I`: methods only, each abstract
  Type super_type = Type::Void;  // `extends B`, else Void (a class's)
  SourcePos super_pos;
  std::vector<Type> interface_types;      // a class's `implements`, an interface's `extends`
  std::vector<SourcePos> interface_pos;
  std::vector<TypeParamDecl> type_params;        // a generic one's (a template, never checked itself)
  std::vector<FieldDecl> fields;                 // its own
  std::vector<std::unique_ptr<FnDecl>> methods;  // its own; `init` among them, if declared

  // checker
  uint32_t index = 0;  // in Program::classes and Module::classes
  ClassDecl* super = nullptr;
  std::vector<ClassDecl*> interfaces;      // the direct ones
  uint32_t first_selector = 0;             // an interface's: its methods' selectors follow (vm::ClassInfo)
  const FnDecl* init = nullptr;            // its own init
  const FnDecl* effective_init = nullptr;  // its own, else its superclass's effective init
  std::vector<const FieldDecl*> all_fields;  // the object's layout: inherited fields first
  std::vector<const FnDecl*> vtable;         // one method per slot: inherited slots first, overridden in place
  // The most derived method called `n`, by its slot; -1 when there is none.
  int method_slot(std::string_view n) const {
    for (size_t i = 0; i < vtable.size(); i++)
      if (vtable[i]->name == n) return int(i);
    return -1;
  }
  const FnDecl* method(std::string_view n) const {
    int slot = method_slot(n);
    return slot < 0 ? nullptr : vtable[size_t(slot)];
  }
  int field(std::string_view n) const {
    for (size_t i = 0; i < all_fields.size(); i++)
      if (all_fields[i]->name == n) return int(i);
    return -1;
  }
  bool extends(const ClassDecl* other) const {
    for (const ClassDecl* c = this; c != nullptr; c = c->super)
      if (c == other) return true;
    return false;
  }
  // Whether a value of this class or interface converts to `other`: it is `other`, a
  // subclass of it, or implements it through itself, a superclass or an interface.
  bool conforms_to(const ClassDecl* other) const {
    for (const ClassDecl* c = this; c != nullptr; c = c->super) {
      if (c == other) return true;
      for (const ClassDecl* i : c->interfaces)
        if (i->conforms_to(other)) return true;
    }
    return false;
  }
};

// `import "path.mini";`: a file whose declarations join the program's. The path is
// relative to the importing file's directory (or absolute).
struct ImportDecl {
  std::string path;
  SourcePos pos;  // the path's string literal
};

struct Program {
  std::vector<std::string> files;   // the program's files (SourcePos::file), for messages that name one
  std::vector<ImportDecl> imports;  // a parsed file's, before its declarations
  std::vector<std::unique_ptr<GlobalDecl>> globals;
  std::vector<std::unique_ptr<FnDecl>> functions;
  std::vector<std::unique_ptr<ClassDecl>> classes;
  std::vector<FnDecl*> lambdas;  // checker: every lambda, in function index order (the expressions own them)
  // Generic declarations: templates the checker instantiates per type argument; their
  // instances join `classes` (classes and interfaces) and `function_instances`.
  std::vector<std::unique_ptr<ClassDecl>> generic_classes;
  std::vector<std::unique_ptr<FnDecl>> generic_functions;
  std::vector<std::unique_ptr<FnDecl>> function_instances;  // checker
};

// Readable dumps for tests and debugging: expressions as fully parenthesised
// s-expressions, e.g. "(+ 1 (* 2 x))", "(call f 1 (index a i))", "(neg x)";
// statements one per line, indented. Defined in parser.cpp.
std::string dump(const Expr& e);
std::string dump(const Stmt& s, int indent = 0);
std::string dump(const Program& p);

}  // namespace vm::ast
