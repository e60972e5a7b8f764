#include "jit/unwind_info.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

// LLVM libunwind's header (from /usr/lib/llvm-16/include, added for this target only):
// its types and register numbers. Its functions are reached through dlsym, never linked.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#ifndef _LIBUNWIND_CURSOR_SIZE
#error "jit/unwind_info.cpp needs LLVM libunwind's libunwind.h (libunwind-16-dev), not another libunwind"
#endif

#include "jit/perf_map.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "vm/bytecode.h"
#include "vm/opcodes.h"

#ifndef MINIVM_LLVM_UNWIND_DIR
#define MINIVM_LLVM_UNWIND_DIR "/usr/lib/llvm-16/lib"
#endif
#ifndef MINIVM_LLVM_UNWIND_LIBRARY
#define MINIVM_LLVM_UNWIND_LIBRARY MINIVM_LLVM_UNWIND_DIR "/libunwind.so"
#endif

namespace jit {

// ---------------------------------------------------------------------------------------
// LLVM libunwind, loaded privately.

namespace {

struct LlvmUnwind {
  int (*getcontext)(unw_context_t*);
  int (*init_local)(unw_cursor_t*, unw_context_t*);
  int (*step)(unw_cursor_t*);
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*);
  int (*set_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t);
  void (*add_dynamic_fde)(unw_word_t);
};

// RTLD_LOCAL keeps its _Unwind_* out of the global scope: libstdc++ keeps resolving them
// to libgcc_s (see unwind_info.h for why that matters).
const LlvmUnwind* llvm_unwind() {
  static const LlvmUnwind* lib = [] () -> const LlvmUnwind* {
    const char* candidates[] = {MINIVM_LLVM_UNWIND_DIR "/libunwind.so.1", MINIVM_LLVM_UNWIND_LIBRARY, "libunwind.so.1"};
    for (const char* path : candidates) {
      void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      auto* u = new LlvmUnwind{
          reinterpret_cast<int (*)(unw_context_t*)>(dlsym(h, "unw_getcontext")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_context_t*)>(dlsym(h, "unw_init_local")),
          reinterpret_cast<int (*)(unw_cursor_t*)>(dlsym(h, "unw_step")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_regnum_t, unw_word_t*)>(dlsym(h, "unw_get_reg")),
          reinterpret_cast<int (*)(unw_cursor_t*, unw_regnum_t, unw_word_t)>(dlsym(h, "unw_set_reg")),
          reinterpret_cast<void (*)(unw_word_t)>(dlsym(h, "__unw_add_dynamic_fde")),
      };
      // __unw_add_dynamic_fde exists only in LLVM's libunwind (not in the nongnu one).
      if (u->getcontext && u->init_local && u->step && u->get_reg && u->set_reg && u->add_dynamic_fde) return u;
      delete u;
      dlclose(h);
    }
    return nullptr;
  }();
  return lib;
}

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

void uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v != 0) b |= 0x80;
    out.push_back(b);
  } while (v != 0);
}

void sleb(std::vector<uint8_t>& out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t b = v & 0x7f;
    v >>= 7;  // arithmetic
    if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) more = false;
    else b |= 0x80;
    out.push_back(b);
  }
}

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
  sleb(e, offset);
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
      uleb(out, reg);
      break;
    case RegRule::at_cfa: {
      int64_t factored = r.offset / kDataAlign;
      if (reg < 64 && factored >= 0 && r.offset % kDataAlign == 0) {
        out.push_back(uint8_t(DW_CFA_offset | reg));
        uleb(out, uint64_t(factored));
      } else {
        out.push_back(DW_CFA_offset_extended_sf);
        uleb(out, reg);
        sleb(out, factored);
      }
      break;
    }
    case RegRule::in_reg:
      out.push_back(DW_CFA_register);
      uleb(out, reg);
      uleb(out, r.other);
      break;
    case RegRule::at_expr:
      out.push_back(DW_CFA_expression);
      uleb(out, reg);
      uleb(out, r.expr.size());
      out.insert(out.end(), r.expr.begin(), r.expr.end());
      break;
  }
}

// The CFA program for `rows`, starting from the CIE's initial state (entry rule).
std::vector<uint8_t> cfa_program(const std::vector<UnwindRow>& rows) {
  std::vector<uint8_t> out;
  UnwindRow prev = UnwindRow::entry(0);
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
        uleb(out, row.cfa_expr.size());
        out.insert(out.end(), row.cfa_expr.begin(), row.cfa_expr.end());
      }
    } else if (!prev.cfa_expr.empty() || (row.cfa_reg != prev.cfa_reg && row.cfa_offset != prev.cfa_offset)) {
      out.push_back(DW_CFA_def_cfa);
      uleb(out, row.cfa_reg);
      uleb(out, uint64_t(row.cfa_offset));
    } else if (row.cfa_reg != prev.cfa_reg) {
      out.push_back(DW_CFA_def_cfa_register);
      uleb(out, row.cfa_reg);
    } else if (row.cfa_offset != prev.cfa_offset) {
      out.push_back(DW_CFA_def_cfa_offset);
      uleb(out, uint64_t(row.cfa_offset));
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

}  // namespace

