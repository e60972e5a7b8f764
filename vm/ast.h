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
};

// What a Name refers to (checker).
enum class NameRef : uint8_t { Unresolved, Local, Global };

// What a Call refers to (checker). Native covers the builtins called via `native N`.
enum class Callee : uint8_t { Unresolved, User, Print, Len, Sqrt, AtomicAdd, Substring, Native };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourcePos pos;     // first token of the expression
  SourcePos op_pos;  // the operator (Unary/Binary), '[' (Index), the callee name (Call/Spawn)

  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string text;  // Name / callee / decoded string
  UnOp unop = UnOp::Neg;
  BinOp binop = BinOp::Add;
  Type type_operand = Type::Void;  // NewArray: IntArray/FloatArray; Convert: Int/Float/String
  std::vector<ExprPtr> args;
  // Height of this subtree (1 for a leaf); the parser bounds it so that the recursive
  // passes over the tree cannot overflow the native stack.
  int depth = 1;

  // checker
  Type type = Type::Void;          // Void for a call of a function without result
  NameRef ref = NameRef::Unresolved;
  Callee callee = Callee::Unresolved;
  uint32_t index = 0;              // local slot / global index / function index / NativeId
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

  ExprPtr target;  // Assign: a Name or an Index
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

struct FnDecl {
  std::string name;
  SourcePos pos;       // the 'fn' keyword
  SourcePos name_pos;
  InlineHintAst hint = InlineHintAst::Default;
  std::vector<Param> params;
  Type result = Type::Void;
  SourcePos result_pos;  // the result type (when present)
  StmtPtr body;          // a Block

  // checker: every local slot (params first), as the Function will have them
  uint32_t index = 0;
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

struct Program {
  std::vector<std::unique_ptr<GlobalDecl>> globals;
  std::vector<std::unique_ptr<FnDecl>> functions;
};

// Readable dumps for tests and debugging: expressions as fully parenthesised
// s-expressions, e.g. "(+ 1 (* 2 x))", "(call f 1 (index a i))", "(neg x)";
// statements one per line, indented. Defined in parser.cpp.
std::string dump(const Expr& e);
std::string dump(const Stmt& s, int indent = 0);
std::string dump(const Program& p);

}  // namespace vm::ast
