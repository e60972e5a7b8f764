#include "vm/codegen.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace vm {

using namespace ast;

namespace {

[[noreturn]] void fail(SourcePos at, std::string message) { throw FrontendError{at, std::move(message)}; }

// A jump target. Forward branches are patched when the label is bound; `depth` is the
// stack depth every branch to it carries (the same for all, by construction).
struct Label {
  int64_t bci = -1;
  std::vector<size_t> refs;  // bcis of forward branches still to patch
  int depth = -1;
  bool bound() const { return bci >= 0; }
};

Op int_compare_branch(BinOp op) {
  switch (op) {
    case BinOp::Eq: return Op::if_icmpeq;
    case BinOp::Ne: return Op::if_icmpne;
    case BinOp::Lt: return Op::if_icmplt;
    case BinOp::Le: return Op::if_icmple;
    case BinOp::Gt: return Op::if_icmpgt;
    default: return Op::if_icmpge;
  }
}
// The comparison that is true exactly when `op` is false (valid for ints only).
BinOp negate(BinOp op) {
  switch (op) {
    case BinOp::Eq: return BinOp::Ne;
    case BinOp::Ne: return BinOp::Eq;
    case BinOp::Lt: return BinOp::Ge;
    case BinOp::Le: return BinOp::Gt;
    case BinOp::Gt: return BinOp::Le;
    default: return BinOp::Lt;  // Ge
  }
}

// The opcode computing `a op b` on operands of types `t` and `u` (value context): the
// checker has made them equal, or both references of which one may be null.
Op binary_opcode(BinOp op, Type t, Type u) {
  const bool i = t == Type::Int, f = t == Type::Float;
  if (t == Type::String || u == Type::String) {  // the string operations; null may meet a string
    switch (op) {
      case BinOp::Add: return Op::sconcat;
      case BinOp::Eq: return Op::scmpeq;
      case BinOp::Ne: return Op::scmpne;
      default: return Op::nop;
    }
  }
  if (is_reference(t)) return op == BinOp::Eq ? Op::acmpeq : Op::acmpne;  // identity
  switch (op) {
    case BinOp::Add: return i ? Op::iadd : Op::fadd;
    case BinOp::Sub: return i ? Op::isub : Op::fsub;
    case BinOp::Mul: return i ? Op::imul : Op::fmul;
    case BinOp::Div: return i ? Op::idiv : Op::fdiv;
    case BinOp::Rem: return Op::irem;
    case BinOp::Shl: return Op::ishl;
    case BinOp::Shr: return Op::ishr;
    case BinOp::Ushr: return Op::iushr;
    case BinOp::BitAnd: return i ? Op::iand : Op::zand;
    case BinOp::BitOr: return i ? Op::ior : Op::zor;
    case BinOp::BitXor: return i ? Op::ixor : Op::zxor;
    case BinOp::Eq: return i ? Op::icmpeq : f ? Op::fcmpeq : Op::zcmpeq;
    case BinOp::Ne: return i ? Op::icmpne : f ? Op::fcmpne : Op::zcmpne;
    case BinOp::Lt: return i ? Op::icmplt : Op::fcmplt;
    case BinOp::Le: return i ? Op::icmple : Op::fcmple;
    case BinOp::Gt: return i ? Op::icmpgt : Op::fcmpgt;
    case BinOp::Ge: return i ? Op::icmpge : Op::fcmpge;
    case BinOp::And: case BinOp::Or: break;  // compiled with branches
  }
  return Op::nop;
}

class FnGen {
 public:
  // `slowdowns`: the --slowdown sites of this function (vm/slowdown.h).
  FnGen(const Program& prog, const FnDecl& decl, Function& fn, std::vector<std::pair<uint16_t, SlowdownSite*>> slowdowns)
      : prog_(prog), decl_(decl), fn_(fn), b_(fn.code), slowdowns_(std::move(slowdowns)) {}

  void run() {
    if (decl_.is_abstract) {
      abstract_body();
      return;
    }
    // A captured parameter lives in a cell from the start (a lambda's first is its closure).
    uint32_t first_param = decl_.owner != nullptr || decl_.is_lambda() ? 1 : 0;
    for (uint32_t p = first_param; p < first_param + decl_.params.size(); p++) {
      if (decl_.cell_of(p) < 0) continue;
      at(decl_.pos);
      into_new_cell(p, [&] { load(p); });
    }
    if (const FnDecl* base = decl_.implicit_super_init) {  // an init runs its superclass's first
      at(decl_.pos);
      load_this();
      with_u16(Op::call, uint16_t(base->index), 1, 0);
    }
    block(*decl_.body);
    if (reachable_ && decl_.result == Type::Void) {
      line_ = uint32_t(decl_.body->end_pos.line);  // the implicit return is at the closing brace
      simple(Op::ret);
    }
    // A non-void function never reaches here reachable (the checker demands a return on
    // every path); if it did, the verifier reports the fall-off.
    fn_.max_stack = uint16_t(max_depth_);
    std::stable_sort(fn_.loops.begin(), fn_.loops.end(),
                     [](const LoopEntry& a, const LoopEntry& b) { return a.header_bci < b.header_bci; });
  }

