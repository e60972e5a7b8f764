// Generic classes, interfaces and functions are compiled per type argument: each use of
// `Vector<int>` gets its own copy of Vector's declaration with `int` written for `E`
// everywhere, which the type checker then checks and the code generator compiles like
// any class (its functions keep their source names: `Vector.add`). This file makes the
// copies; the type checker (vm/typecheck.cpp) decides when.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "vm/ast.h"

namespace vm::ast {

// Each type parameter (the class type its name parses as) with its argument.
using TypeSubst = std::vector<std::pair<Type, Type>>;

// `t` with every type parameter replaced, inside arrays, type arguments and function types.
Type substitute(Type t, const TypeSubst& s);

// Deep copies with types substituted; checker fields start fresh.
ExprPtr clone(const Expr& e, const TypeSubst& s);
StmtPtr clone(const Stmt& st, const TypeSubst& s);
std::unique_ptr<FnDecl> clone(const FnDecl& f, const TypeSubst& s, ClassDecl* owner);

// The declaration of `generic` for these type arguments (as many as it has parameters):
// the same name and positions, the type `Name<Args>`, no type parameters.
std::unique_ptr<ClassDecl> instantiate(const ClassDecl& generic, const std::vector<Type>& args);
std::unique_ptr<FnDecl> instantiate(const FnDecl& generic, const std::vector<Type>& args);

// The substitution of a declaration's type parameters by `args`.
TypeSubst substitution(const std::vector<TypeParamDecl>& params, const std::vector<Type>& args);

}  // namespace vm::ast
