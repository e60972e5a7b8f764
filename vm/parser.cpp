#include "vm/parser.h"

#include <bit>
#include <deque>

#include <fmt/format.h>

namespace vm {

using namespace ast;

namespace {

// `is` and `as` bind like `<` (LANGUAGE.md, "Subtyping").
constexpr int kTypeTestPrec = 7;

// Binary operator of a token and its precedence (higher binds tighter), or prec 0.
struct BinInfo {
  BinOp op;
  int prec;
};
BinInfo binary_info(Tok t) {
  switch (t) {
    case Tok::OrOr: return {BinOp::Or, 1};
    case Tok::AndAnd: return {BinOp::And, 2};
    case Tok::Pipe: return {BinOp::BitOr, 3};
    case Tok::Caret: return {BinOp::BitXor, 4};
    case Tok::Amp: return {BinOp::BitAnd, 5};
    case Tok::EqEq: return {BinOp::Eq, 6};
    case Tok::Ne: return {BinOp::Ne, 6};
    case Tok::Lt: return {BinOp::Lt, 7};
    case Tok::Le: return {BinOp::Le, 7};
    case Tok::Gt: return {BinOp::Gt, 7};
    case Tok::Ge: return {BinOp::Ge, 7};
    case Tok::Shl: return {BinOp::Shl, 8};
    case Tok::Shr: return {BinOp::Shr, 8};
    case Tok::Ushr: return {BinOp::Ushr, 8};
    case Tok::Plus: return {BinOp::Add, 9};
    case Tok::Minus: return {BinOp::Sub, 9};
    case Tok::Star: return {BinOp::Mul, 10};
    case Tok::Slash: return {BinOp::Div, 10};
    case Tok::Percent: return {BinOp::Rem, 10};
    default: return {BinOp::Add, 0};
  }
}

// The operator of a compound assignment token, if it is one.
bool compound_op(Tok t, BinOp& op) {
  switch (t) {
    case Tok::PlusAssign: op = BinOp::Add; return true;
    case Tok::MinusAssign: op = BinOp::Sub; return true;
    case Tok::StarAssign: op = BinOp::Mul; return true;
    case Tok::SlashAssign: op = BinOp::Div; return true;
    case Tok::PercentAssign: op = BinOp::Rem; return true;
    case Tok::AmpAssign: op = BinOp::BitAnd; return true;
    case Tok::PipeAssign: op = BinOp::BitOr; return true;
    case Tok::CaretAssign: op = BinOp::BitXor; return true;
    case Tok::ShlAssign: op = BinOp::Shl; return true;
    case Tok::ShrAssign: op = BinOp::Shr; return true;
    case Tok::UshrAssign: op = BinOp::Ushr; return true;
    default: return false;
  }
}

class Parser {
 public:
  explicit Parser(std::string_view source, uint16_t file = 0) : lexer_(source, file) {}

  Program program() {
    Program p;
    bool declared = false;
    while (!at(Tok::End)) {
      // `import` is contextual, as `spawn` is: an identifier followed by a string at top
      // level, so that `import` stays a valid name everywhere else.
      if (at(Tok::Ident) && peek().text == "import" && peek(1).kind == Tok::StringLit) {
        Token kw = take();
        if (declared) fail(kw.pos, "an import must come before the file's declarations");
        Token path = take();
        expect(Tok::Semi, "after an import");
        p.imports.push_back({path.str_value, path.pos});
        continue;
      }
      declared = true;
      if (at(Tok::KwVar)) {
        p.globals.push_back(global());
      } else if (at(Tok::KwFn) || at(Tok::Annotation)) {
        auto f = function();
        (f->type_params.empty() ? p.functions : p.generic_functions).push_back(std::move(f));
      } else if (at(Tok::KwClass) || (at(Tok::KwAbstract) && peek(1).kind == Tok::KwClass) || at(Tok::KwInterface)) {
        auto c = at(Tok::KwInterface) ? interface_decl() : class_decl();
        (c->type_params.empty() ? p.classes : p.generic_classes).push_back(std::move(c));
      } else {
        fail(peek().pos, fmt::format("expected 'fn', 'var', 'class' or 'interface' at top level, found {}", describe(peek())));
      }
    }
    return p;
  }