 private:
  // An abstract method's Function holds its vtable slot's signature; no call ever runs it
  // (no object's class is abstract, and every concrete class overrides it), so its body
  // only has to verify: a zero of its result type, returned.
  void abstract_body() {
    line_ = uint32_t(decl_.pos.line);
    Type r = decl_.result;
    if (r == Type::Void) {
      simple(Op::ret);
    } else {
      if (is_reference(r)) simple(Op::aconst_null);
      else ldc(r, 0);
      simple(Op::vret);
    }
    fn_.max_stack = uint16_t(max_depth_);
  }

  // ---- emission ----
  // Every instruction goes through here: it keeps the line table, the stack depth and
  // the reachability, and drops instructions that can never run.
  bool begin(int pops, int pushes) {
    if (!reachable_) return false;
    if (fn_.lines.empty() || fn_.lines.back().line != line_) {
      if (!fn_.lines.empty() && fn_.lines.back().bci == b_.here()) fn_.lines.back().line = line_;
      else fn_.lines.push_back({uint32_t(b_.here()), line_});
      slow_down_here();
    }
    depth_ -= pops;
    depth_ += pushes;
    max_depth_ = std::max(max_depth_, depth_);
    if (depth_ > 65535) fail(pos_, fmt::format("expression too large in '{}' (stack over 65535 slots)", decl_.name));
    return true;
  }
  // Control enters a run of the line's code here: a --slowdown of this line goes first, so
  // that whatever reaches the run (falling in, a branch to a label bound here, a loop's
  // back branch) passes it.
  void slow_down_here() {
    for (auto [site, s] : slowdowns_) {
      if (s->line != line_) continue;
      size_t at = b_.here();
      b_.emit_slowdown(site, s->ns);
      fn_.slowdown_bytes += uint32_t(b_.here() - at);
      s->placed++;
    }
  }
  // An opcode whose stack effect is fully given by opcodes.def.
  void simple(Op o) {
    const OpInfo& info = op_info(o);
    if (!begin(int(info.pops.size()), int(info.pushes.size()))) return;
    b_.emit(o);
    if (is_return(o)) reachable_ = false;
  }
  void with_u16(Op o, uint16_t operand, int pops, int pushes) {
    if (begin(pops, pushes)) b_.emit_u16(o, operand);
  }
  void with_u16u16(Op o, uint32_t a, uint32_t b, int pops, int pushes) {
    if (begin(pops, pushes)) b_.emit_u16u16(o, uint16_t(a), uint16_t(b));
  }
  void load(uint32_t slot) { with_u16(Op::load, uint16_t(slot), 0, 1); }
  // A method's receiver is local 0; a lambda's is in its closure.
  void load_this() {
    if (decl_.is_lambda()) with_u16(Op::loadcapture, uint16_t(decl_.this_capture), 0, 1);
    else load(0);
  }

  // An array of type `array`, its length on the stack: newarray for ints, floats and
  // bools, anewarray for references.
  void new_array(Type array) {
    Type elem = type_info(array).elem;
    if (elem == Type::Int || elem == Type::Float || elem == Type::Bool) {
      if (begin(1, 1)) b_.emit_u8(Op::newarray, elem == Type::Int ? 0 : elem == Type::Float ? 1 : 2);
    } else {
      with_u16(Op::anewarray, type_index(array), 1, 1);
    }
  }

  // ---- cells: the variables lambdas capture ----
  // A new cell for variable `slot`, holding what `push_value` pushes, into its cell slot.
  template <typename PushValue>
  void into_new_cell(uint32_t slot, PushValue push_value) {
    auto cell = uint32_t(decl_.cell_of(slot));
    Type type = decl_.local_types[cell];
    ldc(Type::Int, 1);
    new_array(type);
    simple(Op::dup);
    ldc(Type::Int, 0);
    push_value();
    simple(element_store(type));
    store(cell);
  }
  // Pushes the cell of a name that lives in one and returns its type, else returns Void.
  Type push_cell(const Expr& name) {
    if (name.kind != ExprKind::Name) return Type::Void;
    if (name.ref == NameRef::Capture) {
      with_u16(Op::loadcapture, uint16_t(name.index), 0, 1);
      return decl_.captures[name.index].type;
    }
    if (name.ref == NameRef::Local && decl_.cell_of(name.index) >= 0) {
      auto cell = uint32_t(decl_.cell_of(name.index));
      load(cell);
      return decl_.local_types[cell];
    }
    return Type::Void;
  }
  void store(uint32_t slot) { with_u16(Op::store, uint16_t(slot), 1, 0); }