UnwindRow UnwindRow::entry(uint32_t offset) {
  UnwindRow r;
  r.offset = offset;
  return r;
}

UnwindRow UnwindRow::rbp_pushed(uint32_t offset) {
  UnwindRow r;
  r.offset = offset;
  r.cfa_offset = 16;
  r.saved_at(kDwRbp, -16);
  return r;
}

UnwindRow UnwindRow::rbp_frame(uint32_t offset) {
  UnwindRow r;
  r.offset = offset;
  r.cfa_reg = kDwRbp;
  r.cfa_offset = 16;
  r.saved_at(kDwRbp, -16);
  return r;
}

UnwindRow& UnwindRow::with(RegRule rule) {
  for (RegRule& r : regs)
    if (r.reg == rule.reg) {
      r = std::move(rule);
      return *this;
    }
  regs.push_back(std::move(rule));
  return *this;
}

std::vector<uint8_t> encode_eh_frame(uintptr_t begin, uintptr_t end, const std::vector<UnwindRow>& rows,
                                     bool signal_frame) {
  std::vector<uint8_t> out;
  // CIE
  put(out, uint32_t(0));  // length, patched
  put(out, uint32_t(0));  // CIE id
  out.push_back(1);       // version
  const char* aug = signal_frame ? "zRS" : "zR";
  out.insert(out.end(), aug, aug + std::strlen(aug) + 1);
  uleb(out, 1);            // code alignment factor
  sleb(out, kDataAlign);   // data alignment factor
  out.push_back(kDwRa);    // return address column
  uleb(out, 1);            // augmentation data length
  out.push_back(0x00);     // 'R': FDE addresses are absolute 8-byte pointers (DW_EH_PE_absptr)
  out.push_back(DW_CFA_def_cfa);  // initial state: CFA = rsp+8, return address at CFA-8
  uleb(out, kDwRsp);
  uleb(out, 8);
  out.push_back(uint8_t(DW_CFA_offset | uint8_t(kDwRa)));
  uleb(out, 1);
  pad_to_8(out, 0);
  patch(out, 0, uint32_t(out.size() - 4));
  // FDE
  size_t fde = out.size();
  put(out, uint32_t(0));                  // length, patched
  put(out, uint32_t(out.size() - 0));     // CIE pointer: distance back to the CIE (at 0)
  put(out, uint64_t(begin));              // pc begin
  put(out, uint64_t(end - begin));        // pc range
  uleb(out, 0);                           // augmentation data length
  std::vector<uint8_t> program = cfa_program(rows);
  out.insert(out.end(), program.begin(), program.end());
  pad_to_8(out, fde);
  patch(out, fde, uint32_t(out.size() - fde - 4));
  put(out, uint32_t(0));  // terminator, as at the end of an .eh_frame section
  return out;
}

namespace {

std::mutex g_frames_mutex;
std::vector<std::unique_ptr<uint64_t[]>>* g_frames = new std::vector<std::unique_ptr<uint64_t[]>>();  // never freed

bool rows_valid(uintptr_t begin, uintptr_t end, const std::vector<UnwindRow>& rows) {
  if (end <= begin || rows.empty() || rows.front().offset != 0) return false;
  for (size_t i = 0; i < rows.size(); i++) {
    if (rows[i].offset >= end - begin) return false;
    if (i > 0 && rows[i].offset <= rows[i - 1].offset) return false;
    if (rows[i].cfa_expr.empty() && rows[i].cfa_offset < 0) return false;
  }
  return true;
}

}  // namespace

bool unwind_support_available() { return llvm_unwind() != nullptr; }

bool register_unwind_rows(const char* name, uintptr_t begin, uintptr_t end, const std::vector<UnwindRow>& rows,
                          bool signal_frame) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return false;
  if (!rows_valid(begin, end, rows)) {
    std::fprintf(stderr, "minivm: internal error: bad unwind rows for %s\n", name);
    return false;
  }
  std::vector<uint8_t> bytes = encode_eh_frame(begin, end, rows, signal_frame);
  // libunwind keeps a pointer to the FDE (and reads its CIE again at every step): the
  // bytes live for the rest of the process, like the code they describe.
  auto mem = std::make_unique<uint64_t[]>((bytes.size() + 7) / 8);
  std::memcpy(mem.get(), bytes.data(), bytes.size());
  uint32_t cie_length;
  std::memcpy(&cie_length, bytes.data(), 4);
  uintptr_t fde = reinterpret_cast<uintptr_t>(mem.get()) + 4 + cie_length;
  {
    std::lock_guard<std::mutex> lock(g_frames_mutex);
    g_frames->push_back(std::move(mem));
  }
  u->add_dynamic_fde(fde);
  return true;
}

bool register_unwind_info(const char* name, uintptr_t begin, uintptr_t end, uint32_t frame_setup_end_offset) {
  std::vector<UnwindRow> rows{UnwindRow::entry(0)};
  if (frame_setup_end_offset == 0) rows[0] = UnwindRow::rbp_frame(0);
  else if (frame_setup_end_offset < end - begin) rows.push_back(UnwindRow::rbp_frame(frame_setup_end_offset));
  return register_unwind_rows(name, begin, end, rows);
}