  ExprPtr whole_expression() {
    ExprPtr e = expr();
    if (!at(Tok::End)) fail(peek().pos, fmt::format("expected end of input, found {}", describe(peek())));
    return e;
  }

 private:
  // ---- tokens ----
  const Token& peek(size_t k = 0) {
    while (ahead_.size() <= k) ahead_.push_back(lexer_.next());
    return ahead_[k];
  }
  bool at(Tok t) { return peek().kind == t; }
  Token take() {
    peek();
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    return t;
  }
  bool accept(Tok t) {
    if (!at(t)) return false;
    take();
    return true;
  }
  Token expect(Tok t, std::string_view context = {}) {
    if (!at(t)) {
      std::string what = context.empty() ? "" : fmt::format(" {}", context);
      fail(peek().pos, fmt::format("expected '{}'{}, found {}", tok_spelling(t), what, describe(peek())));
    }
    return take();
  }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::End) return "end of file";
    return fmt::format("'{}'", t.text);
  }
  [[noreturn]] static void fail(SourcePos at, std::string message) { throw FrontendError{at, std::move(message)}; }

  // ---- types ----
  // type := base_type {'[' ']'}
  Type type() {
    Type t = base_type();
    while (at(Tok::LBracket) && peek(1).kind == Tok::RBracket) {
      take();
      take();
      t = array_of(t);
    }
    return t;
  }

  // base_type := 'int' | 'float' | 'bool' | 'string' | CLASS | function_type | '(' type ')'
  // function_type := 'fn' '(' [type {',' type}] ')' [':' type]
  Type base_type() {
    if (at(Tok::KwFn)) {
      take();
      expect(Tok::LParen, "after 'fn' in a function type");
      std::vector<Type> params;
      if (!at(Tok::RParen)) {
        do {
          if (++nesting_ > kMaxNesting) fail(peek().pos, "type is nested too deeply");
          params.push_back(type());
          nesting_--;
        } while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "after the parameter types of a function type");
      Type result = Type::Void;
      if (accept(Tok::Colon)) {
        if (++nesting_ > kMaxNesting) fail(peek().pos, "type is nested too deeply");
        result = type();
        nesting_--;
      }
      return function_type(params, result);
    }
    if (at(Tok::LParen)) {  // grouping: (fn(int): int)[] is an array of functions
      take();
      if (++nesting_ > kMaxNesting) fail(peek().pos, "type is nested too deeply");
      Type t = type();
      nesting_--;
      expect(Tok::RParen, "to close '(' in a type");
      return t;
    }
    Token t = take();
    Type base;
    switch (t.kind) {
      case Tok::KwInt: base = Type::Int; break;
      case Tok::KwFloat: base = Type::Float; break;
      case Tok::KwBool: base = Type::Bool; break;
      case Tok::KwString: base = Type::String; break;
      case Tok::Ident:
        base = class_type(t.text, type_arguments());  // the checker finds the class (and instantiates a generic one)
        break;
      default: fail(t.pos, fmt::format("expected a type (int, float, bool, string, a class, a function type fn(T): R, or an array of one: T[]), found {}", describe(t)));
    }
    return base;
  }

  // ['<' type {',' type} '>']: the type arguments of a generic class or interface.
  std::vector<Type> type_arguments() {
    std::vector<Type> args;
    if (!at(Tok::Lt)) return args;
    SourcePos open = take().pos;
    if (++nesting_ > kMaxNesting) fail(open, "type is nested too deeply");
    do args.push_back(type());
    while (accept(Tok::Comma));
    nesting_--;
    close_angle("after the type arguments");
    return args;
  }
  // A '>' closing type arguments; in `Vector<Vector<int>>` the lexer read '>>', whose
  // first half this takes.
  void close_angle(std::string_view context) {
    if (at(Tok::Shr) || at(Tok::Ushr) || at(Tok::Ge) || at(Tok::ShrAssign) || at(Tok::UshrAssign)) {
      Token& t = ahead_.front();
      t.kind = t.kind == Tok::Shr ? Tok::Gt : t.kind == Tok::Ushr ? Tok::Shr : t.kind == Tok::Ge ? Tok::Assign
             : t.kind == Tok::ShrAssign ? Tok::Ge : Tok::ShrAssign;
      t.text = t.text.substr(1);
      t.pos.col++;
      return;
    }
    expect(Tok::Gt, context);
  }
  // ['<' NAME [':' type] {',' ...} '>']: the type parameters of a generic declaration.
  std::vector<TypeParamDecl> type_parameters() {
    std::vector<TypeParamDecl> params;
    if (!accept(Tok::Lt)) return params;
    do {
      Token name = expect(Tok::Ident, "(a type parameter)");
      TypeParamDecl p{std::string(name.text), name.pos, Type::Void, {}};
      if (accept(Tok::Colon)) {
        p.bound_pos = peek().pos;
        p.bound = type();
      }
      params.push_back(std::move(p));
    } while (accept(Tok::Comma));
    close_angle("after the type parameters");
    return params;
  }

