#include "jit/dwarf_cfi.h"

#include <cstring>
#include <map>
#include <set>

#include "jit/byte_writer.h"
#include "runtime/method.h"
#include "runtime/thread.h"

namespace jit {

namespace {

// DWARF register numbers (x86-64 psABI).
enum DwarfReg : uint8_t {
  kDwRax = 0, kDwRdx = 1, kDwRcx = 2, kDwRbx = 3, kDwRsi = 4, kDwRdi = 5, kDwRbp = 6, kDwRsp = 7,
  kDwR8 = 8, kDwR9 = 9, kDwR10 = 10, kDwR11 = 11, kDwR12 = 12, kDwR13 = 13, kDwR14 = 14, kDwR15 = 15,
  kDwRa = 16,  // the return address column
};

// runtime::Reg (the instruction encoding's numbering) to DWARF's.
uint8_t dwarf_reg(runtime::Reg r) {
  static const uint8_t kMap[runtime::kRegCount] = {kDwRax, kDwRcx, kDwRdx, kDwRbx, kDwRsp, kDwRbp, kDwRsi, kDwRdi,
                                                   kDwR8,  kDwR9,  kDwR10, kDwR11, kDwR12, kDwR13, kDwR14, kDwR15};
  return kMap[size_t(r)];
}

// How a register of the caller is recovered.
struct RegRule {
  enum Kind : uint8_t {
    same,      // unchanged (the default for every register but the return address)
    at_cfa,    // saved at [CFA + offset]
    in_reg,    // held in register `other`
    at_expr,   // saved at the address computed by the DWARF expression `expr`
  };
  uint8_t reg = 0;  // which register this rule is for
  Kind kind = same;
  int32_t offset = 0;
  uint8_t other = 0;
  std::vector<uint8_t> expr;
};

// A FrameRow in DWARF's terms: the CFA rule and the rules of the registers it changes.
struct UnwindRow {
  uint32_t offset = 0;
  uint8_t cfa_reg = kDwRsp;       // CFA = cfa_reg + cfa_offset ...
  int32_t cfa_offset = 8;
  std::vector<uint8_t> cfa_expr;  // ... or, when not empty, this DWARF expression
  std::vector<RegRule> regs;      // not listed: same value; the return address defaults to [CFA-8]

