// The AST's operator spellings and readable dumps (vm/ast.h), which the parser tests compare.
#include <bit>
#include <string>

#include <fmt/format.h>

#include "vm/ast.h"
#include "vm/text.h"

namespace vm {

using namespace ast;

namespace {

std::string dump_args(const Expr& e, size_t from) {
  std::string out;
  for (size_t i = from; i < e.args.size(); i++) out += " " + dump(*e.args[i]);
  return out;
}

}  // namespace

std::string_view ast::binop_text(BinOp op) {
  static constexpr std::string_view kText[] = {"||", "&&", "|", "^", "&", "==", "!=", "<", "<=", ">",
                                               ">=", "<<", ">>", ">>>", "+", "-", "*", "/", "%"};
  return kText[size_t(op)];
}

std::string_view ast::unop_text(UnOp op) {
  switch (op) {
    case UnOp::Neg: return "-";
    case UnOp::Not: return "!";
    case UnOp::BitNot: return "~";
  }
  return "?";
}

std::string ast::dump(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return std::to_string(e.int_value);
    case ExprKind::FloatLit: return fmt::format("{}", e.float_value);
    case ExprKind::BoolLit: return e.bool_value ? "true" : "false";
    case ExprKind::StringLit: return quoted(e.text);
    case ExprKind::NullLit: return "null";
    case ExprKind::Name: return e.text;
    case ExprKind::Unary: return fmt::format("({} {})", unop_text(e.unop), dump(*e.args[0]));
    case ExprKind::Binary: return fmt::format("({} {} {})", binop_text(e.binop), dump(*e.args[0]), dump(*e.args[1]));
    case ExprKind::Call: return fmt::format("(call {}{})", e.text, dump_args(e, 0));
    case ExprKind::Spawn: return fmt::format("(spawn {}{})", e.text, dump_args(e, 0));
    case ExprKind::Index: return fmt::format("(index {} {})", dump(*e.args[0]), dump(*e.args[1]));
    case ExprKind::NewArray: return fmt::format("(new {} {})", type_name(type_info(e.type_operand).elem), dump(*e.args[0]));
    case ExprKind::Convert: return fmt::format("({} {})", type_name(e.type_operand), dump(*e.args[0]));
    case ExprKind::This: return "this";
    case ExprKind::Field: return fmt::format("(field {} {})", dump(*e.args[0]), e.text);
    case ExprKind::MethodCall: return fmt::format("(invoke {} {}{})", dump(*e.args[0]), e.text, dump_args(e, 1));
    case ExprKind::New: return fmt::format("(new {}{})", e.text, dump_args(e, 0));
    case ExprKind::SuperCall: return fmt::format("(super {}{})", e.text, dump_args(e, 0));
    case ExprKind::Is: return fmt::format("(is {} {})", dump(*e.args[0]), type_name(e.type_operand));
    case ExprKind::As: return fmt::format("(as {} {})", dump(*e.args[0]), type_name(e.type_operand));
    case ExprKind::CallValue: return fmt::format("(call-value {}{})", dump(*e.args[0]), dump_args(e, 1));
    case ExprKind::Lambda: return "(lambda)";
  }
  return "?";
}

std::string ast::dump(const Stmt& s, int indent) {
  std::string pad(size_t(indent) * 2, ' ');
  switch (s.kind) {
    case StmtKind::VarDecl:
      return fmt::format("{}var {}{} = {}\n", pad, s.name,
                         s.has_declared_type ? fmt::format(": {}", type_name(s.declared_type)) : "", dump(*s.value));
    case StmtKind::Assign:
      return fmt::format("{}{} {}= {}\n", pad, dump(*s.target), s.compound ? binop_text(s.binop) : "", dump(*s.value));
    case StmtKind::If: {
      std::string out = fmt::format("{}if {}\n{}", pad, dump(*s.cond), dump(*s.body, indent + 1));
      if (s.else_branch) out += fmt::format("{}else\n{}", pad, dump(*s.else_branch, indent + 1));
      return out;
    }
    case StmtKind::While: return fmt::format("{}while {}\n{}", pad, dump(*s.cond), dump(*s.body, indent + 1));
    case StmtKind::For:
      return fmt::format("{}for {} in {} .. {}\n{}", pad, s.name, dump(*s.value), dump(*s.limit), dump(*s.body, indent + 1));
    case StmtKind::Break: return pad + "break\n";
    case StmtKind::Continue: return pad + "continue\n";
    case StmtKind::Return: return s.value ? fmt::format("{}return {}\n", pad, dump(*s.value)) : pad + "return\n";
    case StmtKind::ExprStmt: return fmt::format("{}{}\n", pad, dump(*s.value));
    case StmtKind::Block: {
      // A block's statements print at the block's own indentation level.
      std::string out;
      for (auto& st : s.stmts) out += dump(*st, indent);
      if (s.stmts.empty()) out += pad + "(empty)\n";
      return out;
    }
  }
  return "?";
}

std::string ast::dump(const Program& p) {
  std::string out;
  for (auto& g : p.globals) {
    std::string init = g->init_type == Type::Float ? fmt::format("{}", std::bit_cast<double>(g->init_bits))
                       : g->init_type == Type::Bool   ? (g->init_bits ? "true" : "false")
                       : g->init_type == Type::String ? quoted(g->init_text)
                       : g->init_type == Type::Null   ? std::string("null")
                                                      : std::to_string(g->init_bits);
    out += fmt::format("global {}: {} = {}\n", g->name, type_name(g->type), init);
  }
  auto function = [&](const FnDecl& f, int indent) {
    std::string params;
    for (auto& prm : f.params) params += fmt::format("{}{}: {}", params.empty() ? "" : ", ", prm.name, type_name(prm.type));
    std::string hint = f.hint == InlineHintAst::Inline ? " @inline" : f.hint == InlineHintAst::NoInline ? " @noinline" : "";
    std::string result = f.result == Type::Void ? "" : fmt::format(": {}", type_name(f.result));
    out += fmt::format("{}fn {}({}){}{}\n{}", std::string(size_t(indent) * 2, ' '), f.name, params, result, hint,
                       dump(*f.body, indent + 1));
  };
  for (auto& f : p.functions) function(*f, 0);
  for (auto& c : p.classes) {
    out += fmt::format("class {}\n", c->name);
    for (auto& f : c->fields) out += fmt::format("  var {}: {}\n", f.name, type_name(f.type));
    for (auto& m : c->methods) function(*m, 1);
  }
  return out;
}

}  // namespace vm