  // ---- top level ----
  // global := 'var' NAME ':' type '=' literal ';'
  // literal := ['-'] (INT | FLOAT) | true | false | STRING | null
  std::unique_ptr<GlobalDecl> global() {
    auto g = std::make_unique<GlobalDecl>();
    g->pos = take().pos;
    Token name = expect(Tok::Ident, "after 'var'");
    g->name = std::string(name.text);
    g->name_pos = name.pos;
    if (!at(Tok::Colon))
      fail(peek().pos, fmt::format("global '{}' needs a type and a literal initialiser, e.g. var {}: int = 0;", g->name, g->name));
    take();
    g->type_pos = peek().pos;
    g->type = type();
    expect(Tok::Assign, "in a global declaration (globals need a literal initialiser)");
    g->init_pos = peek().pos;
    bool negative = false;
    if (at(Tok::Minus) && (peek(1).kind == Tok::IntLit || peek(1).kind == Tok::FloatLit)) {
      take();
      negative = true;
    }
    Token lit = take();
    switch (lit.kind) {
      case Tok::IntLit:
        if (lit.int_is_min_magnitude && !negative)
          fail(lit.pos, fmt::format("integer literal {} does not fit in int", lit.text));
        g->init_type = Type::Int;
        g->init_bits = negative ? int64_t(0 - uint64_t(lit.int_value)) : lit.int_value;
        break;
      case Tok::FloatLit:
        g->init_type = Type::Float;
        g->init_bits = std::bit_cast<int64_t>(negative ? -lit.float_value : lit.float_value);
        break;
      case Tok::KwTrue:
      case Tok::KwFalse:
        g->init_type = Type::Bool;
        g->init_bits = lit.kind == Tok::KwTrue;
        break;
      case Tok::StringLit:
        g->init_type = Type::String;
        g->init_bits = 0;
        g->init_text = lit.str_value;
        break;
      case Tok::KwNull:
        g->init_type = Type::Null;
        g->init_bits = 0;
        break;
      default:
        fail(lit.pos, fmt::format("the initialiser of global '{}' must be a literal, found {}", g->name, describe(lit)));
    }
    expect(Tok::Semi, "after a global declaration");
    return g;
  }

  // class := 'class' NAME '{' { 'var' NAME ':' type ';' | function } '}'
  std::unique_ptr<ClassDecl> class_decl() {
    auto c = std::make_unique<ClassDecl>();
    c->pos = peek().pos;
    c->is_abstract = accept(Tok::KwAbstract);
    take();  // 'class'
    Token name = expect(Tok::Ident, "after 'class'");
    c->name = std::string(name.text);
    c->name_pos = name.pos;
    c->type = class_type(c->name);
    c->type_params = type_parameters();
    if (accept(Tok::KwExtends)) {
      c->super_pos = peek().pos;
      Token base = expect(Tok::Ident, "after 'extends' (the superclass)");
      c->super_type = class_type(base.text, type_arguments());
    }
    if (accept(Tok::KwImplements)) interface_list(*c, "implements");
    expect(Tok::LBrace, fmt::format("after 'class {}'", c->name));
    while (!at(Tok::RBrace)) {
      if (at(Tok::KwVar)) {
        FieldDecl f;
        f.pos = take().pos;
        Token fname = expect(Tok::Ident, "after 'var' in a class");
        f.name = std::string(fname.text);
        f.name_pos = fname.pos;
        if (!at(Tok::Colon))
          fail(peek().pos, fmt::format("field '{}' needs a type, e.g. var {}: int; (fields have no initialiser)", f.name, f.name));
        take();
        f.type_pos = peek().pos;
        f.type = type();
        if (at(Tok::Assign))
          fail(peek().pos, fmt::format("field '{}' cannot have an initialiser (it starts zero, false or null); assign it in init", f.name));
        expect(Tok::Semi, "after a field declaration");
        c->fields.push_back(std::move(f));
      } else if (at(Tok::KwFn) || at(Tok::Annotation) || at(Tok::KwAbstract) || at(Tok::KwOverride)) {
        c->methods.push_back(function());
        c->methods.back()->owner = c.get();
        if (!c->methods.back()->type_params.empty())
          fail(c->methods.back()->type_params[0].pos,
               fmt::format("methods take no type parameters of their own; give them to the class: class {}<...>", c->name));
      } else {
        fail(peek().pos, fmt::format("expected 'var', 'fn' or '}}' in class '{}', found {}", c->name, describe(peek())));
      }
    }
    take();
    return c;
  }