  uint16_t constant(Type t, int64_t bits) {
    auto [it, fresh] = constants_.try_emplace({t, bits}, uint16_t(fn_.constants.size()));
    if (fresh) {
      if (fn_.constants.size() >= 65536) fail(pos_, fmt::format("too many constants in '{}' (at most 65536)", decl_.name));
      fn_.constants.push_back({t, bits});
    }
    return it->second;
  }
  void ldc(Type t, int64_t bits) {
    if (reachable_) with_u16(Op::ldc, constant(t, bits), 0, 1);
  }

  void branch(Op o, Label& target) {
    int pops = int(op_info(o).pops.size());
    if (!begin(pops, 0)) return;
    if (target.bound()) {
      last_backward_ = int64_t(b_.here());
      b_.emit_branch_to(o, size_t(target.bci));
    } else {
      target.refs.push_back(b_.emit_branch(o));
      target.depth = depth_;
    }
    if (!falls_through(o)) reachable_ = false;
  }
  // Binds a label here; code after it is reachable if any branch targets it.
  void bind(Label& l) {
    l.bci = int64_t(b_.here());
    for (size_t ref : l.refs) b_.patch_branch(ref, b_.here());
    if (!l.refs.empty()) {
      reachable_ = true;
      depth_ = l.depth;
    }
    l.refs.clear();
  }
  // Binds a loop header reached only by backward branches emitted later.
  void bind_loop_header(Label& l) {
    l.bci = int64_t(b_.here());
    reachable_ = true;
    depth_ = 0;
  }

  void at(SourcePos p) {
    pos_ = p;
    line_ = uint32_t(p.line);
  }

  // ---- statements ----
  struct LoopLabels {
    Label* exit;
    Label* cont;
  };

  void block(const Stmt& b) {
    for (auto& s : b.stmts) stmt(*s);
  }

  void stmt(const Stmt& s) {
    if (!reachable_) return;  // dead code is not emitted
    switch (s.kind) {
      case StmtKind::Block: block(s); break;
      case StmtKind::VarDecl:
        at(s.pos);
        if (decl_.cell_of(s.slot) >= 0) {  // a new cell each time: a loop body's closures keep their own
          into_new_cell(s.slot, [&] { value(*s.value); at(s.pos); });
          break;
        }
        value(*s.value);
        at(s.pos);
        store(s.slot);
        break;
      case StmtKind::Assign: assign(s); break;
      case StmtKind::If: if_stmt(s); break;
      case StmtKind::While: while_stmt(s); break;
      case StmtKind::For: for_stmt(s); break;
      case StmtKind::Break:
        at(s.pos);
        branch(Op::jump, *loops_.back().exit);
        break;
      case StmtKind::Continue:
        at(s.pos);
        branch(Op::jump, *loops_.back().cont);
        break;
      case StmtKind::Return:
        at(s.pos);
        if (s.value) {
          value(*s.value);
          at(s.pos);
          simple(Op::vret);
        } else {
          simple(Op::ret);
        }
        break;
      case StmtKind::ExprStmt:
        at(s.pos);
        value(*s.value);
        if (s.value->type != Type::Void) simple(Op::pop);
        break;
    }
  }

  void assign(const Stmt& s) {
    const Expr& t = *s.target;
    at(s.pos);
    if (t.kind == ExprKind::Field || (t.kind == ExprKind::Name && t.ref == NameRef::Field)) {
      if (t.kind == ExprKind::Field) value(*t.args[0]);
      else load_this();
      new_value(s, Op::dup, [&] { with_u16u16(Op::getfield, t.class_index, t.index, 1, 1); });
      with_u16u16(Op::putfield, t.class_index, t.index, 2, 0);
      return;
    }
    if (t.kind == ExprKind::Index && local_array_store(s)) return;
    if (t.kind == ExprKind::Index) {
      value(*t.args[0]);
      value(*t.args[1]);
      Type array = t.args[0]->type;
      new_value(s, Op::dup2, [&] { simple(element_load(array)); });
      simple(element_store(array));
      return;
    }
    if (Type cell = push_cell(t); cell != Type::Void) {
      ldc(Type::Int, 0);
      new_value(s, Op::dup2, [&] { simple(element_load(cell)); });
      simple(element_store(cell));
      return;
    }
    const bool local = t.ref == NameRef::Local;
    if (s.compound && local && t.type == Type::Int && s.value->kind == ExprKind::IntLit &&
        (s.binop == BinOp::Add || s.binop == BinOp::Sub)) {
      int64_t k = s.value->int_value;
      // k fits int32 and so does -k for `-=` (INT32_MIN has no int32 negation).
      bool fits = s.binop == BinOp::Add ? (k >= INT32_MIN && k <= INT32_MAX) : (k > INT32_MIN && k <= INT32_MAX);
      if (fits) {
        if (begin(0, 0)) b_.emit_iinc(uint16_t(t.index), int32_t(s.binop == BinOp::Add ? k : -k));
        return;
      }
    }
    if (s.compound && local && accumulate(s)) return;
    if (s.compound) {
      name_load(t);
      compound_value(s);
    } else {
      value(*s.value);
    }
    at(s.op_pos);
    if (local) store(t.index);
    else with_u16(Op::gstore, uint16_t(t.index), 1, 0);
  }

