#include "vm/liveness.h"

#include "vm/opcodes.h"

namespace vm {

// Backward dataflow to a fixed point: live-in = uses ∪ (live-out − defs), live-out the
// union of the successors' live-in. Only `store` overwrites a local without reading it;
// every other instruction naming a local (load, iinc, forloop, the `op local` forms)
// reads it, and loadcapture reads local 0 (a lambda's closure).
LocalLiveness::LocalLiveness(const Function& fn) : words_((fn.local_types.size() + 63) / 64) {
  const std::vector<uint8_t>& code = fn.code;
  bits_.assign(code.size() * words_, 0);
  if (words_ == 0) return;
  std::vector<size_t> starts;
  for (size_t bci = 0; bci < code.size(); bci += op_info(Op(code[bci])).length) starts.push_back(bci);
  std::vector<uint64_t> out(words_);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = starts.size(); k-- > 0;) {
      size_t bci = starts[k];
      const uint8_t* p = code.data() + bci;
      Op op = Op(*p);
      std::fill(out.begin(), out.end(), 0);
      auto join = [&](size_t succ) {
        for (size_t w = 0; w < words_; w++) out[w] |= bits_[succ * words_ + w];
      };
      if (!is_return(op)) {
        if (falls_through(op) && bci + op_info(op).length < code.size()) join(bci + op_info(op).length);
        if (is_branch(op)) join(size_t(int64_t(bci) + branch_offset(p)));
      }
      auto set = [&](uint32_t l, bool on) {
        uint64_t bit = uint64_t(1) << (l % 64);
        out[l / 64] = on ? out[l / 64] | bit : out[l / 64] & ~bit;
      };
      if (op == Op::store) {
        set(read_u16(p, kOperandA), false);
      } else {
        if (op_has(op, kOpLocal)) set(read_u16(p, kOperandA), true);
        if (op == Op::loadcapture) set(0, true);  // reads the closure in local 0
        if (op_has(op, kOpLocal2)) set(read_u16(p, kOperandB), true);
      }
      for (size_t w = 0; w < words_; w++) {
        uint64_t& in = bits_[bci * words_ + w];
        if (in != out[w]) {
          in = out[w];
          changed = true;
        }
      }
    }
  }
}

}  // namespace vm