  UnwindRow& with(RegRule rule) {
    regs.push_back(std::move(rule));
    return *this;
  }
};

// ---------------------------------------------------------------------------------------
// DWARF encoding.

enum : uint8_t {
  DW_CFA_nop = 0x00,
  DW_CFA_advance_loc1 = 0x02,
  DW_CFA_advance_loc2 = 0x03,
  DW_CFA_advance_loc4 = 0x04,
  DW_CFA_same_value = 0x08,
  DW_CFA_register = 0x09,
  DW_CFA_def_cfa = 0x0c,
  DW_CFA_def_cfa_register = 0x0d,
  DW_CFA_def_cfa_offset = 0x0e,
  DW_CFA_def_cfa_expression = 0x0f,
  DW_CFA_expression = 0x10,
  DW_CFA_offset_extended_sf = 0x11,
  DW_CFA_advance_loc = 0x40,
  DW_CFA_offset = 0x80,
  DW_OP_deref = 0x06,
  DW_OP_minus = 0x1c,
  DW_OP_shl = 0x24,
  DW_OP_lit0 = 0x30,
  DW_OP_breg0 = 0x70,
  DW_OP_deref_size = 0x94,
};

constexpr int kDataAlign = -8;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  out.insert(out.end(), raw, raw + sizeof(T));
}

template <typename T>
void patch(std::vector<uint8_t>& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}

// DWARF expressions used by the descriptions.
std::vector<uint8_t> op_breg(uint8_t reg, int64_t offset) {
  std::vector<uint8_t> e{uint8_t(DW_OP_breg0 + reg)};
  put_sleb(e, offset);
  return e;
}
std::vector<uint8_t> operator+(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const RegRule kRaDefault{kDwRa, RegRule::at_cfa, -8, 0, {}};
const RegRule kSame{};

// The full rule map of a row: the return address defaults to [CFA-8].
std::map<uint8_t, RegRule> rules_of(const UnwindRow& row) {
  std::map<uint8_t, RegRule> m;
  m[kDwRa] = kRaDefault;
  for (const RegRule& r : row.regs) m[r.reg] = r;
  return m;
}

void emit_rule(std::vector<uint8_t>& out, uint8_t reg, const RegRule& r) {
  switch (r.kind) {
    case RegRule::same:
      out.push_back(DW_CFA_same_value);
      put_uleb(out, reg);
      break;
    case RegRule::at_cfa: {
      int64_t factored = r.offset / kDataAlign;
      if (reg < 64 && factored >= 0 && r.offset % kDataAlign == 0) {
        out.push_back(uint8_t(DW_CFA_offset | reg));
        put_uleb(out, uint64_t(factored));
      } else {
        out.push_back(DW_CFA_offset_extended_sf);
        put_uleb(out, reg);
        put_sleb(out, factored);
      }
      break;
    }
    case RegRule::in_reg:
      out.push_back(DW_CFA_register);
      put_uleb(out, reg);
      put_uleb(out, r.other);
      break;
    case RegRule::at_expr:
      out.push_back(DW_CFA_expression);
      put_uleb(out, reg);
      put_uleb(out, r.expr.size());
      out.insert(out.end(), r.expr.begin(), r.expr.end());
      break;
  }
}

// The CFA program for `rows`, starting from the CIE's initial state (entry rule).
std::vector<uint8_t> cfa_program(const std::vector<UnwindRow>& rows) {
  std::vector<uint8_t> out;
  UnwindRow prev;  // the CIE's initial state: a call's target
  std::map<uint8_t, RegRule> prev_rules = rules_of(prev);
  uint32_t loc = 0;
  for (const UnwindRow& row : rows) {
    uint32_t delta = row.offset - loc;
    if (delta > 0) {
      if (delta < 64) {
        out.push_back(uint8_t(DW_CFA_advance_loc | delta));
      } else if (delta <= 0xff) {
        out.push_back(DW_CFA_advance_loc1);
        out.push_back(uint8_t(delta));
      } else if (delta <= 0xffff) {
        out.push_back(DW_CFA_advance_loc2);
        put(out, uint16_t(delta));
      } else {
        out.push_back(DW_CFA_advance_loc4);
        put(out, delta);
      }
      loc = row.offset;
    }
    // CFA
    if (!row.cfa_expr.empty()) {
      if (row.cfa_expr != prev.cfa_expr) {
        out.push_back(DW_CFA_def_cfa_expression);
        put_uleb(out, row.cfa_expr.size());
        out.insert(out.end(), row.cfa_expr.begin(), row.cfa_expr.end());
      }
    } else if (!prev.cfa_expr.empty() || (row.cfa_reg != prev.cfa_reg && row.cfa_offset != prev.cfa_offset)) {
      out.push_back(DW_CFA_def_cfa);
      put_uleb(out, row.cfa_reg);
      put_uleb(out, uint64_t(row.cfa_offset));
    } else if (row.cfa_reg != prev.cfa_reg) {
      out.push_back(DW_CFA_def_cfa_register);
      put_uleb(out, row.cfa_reg);
    } else if (row.cfa_offset != prev.cfa_offset) {
      out.push_back(DW_CFA_def_cfa_offset);
      put_uleb(out, uint64_t(row.cfa_offset));
    }
    // Registers whose rule changed.
    std::map<uint8_t, RegRule> rules = rules_of(row);
    std::set<uint8_t> regs;
    for (auto& [r, _] : rules) regs.insert(r);
    for (auto& [r, _] : prev_rules) regs.insert(r);
    for (uint8_t r : regs) {
      auto a = prev_rules.find(r), b = rules.find(r);
      const RegRule& old_rule = a == prev_rules.end() ? kSame : a->second;
      const RegRule& new_rule = b == rules.end() ? kSame : b->second;
      if (old_rule.kind != new_rule.kind || old_rule.offset != new_rule.offset || old_rule.other != new_rule.other ||
          old_rule.expr != new_rule.expr)
        emit_rule(out, r, new_rule);
    }
    prev = row;
    prev_rules = std::move(rules);
  }
  return out;
}

void pad_to_8(std::vector<uint8_t>& out, size_t record_start) {
  while ((out.size() - record_start) % 8 != 0) out.push_back(DW_CFA_nop);
}


// DW_OP_plus_uconst, for the anchor-sp CFA with an offset.
constexpr uint8_t kDwOpPlusUconst = 0x23;

// CFA = r14 + 8 - 8 * param_count(rbx): the interpreter's method entry while it pushes
// the extra locals.
std::vector<uint8_t> method_entry_cfa_expr() {
  return op_breg(kDwR14, 8) + op_breg(kDwRbx, runtime::kMethodParamCountOffset) +
         std::vector<uint8_t>{DW_OP_deref_size, 2, DW_OP_lit0 + 3, DW_OP_shl, DW_OP_minus};
}

UnwindRow unwind_row(const runtime::FrameRow& f) {
  using runtime::FrameRow;
  UnwindRow u;
  u.offset = f.offset;
  u.cfa_offset = f.cfa_offset;
  switch (f.cfa) {
    case FrameRow::Cfa::rsp: u.cfa_reg = kDwRsp; break;
    case FrameRow::Cfa::rbp: u.cfa_reg = kDwRbp; break;
    case FrameRow::Cfa::r14: u.cfa_reg = kDwR14; break;
    case FrameRow::Cfa::r14_less_params: u.cfa_expr = method_entry_cfa_expr(); break;
    case FrameRow::Cfa::anchor_sp:
      u.cfa_expr = op_breg(kDwR15, runtime::kThreadAnchorSpOffset) + std::vector<uint8_t>{DW_OP_deref};
      if (f.cfa_offset != 0) {
        u.cfa_expr.push_back(kDwOpPlusUconst);
        put_uleb(u.cfa_expr, uint64_t(f.cfa_offset));
      }
      break;
  }
  switch (f.ra) {
    case FrameRow::Ra::at_cfa:
      if (f.ra_offset != -8) u.with({kDwRa, RegRule::at_cfa, f.ra_offset, 0, {}});
      break;
    case FrameRow::Ra::at_rsp: u.with({kDwRa, RegRule::at_expr, 0, 0, op_breg(kDwRsp, 0)}); break;
    case FrameRow::Ra::in_rax: u.with({kDwRa, RegRule::in_reg, 0, kDwRax, {}}); break;
    case FrameRow::Ra::in_rcx: u.with({kDwRa, RegRule::in_reg, 0, kDwRcx, {}}); break;
    case FrameRow::Ra::at_resume_pc:
      u.with({kDwRa, RegRule::at_expr, 0, 0, op_breg(kDwR15, runtime::kThreadResumePcOffset)});
      break;
  }
  switch (f.rbp) {
    case FrameRow::Rbp::same: break;
    case FrameRow::Rbp::saved: u.with({kDwRbp, RegRule::at_cfa, f.rbp_offset, 0, {}}); break;
    case FrameRow::Rbp::in_rdx: u.with({kDwRbp, RegRule::in_reg, 0, kDwRdx, {}}); break;
  }
  for (int r = 0; r < runtime::kRegCount; r++)
    if (f.saved[size_t(r)] != 0) u.with({dwarf_reg(runtime::Reg(r)), RegRule::at_cfa, f.saved[size_t(r)], 0, {}});
  return u;
}

}  // namespace

std::vector<uint8_t> encode_eh_frame(uintptr_t begin, uintptr_t end, const std::vector<runtime::FrameRow>& frame_rows,
                                     bool signal_frame, uintptr_t located_at) {
  constexpr uint8_t kAbsptr = 0x00, kPcrelSdata4 = 0x1b;  // DW_EH_PE_*
  std::vector<UnwindRow> rows;
  for (const runtime::FrameRow& f : frame_rows) rows.push_back(unwind_row(f));
  std::vector<uint8_t> out;
  // CIE
  put(out, uint32_t(0));  // length, patched
  put(out, uint32_t(0));  // CIE id
  out.push_back(1);       // version
  const char* aug = signal_frame ? "zRS" : "zR";
  out.insert(out.end(), aug, aug + std::strlen(aug) + 1);
  put_uleb(out, 1);            // code alignment factor
  put_sleb(out, kDataAlign);   // data alignment factor
  out.push_back(kDwRa);    // return address column
  put_uleb(out, 1);            // augmentation data length
  out.push_back(located_at == 0 ? kAbsptr : kPcrelSdata4);  // 'R': how the FDE's addresses are written
  out.push_back(DW_CFA_def_cfa);  // initial state: CFA = rsp+8, return address at CFA-8
  put_uleb(out, kDwRsp);
  put_uleb(out, 8);
  out.push_back(uint8_t(DW_CFA_offset | uint8_t(kDwRa)));
  put_uleb(out, 1);
  pad_to_8(out, 0);
  patch(out, 0, uint32_t(out.size() - 4));
  // FDE
  size_t fde = out.size();
  put(out, uint32_t(0));                  // length, patched
  put(out, uint32_t(out.size() - 0));     // CIE pointer: distance back to the CIE (at 0)
  if (located_at == 0) {
    put(out, uint64_t(begin));              // pc begin
    put(out, uint64_t(end - begin));        // pc range
  } else {
    put(out, int32_t(int64_t(begin) - int64_t(located_at + out.size())));
    put(out, int32_t(end - begin));
  }
  put_uleb(out, 0);                           // augmentation data length
  std::vector<uint8_t> program = cfa_program(rows);
  out.insert(out.end(), program.begin(), program.end());
  pad_to_8(out, fde);
  patch(out, fde, uint32_t(out.size() - fde - 4));
  put(out, uint32_t(0));  // terminator, as at the end of an .eh_frame section
  return out;
}

bool frame_rows_valid(size_t size, const std::vector<runtime::FrameRow>& rows) {
  if (size == 0 || rows.empty() || rows.front().offset != 0) return false;
  for (size_t i = 0; i < rows.size(); i++) {
    if (rows[i].offset >= size) return false;
    if (i > 0 && rows[i].offset <= rows[i - 1].offset) return false;
    bool by_register = rows[i].cfa == runtime::FrameRow::Cfa::rsp || rows[i].cfa == runtime::FrameRow::Cfa::rbp ||
                       rows[i].cfa == runtime::FrameRow::Cfa::r14;
    if (by_register && rows[i].cfa_offset < 0) return false;  // DW_CFA_def_cfa takes an unsigned offset
    if (rows[i].cfa == runtime::FrameRow::Cfa::r14_less_params && rows[i].cfa_offset != 8) return false;
    if (rows[i].cfa == runtime::FrameRow::Cfa::anchor_sp && rows[i].cfa_offset < 0) return false;
  }
  return true;
}

}  // namespace jit