  // `x += e` and `x *= e` with x an int or float local and e of its type:
  // `e; opl x; store x` instead of `load x; e; op; store x`, one instruction fewer, and
  // the JIT adds into x's own register (Compiler::accumulate). x is read after e instead
  // of before, which no program can see: e cannot write x (a local a lambda shares is a
  // cell, no plain local), and + and * give the same value either way round (a NaN's
  // payload aside, which Mini never shows). Not when e is a local: local_operand's
  // `load x; opl y; store x` is as short.
  bool accumulate(const Stmt& s) {
    const Expr& t = *s.target;
    if (!plain_local(t) || (t.type != Type::Int && t.type != Type::Float) || s.value->type != t.type) return false;
    if ((s.binop != BinOp::Add && s.binop != BinOp::Mul) || plain_local(*s.value)) return false;
    Op o;
    if (!local_operand_form(binary_opcode(s.binop, t.type, t.type), o)) return false;
    value(*s.value);
    at(s.op_pos);
    with_u16(o, uint16_t(t.index), 1, 1);
    store(t.index);
    return true;
  }

  // `a[i] = e` and `a[i] op= e` with a an int[] or float[] local and i an int local:
  // `e; iastorell a, i`, and `ialoadll a, i; e; op; iastorell a, i`, instead of pushing
  // a and i first (and `dup2` for op=). The order of what can be seen is the same: e
  // cannot write a or i (a local a lambda shares is a cell, no plain local), and the
  // element is read (op=) before e and written after it, as before.
  bool local_array_store(const Stmt& s) {
    const Expr& array = *s.target->args[0];
    const Expr& index = *s.target->args[1];
    if (!plain_local(array) || !plain_local(index) || index.type != Type::Int) return false;
    if (array.type != Type::IntArray && array.type != Type::FloatArray) return false;
    bool ints = array.type == Type::IntArray;
    if (s.compound) {
      at(s.op_pos);
      with_u16u16(ints ? Op::ialoadll : Op::faloadll, array.index, index.index, 0, 1);
      compound_value(s);
    } else {
      value(*s.value);
    }
    at(s.op_pos);
    with_u16u16(ints ? Op::iastorell : Op::fastorell, array.index, index.index, 1, 0);
    return true;
  }

  // The value an assignment to a field or an element stores, its object (and index)
  // already on the stack: for `op=`, `dup` them and `load_current` the old value first.
  template <typename LoadCurrent>
  void new_value(const Stmt& s, Op dup, LoadCurrent load_current) {
    if (s.compound) {
      at(s.op_pos);
      simple(dup);
      load_current();
      compound_value(s);
    } else {
      value(*s.value);
    }
    at(s.op_pos);
  }

  // `old op e` for `op=`, the old value on the stack: `op` with e as its local operand
  // where e is a local of the target's type (local_operand), else e, then op.
  void compound_value(const Stmt& s) {
    at(s.op_pos);
    if (local_operand(s.binop, s.target->type, *s.value)) return;
    value(*s.value);
    at(s.op_pos);
    simple(binary_opcode(s.binop, s.target->type, s.value->type));
  }

  void if_stmt(const Stmt& s) {
    at(s.pos);
    Label else_label, end;
    cond_branch(*s.cond, false, else_label);
    block(*s.body);
    if (s.else_branch) {
      branch(Op::jump, end);  // dropped when the then-branch cannot complete
      bind(else_label);
      stmt(*s.else_branch);
      bind(end);
    } else {
      bind(else_label);
    }
  }

  void while_stmt(const Stmt& s) {
    at(s.pos);
    Label body, check, exit;
    branch(Op::jump, check);
    bind_loop_header(body);
    loops_.push_back({&exit, &check});
    block(*s.body);
    loops_.pop_back();
    bind(check);  // always reached: the jump above targets it
    at(s.pos);
    last_backward_ = -1;
    const Expr& c = *s.cond;
    if (c.kind == ExprKind::BoolLit && c.bool_value) branch(Op::jump, body);  // while (true)
    else cond_branch(c, true, body);
    fn_.loops.push_back({uint32_t(body.bci), uint32_t(last_backward_), false});
    bind(exit);
  }