  // NAME {',' NAME}: the interfaces a class implements or an interface extends.
  void interface_list(ClassDecl& c, std::string_view after) {
    do {
      c.interface_pos.push_back(peek().pos);
      Token name = expect(Tok::Ident, fmt::format("after '{}' (an interface)", after));
      c.interface_types.push_back(class_type(name.text, type_arguments()));
    } while (accept(Tok::Comma));
  }

  // interface := 'interface' NAME ['extends' NAME {',' NAME}] '{' { 'fn' NAME '(' params ')' [':' type] ';' } '}'
  std::unique_ptr<ClassDecl> interface_decl() {
    auto c = std::make_unique<ClassDecl>();
    c->pos = take().pos;
    c->is_interface = true;
    c->is_abstract = true;
    Token name = expect(Tok::Ident, "after 'interface'");
    c->name = std::string(name.text);
    c->name_pos = name.pos;
    c->type = class_type(c->name);
    c->type_params = type_parameters();
    if (at(Tok::KwImplements)) fail(peek().pos, fmt::format("an interface extends other interfaces: interface {} extends ...", c->name));
    if (accept(Tok::KwExtends)) interface_list(*c, "extends");
    expect(Tok::LBrace, fmt::format("after 'interface {}'", c->name));
    while (!at(Tok::RBrace)) {
      if (at(Tok::KwVar)) fail(peek().pos, fmt::format("interface '{}' cannot have fields; it declares methods only", c->name));
      if (at(Tok::KwAbstract) || at(Tok::KwOverride) || at(Tok::Annotation))
        fail(peek().pos, fmt::format("an interface method is written plain: fn name(params): type; ('{}' does not apply)", peek().text));
      if (!at(Tok::KwFn)) fail(peek().pos, fmt::format("expected 'fn' or '}}' in interface '{}', found {}", c->name, describe(peek())));
      auto f = signature();
      f->is_abstract = true;
      f->owner = c.get();
      if (at(Tok::LBrace)) fail(peek().pos, fmt::format("interface method '{}' has no body; end it with ';'", f->name));
      expect(Tok::Semi, fmt::format("after interface method '{}'", f->name));
      c->methods.push_back(std::move(f));
    }
    take();
    return c;
  }

  // function := annotation* ['abstract' | 'override'] 'fn' NAME '(' [param {',' param}] ')'
  //             [':' type] (block | ';' when abstract)
  std::unique_ptr<FnDecl> function() {
    auto f = std::make_unique<FnDecl>();
    while (at(Tok::Annotation)) {
      Token a = take();
      InlineHintAst h;
      if (a.str_value == "inline") h = InlineHintAst::Inline;
      else if (a.str_value == "noinline") h = InlineHintAst::NoInline;
      else fail(a.pos, fmt::format("unknown annotation '{}' (expected @inline or @noinline)", a.text));
      if (f->hint != InlineHintAst::Default && f->hint != h)
        fail(a.pos, "conflicting annotations @inline and @noinline");
      f->hint = h;
    }
    if (at(Tok::KwAbstract) || at(Tok::KwOverride)) {
      f->modifier_pos = peek().pos;
      (take().kind == Tok::KwAbstract ? f->is_abstract : f->is_override) = true;
    }
    if (!at(Tok::KwFn)) fail(peek().pos, fmt::format("expected 'fn' after an annotation, found {}", describe(peek())));
    signature(*f);
    if (f->is_abstract) {
      expect(Tok::Semi, fmt::format("after abstract method '{}' (it has no body)", f->name));
      return f;
    }
    if (!at(Tok::LBrace)) fail(peek().pos, fmt::format("expected '{{' to start the body of '{}', found {}", f->name, describe(peek())));
    f->body = block();
    return f;
  }