// ---------------------------------------------------------------------------------------
// Recognising code shapes. Every pattern below is an exact instruction sequence emitted
// by the generators named in its comment; -1 is a wildcard byte.

namespace {

class CodeBytes {
 public:
  CodeBytes(uintptr_t begin, uintptr_t end) : p_(reinterpret_cast<const uint8_t*>(begin)), size_(end - begin) {}
  size_t size() const { return size_; }
  int byte(size_t off) const { return off < size_ ? p_[off] : -1; }
  bool at(size_t off, std::initializer_list<int> pat) const {
    if (off + pat.size() > size_) return false;
    size_t i = 0;
    for (int b : pat) {
      if (b >= 0 && p_[off + i] != uint8_t(b)) return false;
      i++;
    }
    return true;
  }
  std::optional<size_t> find(size_t from, size_t to, std::initializer_list<int> pat) const {
    to = std::min(to, size_);
    for (size_t off = from; off + pat.size() <= to; off++)
      if (at(off, pat)) return off;
    return std::nullopt;
  }
  int32_t rel32(size_t off) const {
    int32_t v;
    std::memcpy(&v, p_ + off, 4);
    return v;
  }

 private:
  const uint8_t* p_;
  size_t size_;
};

// Rows by offset. Region rows replace whatever is there; a region's "back to the default"
// row never replaces a row another region starts at the same offset.
struct RowSet {
  std::map<uint32_t, UnwindRow> rows;
  void set(UnwindRow r) { rows[r.offset] = std::move(r); }
  void revert(UnwindRow r) { rows.emplace(r.offset, std::move(r)); }
  std::vector<UnwindRow> done() const {
    std::vector<UnwindRow> v;
    for (auto& [_, r] : rows) v.push_back(r);
    return v;
  }
};

UnwindRow with_cfa(UnwindRow r, uint8_t reg, int32_t off) {
  r.cfa_reg = reg;
  r.cfa_offset = off;
  r.cfa_expr.clear();
  return r;
}
UnwindRow at(UnwindRow r, uint32_t off) {
  r.offset = off;
  return r;
}

// The stack-overflow path of a method entry (interp/templates.cpp gen_method_entry,
// jit/baseline_compiler.cpp prologue), reached by the `jb` after
//   cmp rax, [r15 + stack_limit]   49 3B 47 <disp8>
//   jb  overflow                   0F 82 <rel32>
// No frame is built on it: CFA = rsp+8 until `and rsp, -16` realigns for the runtime
// call; from there the CFA is the anchor sp the path stored (rsp+8, the caller's sp).
bool describe_overflow_path(const CodeBytes& c, size_t from, size_t to, RowSet& rs, const UnwindRow& back) {
  static_assert(runtime::kThreadStackLimitOffset < 128, "disp8 in the pattern");
  auto jb = c.find(from, to, {0x49, 0x3B, 0x47, runtime::kThreadStackLimitOffset, 0x0F, 0x82});
  if (!jb) return false;
  int64_t target = int64_t(*jb + 10) + c.rel32(*jb + 6);
  if (target < 0 || size_t(target) >= c.size()) return false;
  size_t path = size_t(target);
  if (!c.at(path, {0x48, 0x8B, 0x04, 0x24})) return false;  // mov rax, [rsp]  (the return pc, for the anchor)
  auto realign = c.find(path, path + 64, {0x48, 0x83, 0xE4, 0xF0});  // and rsp, -16
  if (!realign) return false;
  auto tail = c.find(*realign, *realign + 32, {0xFF, 0xD0, 0x0F, 0x0B});  // call rax; ud2
  if (!tail) return false;
  rs.set(UnwindRow::entry(uint32_t(path)));
  UnwindRow anchored = UnwindRow::entry(uint32_t(*realign));
  anchored.cfa_expr = op_breg(kDwR15, runtime::kThreadAnchorSpOffset) + std::vector<uint8_t>{DW_OP_deref};
  rs.set(anchored);
  if (*tail + 4 < c.size()) rs.revert(at(back, uint32_t(*tail + 4)));
  return true;
}

// A compiled method's return sequence (jit/baseline_compiler.cpp emit_return), starting
// at `p`: an optional load of the result into rax, `leave`, then one of
//   ret | ret imm16 | pop rcx; push rax; push rcx; ret | mov [rsp+d], rax; ret[ imm16]
// Returns whether it matched; adds its rows.
bool describe_compiled_return(const CodeBytes& c, size_t p, RowSet& rs, const UnwindRow& back,
                              std::set<size_t>& seen) {
  int b0 = c.byte(p), b1 = c.byte(p + 1), b2 = c.byte(p + 2);
  std::optional<size_t> leave;
  if (b0 == 0xC9) leave = p;
  else if ((b0 == 0x48 || b0 == 0x4C) && b1 == 0x89 && b2 >= 0 && (b2 & 0xC7) == 0xC0 && c.byte(p + 3) == 0xC9)
    leave = p + 3;  // mov rax, r64
  else if (b0 == 0x48 && b1 == 0x8B && b2 == 0x45 && c.byte(p + 4) == 0xC9) leave = p + 4;  // mov rax, [rbp+d8]
  else if (b0 == 0x48 && b1 == 0x8B && b2 == 0x85 && c.byte(p + 7) == 0xC9) leave = p + 7;  // mov rax, [rbp+d32]
  else if (b0 == 0x66 && (b1 == 0x48 || b1 == 0x4C) && b2 == 0x0F && c.byte(p + 3) == 0x7E && c.byte(p + 4) >= 0 &&
           (c.byte(p + 4) & 0xC7) == 0xC0 && c.byte(p + 5) == 0xC9)
    leave = p + 5;  // movq rax, xmm
  if (!leave) return false;
  if (seen.count(*leave)) return true;
  size_t t = *leave + 1;
  auto ret_len = [&](size_t q) -> size_t {
    if (c.byte(q) == 0xC3) return 1;
    if (c.byte(q) == 0xC2) return 3;
    return 0;
  };
  std::vector<UnwindRow> rows{UnwindRow::entry(uint32_t(t))};  // frame gone, rbp restored
  size_t end = 0;
  if (size_t n = ret_len(t)) {
    end = t + n;
  } else if (c.at(t, {0x59, 0x50, 0x51, 0xC3})) {  // pop rcx; push rax; push rcx; ret
    rows.push_back(with_cfa(UnwindRow::entry(uint32_t(t + 1)), kDwRsp, 0).held_in(kDwRa, kDwRcx));
    rows.push_back(with_cfa(UnwindRow::entry(uint32_t(t + 2)), kDwRsp, 8).held_in(kDwRa, kDwRcx));
    rows.push_back(with_cfa(UnwindRow::entry(uint32_t(t + 3)), kDwRsp, 16).saved_at(kDwRa, -16));
    end = t + 4;
  } else if (c.at(t, {0x48, 0x89, 0x44, 0x24}) && ret_len(t + 5)) {  // mov [rsp+d8], rax
    end = t + 5 + ret_len(t + 5);
  } else if (c.at(t, {0x48, 0x89, 0x84, 0x24}) && ret_len(t + 8)) {  // mov [rsp+d32], rax
    end = t + 8 + ret_len(t + 8);
  } else {
    return false;
  }
  seen.insert(*leave);
  for (auto& r : rows) rs.set(r);
  if (end < c.size()) rs.revert(at(back, uint32_t(end)));
  return true;
}

}  // namespace