  void for_stmt(const Stmt& s) {
    at(s.pos);
    value(*s.value);
    at(s.pos);
    store(s.slot);
    value(*s.limit);
    at(s.pos);
    store(s.limit_slot);
    load(s.slot);
    load(s.limit_slot);
    Label body, cont, exit;
    branch(Op::if_icmpge, exit);
    bind(body);  // reached by falling through
    if (decl_.cell_of(s.slot) >= 0) {  // captured: each iteration's value in a cell of its own
      at(s.pos);
      into_new_cell(s.slot, [&] { load(s.slot); });
    }
    loops_.push_back({&exit, &cont});
    block(*s.body);
    loops_.pop_back();
    bind(cont);
    if (reachable_) {  // else the body always leaves the loop: there is no latch
      at(s.pos);
      begin(0, 0);  // reachable: it emits (after a --slowdown of this line, if any)
      uint32_t latch = uint32_t(b_.here());
      b_.emit_forloop(uint16_t(s.slot), uint16_t(s.limit_slot), size_t(body.bci));
      fn_.loops.push_back({uint32_t(body.bci), latch, true});
    }
    bind(exit);
  }

  // ---- expressions ----

  // A local read straight from its slot (not a captured one, which lives in a cell): what
  // the superinstructions below take as an operand.
  bool plain_local(const Expr& e) const {
    return e.kind == ExprKind::Name && e.ref == NameRef::Local && decl_.cell_of(e.index) < 0;
  }

  // `a op x` with x a local of the operation's type, a on the stack: one superinstruction
  // (opcodes.def's base column) instead of `load x; op`. Returns false if it does not apply.
  bool local_operand(BinOp op, Type t, const Expr& rhs) {
    if (!plain_local(rhs) || rhs.type != t) return false;
    Op o;
    // The superinstruction's one popped value has the local's type.
    if (!local_operand_form(binary_opcode(op, t, t), o) || op_info(o).pops[0] != type_letter(t)) return false;
    with_u16(o, uint16_t(rhs.index), 1, 1);
    return true;
  }

  // `x * y` with x and y float locals: one superinstruction instead of `load x; fmull y`.
  // Returns false if it does not apply.
  bool local_local_product(const Expr& e) {
    if (e.binop != BinOp::Mul || e.args[0]->type != Type::Float || e.args[1]->type != Type::Float) return false;
    if (!plain_local(*e.args[0]) || !plain_local(*e.args[1])) return false;
    at(e.op_pos);
    with_u16u16(Op::fmulll, e.args[0]->index, e.args[1]->index, 0, 1);
    return true;
  }

  // `a[i]` with i an int local and a an int[] or float[], a on the stack: one
  // superinstruction instead of `load i; iaload`. Returns false if it does not apply.
  bool local_index(Type array, const Expr& index) {
    if (!plain_local(index) || index.type != Type::Int) return false;
    Op o;
    if (!local_operand_form(element_load(array), o)) return false;  // aaload has none
    with_u16(o, uint16_t(index.index), 1, 1);
    return true;
  }

  // `a[i]` with a an int[] or float[] local and i an int local: one superinstruction
  // instead of `load a; load i; iaload`. Returns false if it does not apply.
  bool local_array_index(const Expr& array, const Expr& index, SourcePos pos) {
    if (!plain_local(array) || !plain_local(index) || index.type != Type::Int) return false;
    if (array.type != Type::IntArray && array.type != Type::FloatArray) return false;
    at(pos);
    with_u16u16(array.type == Type::IntArray ? Op::ialoadll : Op::faloadll, array.index, index.index, 0, 1);
    return true;
  }

  void name_load(const Expr& e) {
    if (e.ref == NameRef::Capture && !decl_.captures[e.index].cell) {  // `this`, never a name
      with_u16(Op::loadcapture, uint16_t(e.index), 0, 1);
      return;
    }
    if (Type cell = push_cell(e); cell != Type::Void) {
      ldc(Type::Int, 0);
      simple(element_load(cell));
    } else if (e.ref == NameRef::Function) {
      ldc(e.type, e.index);  // the function's one value (made when the module loads)
    } else if (e.ref == NameRef::Local) {
      load(e.index);
    } else if (e.ref == NameRef::Field) {
      load_this();
      with_u16u16(Op::getfield, e.class_index, e.index, 1, 1);
    } else {
      with_u16(Op::gload, uint16_t(e.index), 0, 1);
    }
  }

