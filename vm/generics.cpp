#include "vm/generics.h"

namespace vm::ast {

TypeSubst substitution(const std::vector<TypeParamDecl>& params, const std::vector<Type>& args) {
  TypeSubst s;
  for (size_t i = 0; i < params.size() && i < args.size(); i++) s.emplace_back(class_type(params[i].name), args[i]);
  return s;
}

Type substitute(Type t, const TypeSubst& s) {
  if (s.empty() || uint32_t(t) < kFirstInternedType) return t;
  for (auto& [param, arg] : s)
    if (t == param) return arg;
  const TypeInfo& info = type_info(t);
  switch (info.kind) {
    case TypeKind::Array: return array_of(substitute(info.elem, s));
    case TypeKind::Class: {
      if (info.args.empty()) return t;
      std::vector<Type> args;
      for (Type a : info.args) args.push_back(substitute(a, s));
      return class_type(info.name, args);
    }
    case TypeKind::Function: {
      std::vector<Type> params;
      for (Type a : info.args) params.push_back(substitute(a, s));
      return function_type(params, substitute(info.elem, s));
    }
    default: return t;
  }
}

ExprPtr clone(const Expr& e, const TypeSubst& s) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->pos = e.pos;
  c->op_pos = e.op_pos;
  c->type_pos = e.type_pos;
  c->int_value = e.int_value;
  c->float_value = e.float_value;
  c->bool_value = e.bool_value;
  c->text = e.text;
  c->unop = e.unop;
  c->binop = e.binop;
  c->type_operand = substitute(e.type_operand, s);
  c->depth = e.depth;
  for (auto& a : e.args) c->args.push_back(clone(*a, s));
  if (e.lambda) c->lambda = clone(*e.lambda, s, nullptr);
  return c;
}

StmtPtr clone(const Stmt& st, const TypeSubst& s) {
  auto c = std::make_unique<Stmt>();
  c->kind = st.kind;
  c->pos = st.pos;
  c->op_pos = st.op_pos;
  c->end_pos = st.end_pos;
  c->name = st.name;
  c->name_pos = st.name_pos;
  c->has_declared_type = st.has_declared_type;
  c->declared_type = substitute(st.declared_type, s);
  c->compound = st.compound;
  c->binop = st.binop;
  if (st.target) c->target = clone(*st.target, s);
  if (st.value) c->value = clone(*st.value, s);
  if (st.cond) c->cond = clone(*st.cond, s);
  if (st.limit) c->limit = clone(*st.limit, s);
  if (st.body) c->body = clone(*st.body, s);
  if (st.else_branch) c->else_branch = clone(*st.else_branch, s);
  for (auto& k : st.stmts) c->stmts.push_back(clone(*k, s));
  return c;
}

std::unique_ptr<FnDecl> clone(const FnDecl& f, const TypeSubst& s, ClassDecl* owner) {
  auto c = std::make_unique<FnDecl>();
  c->owner = owner;
  c->is_abstract = f.is_abstract;
  c->is_override = f.is_override;
  c->modifier_pos = f.modifier_pos;
  c->name = f.name;
  c->pos = f.pos;
  c->name_pos = f.name_pos;
  c->hint = f.hint;
  for (auto& p : f.params) c->params.push_back({p.name, p.pos, substitute(p.type, s)});
  c->result = substitute(f.result, s);
  c->result_pos = f.result_pos;
  if (f.body) c->body = clone(*f.body, s);
  return c;
}

std::unique_ptr<ClassDecl> instantiate(const ClassDecl& generic, const std::vector<Type>& args) {
  TypeSubst s = substitution(generic.type_params, args);
  auto c = std::make_unique<ClassDecl>();
  c->name = generic.name;
  c->pos = generic.pos;
  c->name_pos = generic.name_pos;
  c->type = class_type(generic.name, args);
  c->is_abstract = generic.is_abstract;
  c->is_interface = generic.is_interface;
  c->super_type = substitute(generic.super_type, s);
  c->super_pos = generic.super_pos;
  for (Type t : generic.interface_types) c->interface_types.push_back(substitute(t, s));
  c->interface_pos = generic.interface_pos;
  for (auto& f : generic.fields) c->fields.push_back({f.name, f.pos, f.name_pos, substitute(f.type, s), f.type_pos});
  for (auto& m : generic.methods) c->methods.push_back(clone(*m, s, c.get()));
  return c;
}

std::unique_ptr<FnDecl> instantiate(const FnDecl& generic, const std::vector<Type>& args) {
  return clone(generic, substitution(generic.type_params, args), nullptr);
}

}  // namespace vm::ast