std::vector<UnwindRow> compiled_code_unwind_rows(const runtime::CompiledCode& code, int* unmatched) {
  CodeBytes c(code.begin, code.end);
  RowSet rs;
  int misses = 0;
  const UnwindRow body = UnwindRow::rbp_frame(0);
  rs.set(UnwindRow::entry(0));
  // Prologue: [stack check] push rbp; mov rbp, rsp; sub rsp, N  <- frame_complete_offset
  size_t fc = code.frame_complete_offset;
  std::optional<size_t> sub;
  if (fc >= 4 && c.at(fc - 4, {0x48, 0x83, 0xEC, -1})) sub = fc - 4;
  else if (fc >= 7 && c.at(fc - 7, {0x48, 0x81, 0xEC, -1, -1, -1, -1})) sub = fc - 7;
  if (sub && *sub >= 4 && c.at(*sub - 4, {0x55, 0x48, 0x89, 0xE5})) {
    size_t push = *sub - 4;
    rs.set(UnwindRow::rbp_pushed(uint32_t(push + 1)));
    rs.set(at(body, uint32_t(push + 4)));
    if (!describe_overflow_path(c, 0, push, rs, body)) misses++;
  } else {
    // Unknown prologue: the frame is certainly complete at frame_complete_offset.
    rs.set(at(body, uint32_t(std::min<size_t>(fc, c.size() - 1))));
    misses++;
  }
  // Returns: each starts at a bytecode's first pc (a pc desc) or right after its poll.
  std::set<size_t> candidates, seen;
  for (auto& d : code.pc_descs) candidates.insert(d.pc_offset);
  for (auto& p : code.polls) candidates.insert(p.resume_pc - code.begin);
  for (size_t cand : candidates) describe_compiled_return(c, cand, rs, body, seen);
  if (code.method != nullptr && code.method->function != nullptr) {
    const vm::Function& f = *code.method->function;
    size_t returns = 0;
    for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(vm::Op(f.code[bci])).length) {
      vm::Op op = vm::Op(f.code[bci]);
      if (op == vm::Op::ret || op == vm::Op::vret) returns++;
    }
    if (seen.size() < returns) misses += int(returns - seen.size());
  }
  // OSR entries: jumped to with rsp at the return pc; each builds the frame itself.
  for (auto& e : code.osr_entries) {
    size_t off = e.pc - code.begin;
    if (!c.at(off, {0x55, 0x48, 0x89, 0xE5})) {
      misses++;
      continue;
    }
    rs.set(UnwindRow::entry(uint32_t(off)));
    rs.set(UnwindRow::rbp_pushed(uint32_t(off + 1)));
    rs.set(at(body, uint32_t(off + 4)));
  }
  if (unmatched) *unmatched = misses;
  return rs.done();
}