  // Pushes the value of `e` (nothing for a call without result).
  void value(const Expr& e) {
    at(e.pos);
    switch (e.kind) {
      case ExprKind::IntLit: ldc(Type::Int, e.int_value); return;
      case ExprKind::FloatLit: ldc(Type::Float, std::bit_cast<int64_t>(e.float_value)); return;
      case ExprKind::BoolLit: ldc(Type::Bool, e.bool_value); return;
      case ExprKind::StringLit: ldc(Type::String, string_index(e.text, e.pos)); return;
      case ExprKind::NullLit: simple(Op::aconst_null); return;
      case ExprKind::Name: name_load(e); return;
      case ExprKind::Unary:
        value(*e.args[0]);
        at(e.op_pos);
        switch (e.unop) {
          case UnOp::Neg: simple(e.type == Type::Int ? Op::ineg : Op::fneg); return;
          case UnOp::Not: simple(Op::znot); return;
          case UnOp::BitNot: simple(Op::inot); return;
        }
        return;
      case ExprKind::Binary: {
        if (e.binop == BinOp::And || e.binop == BinOp::Or) {
          // 0/1 through branches: short circuit in value context too.
          Label is_false, end;
          cond_branch(e, false, is_false);
          ldc(Type::Bool, 1);
          branch(Op::jump, end);
          bind(is_false);
          ldc(Type::Bool, 0);
          bind(end);
          return;
        }
        if (local_local_product(e)) return;
        value(*e.args[0]);
        at(e.op_pos);
        if (local_operand(e.binop, e.args[0]->type, *e.args[1])) return;
        value(*e.args[1]);
        at(e.op_pos);
        simple(binary_opcode(e.binop, e.args[0]->type, e.args[1]->type));
        return;
      }
      case ExprKind::Index:
        if (local_array_index(*e.args[0], *e.args[1], e.op_pos)) return;
        value(*e.args[0]);
        at(e.op_pos);
        if (e.args[0]->type != Type::String && local_index(e.args[0]->type, *e.args[1])) return;
        value(*e.args[1]);
        at(e.op_pos);
        simple(e.args[0]->type == Type::String ? Op::sload : element_load(e.args[0]->type));
        return;
      case ExprKind::NewArray: {
        value(*e.args[0]);
        at(e.pos);
        new_array(e.type_operand);
        return;
      }
      case ExprKind::Convert: {
        value(*e.args[0]);
        Type from = e.args[0]->type;
        at(e.pos);
        if (e.type == Type::String) {
          uint8_t kind = from == Type::Int ? 0 : from == Type::Float ? 1 : from == Type::Bool ? 2 : 3;
          if (begin(1, 1)) b_.emit_u8(Op::tostring, kind);
        } else if (from == Type::Int && e.type == Type::Float) {
          simple(Op::i2f);
        } else if (from == Type::Float && e.type == Type::Int) {
          simple(Op::f2i);
        }
        return;  // int(int) and float(float) are no-ops
      }
      case ExprKind::Call: call(e); return;
      case ExprKind::This: load_this(); return;
      case ExprKind::Field:
        value(*e.args[0]);
        at(e.op_pos);
        with_u16u16(Op::getfield, e.class_index, e.index, 1, 1);
        return;
      case ExprKind::MethodCall:
        for (auto& a : e.args) value(*a);  // the receiver first
        at(e.op_pos);
        with_u16u16(prog_.classes[e.class_index]->is_interface ? Op::invokeinterface : Op::invokevirtual, e.class_index,
                    e.index, int(e.args.size()), e.type != Type::Void);
        return;
      case ExprKind::New: {
        at(e.op_pos);
        with_u16(Op::newobject, uint16_t(e.class_index), 0, 1);
        if (const FnDecl* init = prog_.classes[e.class_index]->effective_init) {
          simple(Op::dup);  // init's receiver; the object stays below as the value of new
          for (auto& a : e.args) value(*a);
          at(e.op_pos);
          with_u16(Op::call, uint16_t(init->index), int(e.args.size()) + 1, 0);
        }
        return;
      }
      case ExprKind::SuperCall:
        load_this();
        for (auto& a : e.args) value(*a);
        at(e.op_pos);
        with_u16(Op::call, uint16_t(e.index), int(e.args.size()) + 1, e.type != Type::Void);
        return;
      case ExprKind::Is:
      case ExprKind::As: {
        value(*e.args[0]);
        at(e.op_pos);
        const ClassDecl& to = *prog_.classes[e.class_index];
        const ClassDecl* from = class_decl(e.args[0]->type);
        if (e.kind == ExprKind::Is) with_u16(Op::instanceof, uint16_t(to.index), 1, 1);
        else if (from == nullptr || !from->conforms_to(&to)) with_u16(Op::checkcast, uint16_t(to.index), 1, 1);
        return;  // an upcast is free
      }
      case ExprKind::Spawn:
        for (auto& a : e.args) value(*a);
        at(e.op_pos);
        if (e.callee == Callee::Value)
          with_u16u16(Op::spawnvalue, type_index(e.type_operand), uint32_t(e.args.size() - 1), int(e.args.size()), 1);
        else
          with_u16(Op::spawn, uint16_t(e.index), int(e.args.size()), 1);
        return;
      case ExprKind::CallValue:
        for (auto& a : e.args) value(*a);  // the function first
        at(e.op_pos);
        with_u16u16(Op::callvalue, type_index(e.type_operand), uint32_t(e.args.size() - 1), int(e.args.size()),
                    e.type != Type::Void);
        return;
      case ExprKind::Lambda: {
        const FnDecl& f = *e.lambda;
        for (const FnDecl::Capture& c : f.captures) {
          if (c.from_capture) with_u16(Op::loadcapture, uint16_t(c.index), 0, 1);
          else load(c.index);
        }
        at(e.pos);
        with_u16(Op::newclosure, uint16_t(f.index), int(f.captures.size()), 1);
        return;
      }
    }
  }

