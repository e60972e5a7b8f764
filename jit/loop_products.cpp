// A while loop's products carried from its condition into its body. In
//
//     while (it < 100 && zr * zr + zi * zi <= 4.0) { var t = zr * zr - zi * zi + cr; ... }
//
// the body starts by multiplying again what the condition has just multiplied: the loop
// is entered only through the condition's branch back to its header, and nothing writes
// zr or zi in between. The condition copies each such product (`fmulll a, b`) into a
// float-local register no local uses, and the body takes it from there instead of
// multiplying: C compilers get the same from common subexpression elimination.
//
// It holds only where the product is certainly in its register at the header:
//   - the header is reached only by the loop's back branch (not by falling into it, not
//     by another branch) and by the OSR entry, which multiplies there itself;
//   - the condition's product lies in the straight line that ends at the back branch
//     (no branch lands between it and the branch), nothing after it up to the branch
//     writes a or b, and everything there is register arithmetic (no call, no runtime
//     call that could clobber the register);
//   - the body's product lies in the straight line from the header (the header's poll
//     enters the safepoint blob, which saves and restores every xmm register), with
//     only register arithmetic and no write of a or b before it.
// The product is the same multiplication of the same operands in the same order, so
// the result is the same bits.
#include <algorithm>

#include "jit/compiler.h"
#include "jit/emitter_traits.h"

namespace jit::baseline {


std::optional<std::pair<int, int>> Compiler::product_at(size_t bci) const {
  const vm::Function& f = *sc_->fn;
  if (Op(f.code[bci]) != Op::fmulll) return std::nullopt;
  return std::pair{int(vm::read_u16(f.code.data() + bci, vm::kOperandA)), int(vm::read_u16(f.code.data() + bci, vm::kOperandB))};
}

void Compiler::plan_loop_products(InlineScope& s) {
  const vm::Function& f = *s.fn;
  product_reg_.assign(f.code.size(), -1);
  reused_reg_.assign(f.code.size(), -1);
  loop_products_.clear();
  std::vector<int> free_regs;
  for (int k = 0; k < kXmmLocalCount; k++)
    if (xmm_local_[k] < 0) free_regs.push_back(k);
  std::vector<size_t> order;  // every instruction's bci, in order
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) order.push_back(bci);
  for (const vm::LoopEntry& l : f.loops) {
    if (l.counted || free_regs.empty()) continue;
    // A product lives from its fmull through the back branch to the body's use: straight
    // lines of register arithmetic that no other loop's code runs in, so every loop may
    // use every free register.
    std::vector<int> regs = free_regs;
    size_t header = l.header_bci, latch = l.latch_bci;
    // Entered only by the back branch: no other branch lands on the header, and the
    // instruction before it does not fall into it.
    int into_header = 0;
    for (size_t bci : order)
      if (vm::is_branch(Op(f.code[bci])) && size_t(int64_t(bci) + vm::branch_offset(f.code.data() + bci)) == header)
        into_header++;
    auto at = std::find(order.begin(), order.end(), header);
    auto latch_at = std::find(order.begin(), order.end(), latch);
    if (at == order.end() || latch_at == order.end() || latch <= header) continue;
    if (into_header != 1 || at == order.begin() || vm::falls_through(Op(f.code[*(at - 1)]))) continue;
    if (s.info.depth_at[header] < 0 || s.info.depth_at[latch] < 0) continue;
    // The condition's products, from the back branch backwards: the last one of each
    // pair, with only register arithmetic and no write of its operands after it.
    std::vector<std::pair<std::pair<int, int>, size_t>> produced;  // (a, b) -> its fmulll's bci
    std::vector<int> written;
    auto unwritten = [&](std::pair<int, int> p) {
      return std::find(written.begin(), written.end(), p.first) == written.end() &&
             std::find(written.begin(), written.end(), p.second) == written.end();
    };
    for (auto it = latch_at; it != order.begin();) {
      size_t bci = *--it;
      Op op = Op(f.code[bci]);
      if (!(emitter_traits(op) & REGS)) break;
      if (op == Op::store) written.push_back(vm::read_u16(f.code.data() + bci, vm::kOperandA));
      if (auto p = product_at(bci)) {
        bool known = std::any_of(produced.begin(), produced.end(), [&](auto& e) { return e.first == *p; });
        if (unwritten(*p) && !known) produced.push_back({*p, bci});
      }
      if (s.branch_target[bci]) break;  // paths join here: before it, a product may be missed
    }
    // The body's products from the header on, in the straight line before anything
    // writes their operands.
    written.clear();
    std::vector<std::pair<int, size_t>> reused;  // (index into produced, the body's fmulll's bci)
    for (auto it = at; it != latch_at; ++it) {
      size_t bci = *it;
      Op op = Op(f.code[bci]);
      if ((bci != header && s.branch_target[bci]) || vm::is_branch(op) || !(emitter_traits(op) & REGS)) break;
      if (auto p = product_at(bci)) {
        auto e = std::find_if(produced.begin(), produced.end(), [&](auto& x) { return x.first == *p; });
        if (e != produced.end() && unwritten(*p)) reused.push_back({int(e - produced.begin()), bci});
      }
      if (op == Op::store) written.push_back(vm::read_u16(f.code.data() + bci, vm::kOperandA));
    }
    for (size_t k = 0; k < produced.size() && !regs.empty(); k++) {
      bool used = std::any_of(reused.begin(), reused.end(), [&](auto& r) { return r.first == int(k); });
      if (!used) continue;
      int reg = regs.back();
      regs.pop_back();
      product_reg_[produced[k].second] = reg;
      for (auto& [index, bci] : reused)
        if (index == int(k)) reused_reg_[bci] = reg;
      loop_products_.push_back({uint32_t(header), produced[k].first.first, produced[k].first.second, reg});
    }
  }
}

bool Compiler::reuse_loop_product(size_t bci, int d) {
  if (sc_ != &scopes_.front() || reused_reg_[bci] < 0) return false;
  const Xmm& reg = kXmmLocals[reused_reg_[bci]];
  // Used where it is when the next instruction takes its operand from anywhere.
  const vm::Function& f = *sc_->fn;
  size_t next = bci + vm::op_info(Op::fmulll).length;
  if (fusible(next) && deferred_.empty() && takes_operand(Op(f.code[next]), vm::Type::Float))
    deferred_.push_back(reg);
  else
    move(fexpr(d), reg);
  return true;
}

void Compiler::keep_loop_product(size_t bci, int d) {
  if (sc_ != &scopes_.front() || product_reg_[bci] < 0) return;
  move(kXmmLocals[product_reg_[bci]], fexpr(d));
}

void Compiler::loop_products_at_osr(uint32_t header_bci) {
  for (const LoopProduct& p : loop_products_) {
    if (p.header != header_bci) continue;
    const Xmm& reg = kXmmLocals[p.reg];
    move(reg, local(p.a));
    float_op(Inst::kIdMulsd, reg, local(p.b));
  }
}

}  // namespace jit::baseline