namespace {
// CFA = r14 + 8 - 8 * param_count(rbx): method entry while it pushes the extra locals.
std::vector<uint8_t> method_entry_cfa_expr() {
  return op_breg(kDwR14, 8) + op_breg(kDwRbx, runtime::kMethodParamCountOffset) +
         std::vector<uint8_t>{DW_OP_deref_size, 2, DW_OP_lit0 + 3, DW_OP_shl, DW_OP_minus};
}
}  // namespace

std::vector<UnwindRow> interpreter_unwind_rows(const runtime::CodeBlob& blob, size_t me_offset, size_t me_size,
                                               int* unmatched) {
  CodeBytes c(blob.begin, blob.end);
  RowSet rs;
  int misses = 0;
  const UnwindRow frame = UnwindRow::rbp_frame(0);
  rs.set(frame);
  // method_entry (interp/templates.cpp gen_method_entry), rbx = Method*:
  //   mov rax, rsp ... cmp rax, [r15+limit]; jb overflow
  //   movzx ecx, param_count; lea r14, [rsp+rcx*8]; pop rax       <- return pc in rax
  //   ... push 0 (extra locals) ...; push rax; push rbp; mov rbp, rsp
  size_t me_end = std::min(me_offset + me_size, c.size());
  if (me_size > 0) {
    auto setup = c.find(me_offset, me_end, {0x50, 0x55, 0x48, 0x89, 0xE5});
    auto pop = c.find(me_offset, me_end, {0x4C, 0x8D, 0x34, 0xCC, 0x58});
    if (setup && pop && *pop < *setup) {
      rs.set(UnwindRow::entry(uint32_t(me_offset)));
      // While the extra locals are pushed, rsp moves by a per-method amount: the CFA is
      // computed from the locals pointer, r14 = CFA - 8 + 8 * param_count.
      std::vector<uint8_t> cfa = method_entry_cfa_expr();
      UnwindRow popped = UnwindRow::entry(uint32_t(*pop + 5));
      popped.cfa_expr = cfa;
      popped.held_in(kDwRa, kDwRax);
      rs.set(popped);
      UnwindRow pushed = popped;
      pushed.offset = uint32_t(*setup + 1);
      pushed.saved_at_expr(kDwRa, op_breg(kDwRsp, 0));  // pushed back at [rsp]
      rs.set(pushed);
      // From `push rbp` on the frame is described as any interpreter frame's: CFA =
      // where rbp will point + 16.
      rs.set(UnwindRow::rbp_pushed(uint32_t(*setup + 2)));
      rs.set(at(frame, uint32_t(*setup + 5)));
      if (!describe_overflow_path(c, me_offset, *pop, rs, frame)) misses++;
    } else {
      misses++;
    }
  }
  // Returns (interp/templates.cpp return_from_frame), in ret and vret:
  //   mov rcx, [rbp+8]; mov rbp, [rbp]   <- frame gone, return pc in rcx
  //   (mov rsp, r14 | mov [r14], rax; lea rsp, [r14-8]); mov [rsp], rcx; ret
  size_t returns = 0;
  for (size_t off = 0; auto q = c.find(off, c.size(), {0x48, 0x8B, 0x4D, 0x08, 0x48, 0x8B, 0x6D, 0x00});) {
    off = *q + 8;
    auto store = c.find(*q + 8, *q + 8 + 16, {0x48, 0x89, 0x0C, 0x24, 0xC3});
    if (!store) {
      misses++;
      continue;
    }
    UnwindRow gone = with_cfa(UnwindRow::entry(uint32_t(*q + 8)), kDwR14, 8);  // the caller's sp after return
    rs.set(gone.held_in(kDwRa, kDwRcx));
    rs.set(UnwindRow::entry(uint32_t(*store + 4)));
    if (*store + 5 < c.size()) rs.revert(at(frame, uint32_t(*store + 5)));
    returns++;
  }
  if (returns == 0) misses++;
  // OSR jumps (interp/interp_masm.cpp branch): with rcx = return pc and rdx = caller's rbp
  //   lea rsp, [r14+r8*8]; mov [rsp], rcx; mov rbp, rdx; jmp rax
  for (size_t off = 0;
       auto q = c.find(off, c.size(), {0x4B, 0x8D, 0x24, 0xC6, 0x48, 0x89, 0x0C, 0x24, 0x48, 0x89, 0xD5, 0xFF, 0xE0});) {
    off = *q + 13;
    rs.set(UnwindRow::entry(uint32_t(*q + 4)).held_in(kDwRa, kDwRcx).held_in(kDwRbp, kDwRdx));
    rs.set(UnwindRow::entry(uint32_t(*q + 8)).held_in(kDwRbp, kDwRdx));
    rs.set(UnwindRow::entry(uint32_t(*q + 11)));
    if (*q + 13 < c.size()) rs.revert(at(frame, uint32_t(*q + 13)));
  }
  if (unmatched) *unmatched = misses;
  return rs.done();
}