  void call(const Expr& e) {
    if (e.callee == Callee::Print) {
      PrintDescriptor d;
      for (auto& a : e.args) {
        if (a->kind == ExprKind::StringLit || a->kind == ExprKind::NullLit) {  // text known now: no stack slot
          d.items.push_back({Type::Void, string_index(a->kind == ExprKind::NullLit ? "null" : a->text, a->pos)});
        } else {
          value(*a);
          d.items.push_back({a->type, 0});
        }
      }
      at(e.op_pos);
      if (!reachable_) return;
      if (fn_.prints.size() >= 65536) fail(e.pos, fmt::format("too many print calls in '{}' (at most 65536)", decl_.name));
      fn_.prints.push_back(std::move(d));
      with_u16(Op::print, uint16_t(fn_.prints.size() - 1), fn_.prints.back().value_count(), 0);
      return;
    }
    if (e.callee == Callee::Method) load_this();  // the receiver below the arguments
    for (auto& a : e.args) value(*a);
    at(e.op_pos);
    int args = int(e.args.size());
    int result = e.type != Type::Void;
    switch (e.callee) {
      case Callee::User: with_u16(Op::call, uint16_t(e.index), args, result); return;
      case Callee::Len: simple(Op::arraylength); return;
      case Callee::Sqrt: simple(Op::fsqrt); return;
      case Callee::AtomicAdd: simple(Op::atomic_add); return;
      case Callee::Substring: simple(Op::substring); return;
      case Callee::Method: with_u16u16(Op::invokevirtual, e.class_index, e.index, args + 1, result); return;
      case Callee::Native: with_u16(Op::native, uint16_t(e.index), args, result); return;
      case Callee::Print: case Callee::Unresolved: case Callee::Value: return;
    }
  }

  static Op element_load(Type array) {
    return array == Type::IntArray ? Op::iaload : array == Type::FloatArray ? Op::faload : Op::aaload;
  }
  static Op element_store(Type array) {
    return array == Type::IntArray ? Op::iastore : array == Type::FloatArray ? Op::fastore : Op::aastore;
  }

  // The function's table of the array types anewarray makes.
  uint16_t type_index(Type t) {
    for (size_t i = 0; i < fn_.types.size(); i++)
      if (fn_.types[i] == t) return uint16_t(i);
    if (fn_.types.size() >= 65536) fail(pos_, fmt::format("too many array types in '{}' (at most 65536)", decl_.name));
    fn_.types.push_back(t);
    return uint16_t(fn_.types.size() - 1);
  }

  uint16_t string_index(const std::string& s, SourcePos at) {
    auto [it, fresh] = strings_.try_emplace(s, uint16_t(fn_.strings.size()));
    if (fresh) {
      if (fn_.strings.size() >= 65536) fail(at, fmt::format("too many strings in '{}' (at most 65536)", decl_.name));
      fn_.strings.push_back(s);
    }
    return it->second;
  }

  // Emits code that jumps to `target` when `e` (a bool) equals `jump_if`, and falls
  // through otherwise. Every path emits at least one branch to `target`.
  void cond_branch(const Expr& e, bool jump_if, Label& target) {
    at(e.pos);
    if (e.kind == ExprKind::Unary && e.unop == UnOp::Not) {
      cond_branch(*e.args[0], !jump_if, target);
      return;
    }
    if (e.kind == ExprKind::Binary) {
      const Expr& a = *e.args[0];
      const Expr& b = *e.args[1];
      if (e.binop == BinOp::And || e.binop == BinOp::Or) {
        // a && b jumps on false as soon as either is false; a || b jumps on true as
        // soon as either is true. The other direction needs a skip label.
        bool short_on = e.binop == BinOp::Or;  // the value of a that decides the result
        if (jump_if == short_on) {
          cond_branch(a, jump_if, target);
          cond_branch(b, jump_if, target);
        } else {
          Label skip;
          cond_branch(a, short_on, skip);
          cond_branch(b, jump_if, target);
          bind(skip);
        }
        return;
      }
      if (is_comparison(e.binop) && a.type == Type::Int) {
        value(a);
        value(b);
        at(e.op_pos);
        branch(int_compare_branch(jump_if ? e.binop : negate(e.binop)), target);
        return;
      }
    }
    value(e);  // float/bool compares and other bools: never negated (NaN)
    at(e.pos);
    branch(jump_if ? Op::iftrue : Op::iffalse, target);
  }

