// Which locals live in registers: the most used (loop-weighted) ones; and which locals
// the method never writes (their homes always hold their values).
#include "jit/compiler.h"

#include <algorithm>

namespace jit::baseline {

void Compiler::choose_register_locals() {
  // Weight each local's uses by 8 per enclosing loop; the heaviest floats go to xmm
  // registers, the heaviest others to general registers.
  std::vector<uint64_t> weight(fn_.local_count(), 0);
  written_.assign(fn_.local_count(), false);
  for (size_t bci = 0; bci < fn_.code.size(); bci += vm::op_info(Op(fn_.code[bci])).length) {
    Op op = Op(fn_.code[bci]);
    if (op == Op::store || op == Op::iinc || op == Op::forloop)
      written_[vm::read_u16(fn_.code.data() + bci, vm::kOperandA)] = true;
    uint64_t w = 1;
    for (auto& l : fn_.loops)
      if (bci >= l.header_bci && bci <= l.latch_bci) w *= 8;
    const uint8_t* p = fn_.code.data() + bci;
    if (vm::op_has(op, vm::kOpLocal)) weight[vm::read_u16(p, vm::kOperandA)] += w;
    if (vm::op_has(op, vm::kOpLocal2)) weight[vm::read_u16(p, vm::kOperandB)] += w;
  }
  std::vector<int> order(weight.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = int(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return weight[size_t(x)] > weight[size_t(y)]; });
  int gp = 0, xmm = 0;
  for (int i : order) {
    if (weight[size_t(i)] == 0) break;
    if (is_float(fn_.local_types[size_t(i)])) {
      if (xmm < kXmmLocalCount) xmm_local_[xmm++] = i;
    } else if (gp < kLocalRegCount) {
      reg_local_[gp++] = i;
    }
  }
}

}  // namespace jit::baseline