std::vector<UnwindRow> call_stub_unwind_rows(const runtime::CodeBlob& blob, int* unmatched) {
  // runtime/stubs.cpp emit_call_stub: push rbp; mov rbp, rsp; push rbx; push r12..r15 ...
  // lea rsp, [rbp-40]; pop r15..r12; pop rbx; pop rbp; ret
  CodeBytes c(blob.begin, blob.end);
  RowSet rs;
  int misses = 0;
  rs.set(UnwindRow::entry(0));
  if (c.at(0, {0x55, 0x48, 0x89, 0xE5})) {
    rs.set(UnwindRow::rbp_pushed(1));
    UnwindRow r = UnwindRow::rbp_frame(4);
    rs.set(r);
    struct Push {
      std::initializer_list<int> bytes;
      uint8_t reg;
    };
    const Push pushes[] = {{{0x53}, kDwRbx}, {{0x41, 0x54}, kDwR12}, {{0x41, 0x55}, kDwR13},
                           {{0x41, 0x56}, kDwR14}, {{0x41, 0x57}, kDwR15}};
    size_t off = 4;
    int32_t slot = -24;
    for (const Push& p : pushes) {
      if (!c.at(off, p.bytes)) {
        misses++;
        break;
      }
      off += p.bytes.size();
      r.offset = uint32_t(off);
      r.saved_at(p.reg, slot);
      slot -= 8;
      rs.set(r);
    }
  } else {
    misses++;
    rs.set(UnwindRow::rbp_frame(std::min<uint32_t>(4, uint32_t(c.size() - 1))));
  }
  if (c.size() >= 2 && c.at(c.size() - 2, {0x5D, 0xC3})) rs.set(UnwindRow::entry(uint32_t(c.size() - 1)));
  else misses++;
  if (unmatched) *unmatched = misses;
  return rs.done();
}

std::vector<UnwindRow> safepoint_blob_unwind_rows(const runtime::CodeBlob& blob, int* unmatched) {
  // runtime/stubs.cpp emit_safepoint_blob, entered (not called) at a trapped poll with
  // rsp as the polling frame left it and the resume pc in the thread:
  //   push [r15+resume_pc]; push rbp; mov rbp, rsp; pushfq; push rax, rcx, rdx, rbx,
  //   rsi, rdi, r8..r15 ... popfq; pop rbp; mov byte [r15+state], in_java; ret
  CodeBytes c(blob.begin, blob.end);
  RowSet rs;
  int misses = 0;
  constexpr int32_t kResume = runtime::kThreadResumePcOffset;
  size_t push_len = 0;
  if (kResume < 128 && c.at(0, {0x41, 0xFF, 0x77, kResume})) push_len = 4;
  else if (c.at(0, {0x41, 0xFF, 0xB7}) && c.rel32(3) == kResume) push_len = 7;
  if (push_len != 0 && c.at(push_len, {0x55, 0x48, 0x89, 0xE5})) {
    UnwindRow start = with_cfa(UnwindRow::entry(0), kDwRsp, 0);
    start.saved_at_expr(kDwRa, op_breg(kDwR15, kResume));
    rs.set(start);
    rs.set(UnwindRow::entry(uint32_t(push_len)));
    rs.set(UnwindRow::rbp_pushed(uint32_t(push_len + 1)));
    UnwindRow r = UnwindRow::rbp_frame(uint32_t(push_len + 4));
    rs.set(r);
    size_t off = push_len + 4;
    if (c.byte(off) == 0x9C) {  // pushfq at [CFA-24]
      off += 1;
      struct Push {
        std::initializer_list<int> bytes;
        uint8_t reg;
      };
      const Push pushes[] = {{{0x50}, kDwRax}, {{0x51}, kDwRcx}, {{0x52}, kDwRdx}, {{0x53}, kDwRbx},
                             {{0x56}, kDwRsi}, {{0x57}, kDwRdi}, {{0x41, 0x50}, kDwR8}, {{0x41, 0x51}, kDwR9},
                             {{0x41, 0x52}, kDwR10}, {{0x41, 0x53}, kDwR11}, {{0x41, 0x54}, kDwR12},
                             {{0x41, 0x55}, kDwR13}, {{0x41, 0x56}, kDwR14}, {{0x41, 0x57}, kDwR15}};
      int32_t slot = -32;
      for (const Push& p : pushes) {
        if (!c.at(off, p.bytes)) {
          misses++;
          break;
        }
        off += p.bytes.size();
        r.offset = uint32_t(off);
        r.saved_at(p.reg, slot);
        slot -= 8;
        rs.set(r);
      }
    } else {
      misses++;
    }
  } else {
    misses++;
    rs.set(UnwindRow::rbp_frame(0));
  }
  // The tail: popfq; pop rbp; mov byte [r15+state], in_java; ret. After pop rbp only
  // the return address is left, as at a function's entry.
  constexpr int32_t kState = runtime::kThreadStateOffset;
  const size_t store_len = kState < 128 ? 5 : 8;
  const size_t tail = 2 + store_len + 1;
  bool store_ok = kState < 128 ? c.at(c.size() - 1 - store_len, {0x41, 0xC6, 0x47, kState})
                               : c.at(c.size() - 1 - store_len, {0x41, 0xC6, 0x87}) && c.rel32(c.size() - store_len + 2) == kState;
  if (c.size() >= tail && c.at(c.size() - tail, {0x9D, 0x5D}) && store_ok && c.byte(c.size() - 1) == 0xC3)
    rs.set(UnwindRow::entry(uint32_t(c.size() - tail + 2)));
  else
    misses++;
  if (unmatched) *unmatched = misses;
  return rs.done();
}