  const ClassDecl* class_decl(Type t) const {
    for (auto& c : prog_.classes)
      if (c->type == t) return c.get();
    return nullptr;
  }

  const Program& prog_;
  const FnDecl& decl_;
  Function& fn_;
  CodeBuilder b_;
  int depth_ = 0;
  int max_depth_ = 0;
  bool reachable_ = true;
  uint32_t line_ = 0;
  SourcePos pos_;
  int64_t last_backward_ = -1;
  std::vector<LoopLabels> loops_;
  std::map<std::pair<Type, int64_t>, uint16_t> constants_;
  std::map<std::string, uint16_t> strings_;
  std::vector<std::pair<uint16_t, SlowdownSite*>> slowdowns_;  // (its index, the site)
};

}  // namespace

std::unique_ptr<Module> generate_module(const Program& program, const std::vector<std::string>& files,
                                        std::vector<SlowdownSite>& slowdowns) {
  auto m = std::make_unique<Module>();
  m->files = files;
  m->slowdown_sites = uint16_t(slowdowns.size());  // at most kMaxSlowdownSites (the command line's check)
  for (auto& g : program.globals)
    m->globals.push_back({g->name, g->type, g->init_bits, g->init_text, g->init_type == Type::String});
  for (auto& c : program.classes) {
    ClassInfo info{c->name, c->type, {}, {}, c->effective_init != nullptr ? int32_t(c->effective_init->index) : -1,
                   c->super != nullptr ? int32_t(c->super->index) : -1, c->is_abstract, c->is_interface};
    for (const FieldDecl* f : c->all_fields) info.fields.push_back({f->name, f->type});
    for (const FnDecl* mth : c->vtable) info.methods.push_back(uint16_t(mth->index));
    for (const ClassDecl* i : c->interfaces) info.interfaces.push_back(int32_t(i->index));
    info.first_selector = c->first_selector;
    if (c->is_interface) m->selector_count += uint32_t(c->vtable.size());
    m->classes.push_back(std::move(info));
  }
  // Each class's itable: for every interface it conforms to, the method of its own that
  // implements each of the interface's (the type checker made sure there is one).
  for (auto& c : program.classes) {
    if (c->is_interface) continue;
    ClassInfo& info = m->classes[c->index];
    for (auto& i : program.classes) {
      if (!i->is_interface || !c->conforms_to(i.get())) continue;
      if (info.itable.empty()) info.itable.assign(m->selector_count, kNoMethod);
      for (size_t k = 0; k < i->vtable.size(); k++)
        info.itable[i->first_selector + k] = uint16_t(c->method(i->vtable[k]->name)->index);
    }
  }
  // Functions in index order: the top-level ones, each class's methods, then lambdas and
  // instances of generic functions and classes as the checker made them.
  std::vector<const FnDecl*> decls;
  for (auto& d : program.functions) decls.push_back(d.get());
  for (auto& c : program.classes)
    for (auto& mth : c->methods) decls.push_back(mth.get());
  for (const FnDecl* d : program.lambdas) decls.push_back(d);
  for (auto& d : program.function_instances) decls.push_back(d.get());
  // Lambdas and instances of generic declarations took their indices as the checker met them.
  std::sort(decls.begin(), decls.end(), [](const FnDecl* a, const FnDecl* b) { return a->index < b->index; });
  for (const FnDecl* d : decls) {
    auto fn = std::make_unique<Function>();
    fn->name = d->owner != nullptr ? d->owner->name + "." + d->name : d->name;
    fn->owner = d->owner != nullptr ? int32_t(d->owner->index) : -1;
    fn->index = uint16_t(d->index);
    fn->line = uint32_t(d->pos.line);
    fn->file = d->pos.file;
    fn->inline_hint = d->hint == InlineHintAst::Inline     ? InlineHint::Inline
                      : d->hint == InlineHintAst::NoInline ? InlineHint::NoInline
                                                           : InlineHint::Default;
    if (d->owner != nullptr) fn->params.push_back(d->owner->type);  // `this`
    if (d->is_lambda()) fn->params.push_back(d->value_type);        // its closure
    fn->is_lambda = d->is_lambda();
    fn->is_abstract = d->is_abstract;
    for (const FnDecl::Capture& c : d->captures) fn->captures.push_back(c.type);
    for (auto& p : d->params) fn->params.push_back(p.type);
    fn->result = d->result;
    fn->local_types = d->local_types;
    fn->local_names = d->local_names;
    std::vector<std::pair<uint16_t, SlowdownSite*>> here;
    for (size_t k = 0; k < slowdowns.size(); k++)
      if (slowdowns[k].function == fn->name) here.push_back({uint16_t(k), &slowdowns[k]});
    FnGen(program, *d, *fn, std::move(here)).run();
    if (d->name == "main" && d->owner == nullptr) m->main_index = fn->index;
    m->functions.push_back(std::move(fn));
  }
  return m;
}

}  // namespace vm