  // 'fn' NAME '(' [param {',' param}] ')' [':' type]
  std::unique_ptr<FnDecl> signature() {
    auto f = std::make_unique<FnDecl>();
    signature(*f);
    return f;
  }
  void signature(FnDecl& fd) {
    FnDecl* f = &fd;
    f->pos = take().pos;
    Token name = expect(Tok::Ident, "after 'fn'");
    f->name = std::string(name.text);
    f->name_pos = name.pos;
    f->type_params = type_parameters();
    parameters(*f);
  }

  // '(' [NAME ':' type {',' NAME ':' type}] ')' [':' type]: a function's or a lambda's.
  void parameters(FnDecl& f) {
    expect(Tok::LParen, f.name.empty() ? "after 'fn'" : "after the function name");
    if (!at(Tok::RParen)) {
      do {
        Token pn = expect(Tok::Ident, "(a parameter name)");
        expect(Tok::Colon, fmt::format("after parameter '{}' (parameters are written name: type)", pn.text));
        Param p{std::string(pn.text), pn.pos, type()};
        f.params.push_back(std::move(p));
      } while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "after the parameters");
    if (accept(Tok::Colon)) {
      f.result_pos = peek().pos;
      f.result = type();
    }
  }

  // ---- statements ----
  static StmtPtr make_stmt(StmtKind k, SourcePos pos) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->pos = pos;
    return s;
  }

  // block := '{' stmt* '}'
  StmtPtr block() {
    Token open = expect(Tok::LBrace);
    if (++nesting_ > kMaxNesting) fail(open.pos, "blocks are nested too deeply");
    auto b = make_stmt(StmtKind::Block, open.pos);
    while (!at(Tok::RBrace)) {
      if (at(Tok::End)) fail(peek().pos, fmt::format("expected '}}' to close the block opened at {}:{}, found end of file", open.pos.line, open.pos.col));
      b->stmts.push_back(statement());
    }
    b->end_pos = take().pos;
    nesting_--;
    return b;
  }

  // A braced body after if/while/for/else: braces are required by the language.
  StmtPtr braced_body(std::string_view after) {
    if (!at(Tok::LBrace)) fail(peek().pos, fmt::format("expected '{{' after {} (braces are required), found {}", after, describe(peek())));
    return block();
  }

  StmtPtr statement() {
    switch (peek().kind) {
      case Tok::KwVar: return var_decl();
      case Tok::KwIf: return if_stmt();
      case Tok::KwWhile: {
        auto s = make_stmt(StmtKind::While, take().pos);
        expect(Tok::LParen, "after 'while'");
        s->cond = expr();
        expect(Tok::RParen, "after the while condition");
        s->body = braced_body("the while condition");
        return s;
      }
      case Tok::KwFor: {
        auto s = make_stmt(StmtKind::For, take().pos);
        Token v = expect(Tok::Ident, "after 'for'");
        s->name = std::string(v.text);
        s->name_pos = v.pos;
        expect(Tok::KwIn, "after the for variable (for i in a..b)");
        s->value = expr();
        expect(Tok::DotDot, "between the for loop bounds (for i in a..b)");
        s->limit = expr();
        s->body = braced_body("the for loop bounds");
        return s;
      }
      case Tok::KwBreak:
      case Tok::KwContinue: {
        Token t = take();
        auto s = make_stmt(t.kind == Tok::KwBreak ? StmtKind::Break : StmtKind::Continue, t.pos);
        expect(Tok::Semi, fmt::format("after '{}'", t.text));
        return s;
      }
      case Tok::KwReturn: {
        auto s = make_stmt(StmtKind::Return, take().pos);
        if (!at(Tok::Semi)) s->value = expr();
        expect(Tok::Semi, "after the return statement");
        return s;
      }
      case Tok::LBrace: return block();
      case Tok::Semi: fail(peek().pos, "expected a statement, found ';'");
      default: return simple_statement();
    }
  }

  // 'var' NAME [':' type] '=' expr ';'
  StmtPtr var_decl() {
    auto s = make_stmt(StmtKind::VarDecl, take().pos);
    Token name = expect(Tok::Ident, "after 'var'");
    s->name = std::string(name.text);
    s->name_pos = name.pos;
    if (accept(Tok::Colon)) {
      s->has_declared_type = true;
      s->declared_type = type();
    }
    if (!at(Tok::Assign)) fail(peek().pos, fmt::format("expected '=' after 'var {}' (a local needs an initial value), found {}", s->name, describe(peek())));
    s->op_pos = take().pos;
    s->value = expr();
    expect(Tok::Semi, "after the declaration");
    return s;
  }

  // 'if' '(' expr ')' block ['else' (if_stmt | block)]
  StmtPtr if_stmt() {
    auto s = make_stmt(StmtKind::If, take().pos);
    expect(Tok::LParen, "after 'if'");
    s->cond = expr();
    expect(Tok::RParen, "after the if condition");
    s->body = braced_body("the if condition");
    if (accept(Tok::KwElse)) {
      if (at(Tok::KwIf)) {
        // else-if chains nest; count them so a long chain cannot overflow the stack.
        if (++nesting_ > kMaxNesting) fail(peek().pos, "else-if chain is nested too deeply");
        s->else_branch = if_stmt();
        nesting_--;
      } else {
        s->else_branch = braced_body("'else'");
      }
    }
    return s;
  }

  // An assignment or a call statement.
  StmtPtr simple_statement() {
    SourcePos start = peek().pos;
    ExprPtr e = expr();
    BinOp op = BinOp::Add;
    if (at(Tok::Assign) || compound_op(peek().kind, op)) {
      if (e->kind != ExprKind::Name && e->kind != ExprKind::Index && e->kind != ExprKind::Field)
        fail(e->pos, "cannot assign to this expression (only to a variable, a field or an array element)");
      auto s = make_stmt(StmtKind::Assign, start);
      Token t = take();
      s->op_pos = t.pos;
      s->compound = t.kind != Tok::Assign;
      if (s->compound) s->binop = op;
      s->target = std::move(e);
      s->value = expr();
      expect(Tok::Semi, "after the assignment");
      return s;
    }
    if (e->kind != ExprKind::Call && e->kind != ExprKind::Spawn && e->kind != ExprKind::MethodCall &&
        e->kind != ExprKind::SuperCall && e->kind != ExprKind::CallValue) {
      if (!at(Tok::Semi)) fail(peek().pos, fmt::format("expected '=' or ';', found {}", describe(peek())));
      fail(e->pos, "only a call can be used as a statement");
    }
    auto s = make_stmt(StmtKind::ExprStmt, start);
    s->value = std::move(e);
    expect(Tok::Semi, "after the call");
    return s;
  }

  // ---- expressions ----
  static ExprPtr make_expr(ExprKind k, SourcePos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = pos;
    e->op_pos = pos;
    return e;
  }
  // Adds a child and keeps `depth` (the subtree height) up to date, bounded.
  static void add_child(Expr& parent, ExprPtr child) {
    parent.depth = std::max(parent.depth, child->depth + 1);
    if (parent.depth > kMaxNesting) fail(parent.op_pos, "expression is nested too deeply");
    parent.args.push_back(std::move(child));
  }

  ExprPtr expr() { return binary(1); }

  // Precedence climbing: operands of operators with precedence >= min_prec.
  ExprPtr binary(int min_prec) {
    ExprPtr lhs = unary();
    for (;;) {
      if ((at(Tok::KwIs) || at(Tok::KwAs)) && kTypeTestPrec >= min_prec) {  // `e is T`, `e as T`: bind like '<'
        Token op = take();
        auto e = make_expr(op.kind == Tok::KwIs ? ExprKind::Is : ExprKind::As, lhs->pos);
        e->op_pos = op.pos;
        e->type_pos = peek().pos;
        e->type_operand = type();
        add_child(*e, std::move(lhs));
        lhs = std::move(e);
        continue;
      }
      BinInfo info = binary_info(peek().kind);
      if (info.prec == 0 || info.prec < min_prec) return lhs;
      Token op = take();
      ExprPtr rhs = binary(info.prec + 1);  // +1: left associative
      auto e = make_expr(ExprKind::Binary, lhs->pos);
      e->op_pos = op.pos;
      e->binop = info.op;
      add_child(*e, std::move(lhs));
      add_child(*e, std::move(rhs));
      lhs = std::move(e);
    }
  }

  ExprPtr unary() {
    Tok k = peek().kind;
    if (k == Tok::Minus) {
      // A minus right before a literal (not followed by a postfix operator) is a
      // negative literal; the only way to write INT64_MIN.
      Tok lit = peek(1).kind;
      Tok after = peek(2).kind;
      if ((lit == Tok::IntLit || lit == Tok::FloatLit) && after != Tok::LBracket && after != Tok::LParen) {
        SourcePos pos = take().pos;
        Token t = take();
        if (lit == Tok::IntLit) {
          auto e = make_expr(ExprKind::IntLit, pos);
          e->int_value = int64_t(0 - uint64_t(t.int_value));  // wraps 2^63 to INT64_MIN
          return e;
        }
        auto e = make_expr(ExprKind::FloatLit, pos);
        e->float_value = -t.float_value;
        return e;
      }
    }
    if (k == Tok::Minus || k == Tok::Bang || k == Tok::Tilde) {
      Token op = take();
      if (++nesting_ > kMaxNesting) fail(op.pos, "expression is nested too deeply");
      ExprPtr operand = unary();
      nesting_--;
      auto e = make_expr(ExprKind::Unary, op.pos);
      e->unop = k == Tok::Minus ? UnOp::Neg : k == Tok::Bang ? UnOp::Not : UnOp::BitNot;
      add_child(*e, std::move(operand));
      return e;
    }
    return postfix();
  }

  // postfix := primary { '[' expr ']' | '.' NAME [arguments] | arguments }
  ExprPtr postfix() {
    ExprPtr e = primary();
    for (;;) {
      if (at(Tok::LBracket)) {
        Token open = take();
        auto ix = make_expr(ExprKind::Index, e->pos);
        ix->op_pos = open.pos;
        add_child(*ix, std::move(e));
        add_child(*ix, nested_expr());
        expect(Tok::RBracket, "after the array index");
        e = std::move(ix);
      } else if (at(Tok::Dot)) {
        take();
        Token name = expect(Tok::Ident, "after '.' (a field or method name)");
        bool call = at(Tok::LParen);
        auto m = make_expr(call ? ExprKind::MethodCall : ExprKind::Field, e->pos);
        m->op_pos = name.pos;
        m->text = std::string(name.text);
        add_child(*m, std::move(e));
        if (call) arguments(*m);
        e = std::move(m);
      } else if (at(Tok::LParen)) {  // a call of a function value: f(1)(2), a[i](x), (fn(x: int) {...})(3)
        auto c = make_expr(ExprKind::CallValue, e->pos);
        c->op_pos = peek().pos;
        add_child(*c, std::move(e));
        arguments(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  // A full expression inside brackets/parentheses/arguments, counted against the nesting limit.
  ExprPtr nested_expr() {
    if (++nesting_ > kMaxNesting) fail(peek().pos, "expression is nested too deeply");
    ExprPtr e = expr();
    nesting_--;
    return e;
  }

  // '(' [expr {',' expr}] ')' appended to `call`.
  void arguments(Expr& call) {
    expect(Tok::LParen, fmt::format("after '{}'", call.text));
    if (!at(Tok::RParen)) {
      do add_child(call, nested_expr());
      while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "after the arguments");
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::IntLit: {
        if (t.int_is_min_magnitude)
          fail(t.pos, fmt::format("integer literal {} does not fit in int", t.text));
        auto e = make_expr(ExprKind::IntLit, t.pos);
        e->int_value = t.int_value;
        take();
        return e;
      }
      case Tok::FloatLit: {
        auto e = make_expr(ExprKind::FloatLit, t.pos);
        e->float_value = t.float_value;
        take();
        return e;
      }
      case Tok::StringLit: {
        auto e = make_expr(ExprKind::StringLit, t.pos);
        e->text = t.str_value;
        take();
        return e;
      }
      case Tok::KwNull: {
        auto e = make_expr(ExprKind::NullLit, t.pos);
        take();
        return e;
      }
      case Tok::KwThis: {
        auto e = make_expr(ExprKind::This, t.pos);
        take();
        return e;
      }
      case Tok::KwSuper: {  // super.m(args): the superclass's m, called without dispatch
        auto e = make_expr(ExprKind::SuperCall, take().pos);
        expect(Tok::Dot, "after 'super' (super.m(...) calls the superclass's m)");
        Token name = expect(Tok::Ident, "after 'super.'");
        e->op_pos = name.pos;
        e->text = std::string(name.text);
        if (!at(Tok::LParen)) fail(peek().pos, fmt::format("expected '(' after 'super.{}' (only a superclass method can be called)", e->text));
        arguments(*e);
        return e;
      }
      case Tok::KwFn: {  // a lambda: fn(x: T): R { body }
        auto e = make_expr(ExprKind::Lambda, t.pos);
        e->lambda = std::make_unique<FnDecl>();
        FnDecl& f = *e->lambda;
        f.pos = take().pos;
        f.name_pos = f.pos;
        parameters(f);
        if (!at(Tok::LBrace)) fail(peek().pos, fmt::format("expected '{{' to start the body of the lambda, found {}", describe(peek())));
        f.body = block();
        return e;
      }
      case Tok::KwTrue:
      case Tok::KwFalse: {
        auto e = make_expr(ExprKind::BoolLit, t.pos);
        e->bool_value = t.kind == Tok::KwTrue;
        take();
        return e;
      }
      case Tok::Ident: {
        if (t.text == "spawn" && peek(1).kind == Tok::Ident) {
          SourcePos pos = take().pos;
          Token name = take();
          auto e = make_expr(ExprKind::Spawn, pos);
          e->op_pos = name.pos;
          e->text = std::string(name.text);
          if (!at(Tok::LParen)) fail(peek().pos, fmt::format("expected '(' after 'spawn {}' (spawn takes a call), found {}", e->text, describe(peek())));
          arguments(*e);
          return e;
        }
        Token name = take();
        bool call = at(Tok::LParen);
        auto e = make_expr(call ? ExprKind::Call : ExprKind::Name, name.pos);
        e->text = std::string(name.text);
        if (call) arguments(*e);
        return e;
      }
      case Tok::LParen: {
        take();
        ExprPtr e = nested_expr();
        expect(Tok::RParen, "to close '('");
        return e;
      }
      case Tok::KwNew: {
        SourcePos pos = take().pos;
        SourcePos type_pos = peek().pos;
        Type elem = base_type();
        if (at(Tok::LParen) && type_kind(elem) == TypeKind::Class) {  // new C(args), new C<Args>(args)
          auto e = make_expr(ExprKind::New, pos);
          e->op_pos = type_pos;
          e->text = type_info(elem).name;
          e->type_operand = elem;
          arguments(*e);
          return e;
        }
        // new T[n], T any type: new int[n], new Circle[n], new int[][n] (n null int arrays)
        auto e = make_expr(ExprKind::NewArray, pos);
        e->type_pos = type_pos;
        while (at(Tok::LBracket) && peek(1).kind == Tok::RBracket) {
          take();
          take();
          elem = array_of(elem);
        }
        e->type_operand = array_of(elem);
        e->op_pos = expect(Tok::LBracket, fmt::format("after 'new {}' (the array's size)", type_name(elem))).pos;
        add_child(*e, nested_expr());
        expect(Tok::RBracket, "after the array size");
        return e;
      }
      case Tok::KwInt:
      case Tok::KwFloat:
      case Tok::KwString: {
        Token kw = take();
        auto e = make_expr(ExprKind::Convert, kw.pos);
        e->type_operand = kw.kind == Tok::KwInt ? Type::Int : kw.kind == Tok::KwFloat ? Type::Float : Type::String;
        e->text = std::string(kw.text);
        if (!at(Tok::LParen))
          fail(peek().pos, fmt::format("expected '(' after '{}' (conversions are written {}(x)), found {}", kw.text, kw.text, describe(peek())));
        take();
        add_child(*e, nested_expr());
        expect(Tok::RParen, "after the conversion's operand");
        return e;
      }
      default:
        fail(t.pos, fmt::format("expected an expression, found {}", describe(t)));
    }
  }

  Lexer lexer_;
  std::deque<Token> ahead_;
  int nesting_ = 0;
};

}  // namespace

ast::Program parse_program(std::string_view source, uint16_t file) { return Parser(source, file).program(); }

ast::ExprPtr parse_expression(std::string_view source) { return Parser(source).whole_expression(); }

}  // namespace vm