// ---------------------------------------------------------------------------------------
// Registration with tools.

namespace {

// The module's source file, absolute when it exists (perf looks sources up by this name).
std::string source_file_name() {
  static std::mutex mutex;
  static std::string given, resolved;
  const std::string& file = runtime::VM::get().module().file;
  std::lock_guard<std::mutex> lock(mutex);
  if (file != given) {
    given = file;
    char buf[PATH_MAX];
    resolved = realpath(file.c_str(), buf) != nullptr ? std::string(buf) : file;
  }
  return resolved;
}

}  // namespace

std::vector<runtime::FrameRow> frame_rows_from(const std::vector<UnwindRow>& rows) {
  using runtime::FrameRow;
  std::vector<FrameRow> out;
  for (const UnwindRow& u : rows) {
    FrameRow f;
    f.offset = u.offset;
    f.cfa_offset = u.cfa_offset;
    if (!u.cfa_expr.empty()) {
      f.cfa = u.cfa_expr == method_entry_cfa_expr() ? FrameRow::Cfa::r14_less_params : FrameRow::Cfa::undescribed;
      f.cfa_offset = 8;
    } else {
      f.cfa = u.cfa_reg == kDwRsp ? FrameRow::Cfa::rsp
              : u.cfa_reg == kDwRbp ? FrameRow::Cfa::rbp
              : u.cfa_reg == kDwR14 ? FrameRow::Cfa::r14
                                    : FrameRow::Cfa::undescribed;
    }
    for (const RegRule& r : u.regs) {
      if (r.reg == kDwRa) {
        if (r.kind == RegRule::at_cfa) f.ra_offset = r.offset;
        else if (r.kind == RegRule::in_reg && r.other == kDwRax) f.ra = FrameRow::Ra::in_rax;
        else if (r.kind == RegRule::in_reg && r.other == kDwRcx) f.ra = FrameRow::Ra::in_rcx;
        else if (r.kind == RegRule::at_expr && r.expr == op_breg(kDwRsp, 0)) f.ra = FrameRow::Ra::at_rsp;
        else f.ra = FrameRow::Ra::undescribed;
      } else if (r.reg == kDwRbp) {
        if (r.kind == RegRule::at_cfa) {
          f.rbp = FrameRow::Rbp::saved;
          f.rbp_offset = r.offset;
        } else if (r.kind == RegRule::in_reg && r.other == kDwRdx) {
          f.rbp = FrameRow::Rbp::in_rdx;
        } else if (r.kind != RegRule::same) {
          f.cfa = FrameRow::Cfa::undescribed;  // no shape of ours does this
        }
      }
    }
    out.push_back(f);
  }
  return out;
}

namespace {
// Publishes the rows on the blob once (never freed: a handler may be reading them).
void publish_frame_rows(const runtime::CodeBlob& blob, const std::vector<UnwindRow>& rows) {
  if (blob.frame_rows.load(std::memory_order_acquire) != nullptr) return;
  blob.frame_rows.store(new std::vector<runtime::FrameRow>(frame_rows_from(rows)), std::memory_order_release);
}
}  // namespace

void register_code_with_tools(const runtime::CompiledCode& code) {
  const std::string name = "mini::" + code.name;
  std::vector<UnwindRow> rows = compiled_code_unwind_rows(code);
  publish_frame_rows(code, rows);
  register_unwind_rows(name.c_str(), code.begin, code.end, rows);
  if (!perf_support_enabled()) return;
  // pc -> line of the innermost scope (an inlined callee's own line), merged when equal.
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  for (const runtime::PcDesc& d : code.pc_descs) {
    if (d.scope_count == 0) continue;
    const runtime::Scope& s = code.scopes[d.scope_begin];
    uint32_t line = s.method->function->line_at(uint32_t(std::max(s.bci, 0)));
    if (line == 0) continue;
    if (!lines.empty() && lines.back().second == line) continue;
    lines.push_back({d.pc_offset, line});
  }
  perf_record_code(name, code.begin, code.end - code.begin, source_file_name(), lines);
}

void register_runtime_blobs_with_tools(const std::vector<CodeRange>& interpreter_templates) {
  static std::mutex mutex;
  static std::set<uintptr_t>* done = new std::set<uintptr_t>();
  std::lock_guard<std::mutex> lock(mutex);
  bool perf = perf_support_enabled();
  for (const runtime::CodeBlob* blob : runtime::all_blobs()) {
    if (blob->kind == runtime::BlobKind::compiled || !done->insert(blob->begin).second) continue;
    const std::string name = "minivm::" + blob->name;
    size_t size = blob->end - blob->begin;
    switch (blob->kind) {
      case runtime::BlobKind::interpreter: {
        size_t me_offset = 0, me_size = 0;
        for (auto& t : interpreter_templates)
          if (t.name == "method_entry") me_offset = t.offset, me_size = t.size;
        std::vector<UnwindRow> rows = interpreter_unwind_rows(*blob, me_offset, me_size);
        publish_frame_rows(*blob, rows);
        register_unwind_rows(name.c_str(), blob->begin, blob->end, rows);
        if (perf && !interpreter_templates.empty()) {
          for (auto& t : interpreter_templates) perf_record_code(name + "::" + t.name, blob->begin + t.offset, t.size, "", {});
        } else if (perf) {
          perf_record_code(name, blob->begin, size, "", {});
        }
        break;
      }
      case runtime::BlobKind::call_stub:
        register_unwind_rows(name.c_str(), blob->begin, blob->end, call_stub_unwind_rows(*blob));
        if (perf) perf_record_code(name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::safepoint_blob:
      {
        std::vector<UnwindRow> rows = safepoint_blob_unwind_rows(*blob);
        publish_frame_rows(*blob, rows);
        register_unwind_rows(name.c_str(), blob->begin, blob->end, rows, /*signal_frame=*/true);
      }
        if (perf) perf_record_code(name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::stub:  // frameless, no metadata by default (DESIGN.md): perf names only
        if (perf) perf_record_code("minivm::stub::" + blob->name, blob->begin, size, "", {});
        break;
      case runtime::BlobKind::compiled:
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Walking.

namespace {

NativeWalk collect(const LlvmUnwind* u, unw_cursor_t& cursor, NativeFrame* frames, size_t max, size_t count,
                   uintptr_t first_pc) {
  NativeWalk w;
  w.count = count;
  for (;;) {
    if (w.count == max) {
      w.end = WalkEnd::truncated;
      return w;
    }
    unw_word_t ip = 0, sp = 0, fp = 0;
    u->get_reg(&cursor, UNW_REG_IP, &ip);
    u->get_reg(&cursor, UNW_REG_SP, &sp);
    u->get_reg(&cursor, UNW_X86_64_RBP, &fp);
    frames[w.count] = {w.count == 0 && first_pc != 0 ? first_pc : uintptr_t(ip), uintptr_t(sp), uintptr_t(fp)};
    w.count++;
    int r = u->step(&cursor);
    if (r == 0) {
      w.end = WalkEnd::end_of_stack;
      return w;
    }
    if (r < 0) {
      w.end = WalkEnd::error;
      return w;
    }
  }
}

}  // namespace

__attribute__((noinline)) NativeWalk walk_native_stack(NativeFrame* frames, size_t max) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  unw_context_t context;
  unw_cursor_t cursor;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return {0, WalkEnd::error};
  int r = u->step(&cursor);  // over this function's own frame
  if (r <= 0) return {0, r == 0 ? WalkEnd::end_of_stack : WalkEnd::error};
  return collect(u, cursor, frames, max, 0, 0);
}

__attribute__((noinline)) NativeWalk walk_native_stack_from(const void* ucontext, NativeFrame* frames, size_t max) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  if (max == 0) return {0, WalkEnd::truncated};
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  const greg_t* g = uc->uc_mcontext.gregs;
  unw_context_t context;
  unw_cursor_t cursor;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return {0, WalkEnd::error};
  static const struct {
    int unw, greg;
  } kRegs[] = {{UNW_X86_64_RAX, REG_RAX}, {UNW_X86_64_RBX, REG_RBX}, {UNW_X86_64_RCX, REG_RCX},
               {UNW_X86_64_RDX, REG_RDX}, {UNW_X86_64_RSI, REG_RSI}, {UNW_X86_64_RDI, REG_RDI},
               {UNW_X86_64_RBP, REG_RBP}, {UNW_X86_64_RSP, REG_RSP}, {UNW_X86_64_R8, REG_R8},
               {UNW_X86_64_R9, REG_R9},   {UNW_X86_64_R10, REG_R10}, {UNW_X86_64_R11, REG_R11},
               {UNW_X86_64_R12, REG_R12}, {UNW_X86_64_R13, REG_R13}, {UNW_X86_64_R14, REG_R14},
               {UNW_X86_64_R15, REG_R15}};
  for (auto& r : kRegs) u->set_reg(&cursor, r.unw, unw_word_t(g[r.greg]));
  uintptr_t pc = uintptr_t(g[REG_RIP]), sp = uintptr_t(g[REG_RSP]), fp = uintptr_t(g[REG_RBP]);
  if (*reinterpret_cast<const uint8_t*>(pc) == 0xC3) {
    // At a `ret` the frame is known without unwind info (and pc+1 may be past the code).
    frames[0] = {pc, sp, fp};
    u->set_reg(&cursor, UNW_REG_SP, sp + 8);
    u->set_reg(&cursor, UNW_REG_IP, *reinterpret_cast<const unw_word_t*>(sp));
    return collect(u, cursor, frames, max, 1, 0);
  }
  // libunwind evaluates a frame's CFA rows for pc-1, as for a return address; an
  // interrupted pc is exact, so ask for pc+1 (inside the same instruction) and report pc.
  u->set_reg(&cursor, UNW_REG_IP, pc + 1);
  return collect(u, cursor, frames, max, 0, pc);
}

}  // namespace jit
