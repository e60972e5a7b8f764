#include "jit/listing.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "jit/poll_sites.h"
#include "runtime/classes.h"
#include "runtime/runtime_calls.h"
#include "runtime/strings.h"
#include "runtime/vm.h"
#include "vm/text.h"

namespace jit {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_label_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The runtime's entry points generated code calls (runtime/runtime_calls.h), by address.
const std::map<uintptr_t, const char*>& runtime_entries() {
  static const std::map<uintptr_t, const char*> names = {
      {reinterpret_cast<uintptr_t>(&minivm_rt_newarray), "runtime newarray"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_native), "runtime native"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_print), "runtime print"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_spawn), "runtime spawn"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_sconcat), "runtime sconcat"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_scompare), "runtime scompare"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_substring), "runtime substring"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_tostring), "runtime tostring"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_null), "runtime throw_null"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_newobject), "runtime newobject"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_null_member), "runtime throw_null_member"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_cast), "runtime throw_cast"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_div_zero), "runtime throw_div_zero"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_index), "runtime throw_index"},
      {reinterpret_cast<uintptr_t>(&minivm_rt_throw_stack_overflow), "runtime throw_stack_overflow"},
  };
  return names;
}

// What an address-sized immediate stands for, or "" for a plain number.
std::string name_address(uintptr_t v) {
  if (auto it = runtime_entries().find(v); it != runtime_entries().end()) return it->second;
  if (runtime::is_permanent(reinterpret_cast<const void*>(v))) {
    const auto* value = reinterpret_cast<const runtime::Array*>(v);
    if (value->kind == runtime::ArrayKind::Closure) return "the value of " + runtime::VM::get().method(uint16_t(value->reserved))->function->name;
    std::string_view text = runtime::string_bytes(reinterpret_cast<const runtime::Array*>(v));
    return "string " + vm::quoted(text.size() > 24 ? std::string(text.substr(0, 24)) + "..." : std::string(text));
  }
  if (v == reinterpret_cast<uintptr_t>(&runtime::g_class_shapes)) return "&class_shapes";
  runtime::VM& vm = runtime::VM::get();
  for (size_t i = 0; i < vm.method_count(); i++) {
    const runtime::Method* m = vm.method(i);
    if (v == reinterpret_cast<uintptr_t>(m)) return "Method* " + m->function->name;
    const auto& code = m->function->code;
    uintptr_t begin = reinterpret_cast<uintptr_t>(code.data());
    if (v >= begin && v < begin + code.size()) return fmt::format("bcp {}@{}", m->function->name, v - begin);
  }
  uintptr_t globals = reinterpret_cast<uintptr_t>(vm.globals());
  if (v >= globals && v < globals + 8 * vm.module().globals.size())
    return "&" + vm.module().globals[(v - globals) / 8].name;
  if (const runtime::CodeBlob* blob = runtime::find_blob(v); blob != nullptr && blob->begin == v)
    return std::string(runtime::blob_kind_name(blob->kind)) + " " + blob->name;
  return "";
}

// asmjit prints immediates in decimal: one of 2^32 or more is an address.
std::string name_addresses(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool starts = std::isdigit(static_cast<unsigned char>(text[i])) && (i == 0 || !is_label_char(text[i - 1]));
    if (!starts) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_label_char(text[j])) j++;
    std::string number(text.substr(i, j - i));
    uint64_t v = std::strtoull(number.c_str(), nullptr, 0);
    std::string name = v >> 32 != 0 ? name_address(uintptr_t(v)) : "";
    out += name.empty() ? number : "<" + name + ">";
    i = j;
  }
  return out;
}

}  // namespace

asmjit::Error ListingLogger::_log(const char* data, size_t size) noexcept {
  std::string_view text = trim(std::string_view(data, size == SIZE_MAX ? std::char_traits<char>::length(data) : size));
  // The assembler logs an instruction before it advances past it: offset() is its start.
  uint32_t at = uint32_t(a_.offset());
  if (text.empty() || text.front() == ';' || text.front() == '.') return asmjit::kErrorOk;
  if (text.back() == ':') {
    labels_.emplace_back(std::string(text.substr(0, text.size() - 1)), at);
    return asmjit::kErrorOk;
  }
  size_t comment = text.find(';');
  lines_.push_back({at, std::string(trim(text.substr(0, comment)))});
  return asmjit::kErrorOk;
}

std::vector<AsmLine> ListingLogger::lines() const {
  std::map<std::string, uint32_t, std::less<>> at(labels_.begin(), labels_.end());
  std::vector<AsmLine> out;
  for (const AsmLine& l : lines_) {
    std::string text;
    const std::string& s = l.text;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      if (s[i] == 'L' && (i == 0 || !is_label_char(s[i - 1])))
        while (j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))) j++;
      auto it = j > i && (j + 1 == s.size() || !is_label_char(s[j + 1])) ? at.find(std::string_view(s).substr(i, j + 1 - i))
                                                                          : at.end();
      if (it != at.end()) {
        text += fmt::format("+{:#x}", it->second);
        i = j + 1;
      } else {
        text += s[i++];
      }
    }
    out.push_back({l.offset, name_addresses(text)});
  }
  return out;
}

namespace {

std::string source_line(const std::vector<std::string_view>& source, uint32_t line) {
  if (line == 0 || line > source.size()) return "";
  std::string_view s = source[line - 1];
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// "store, inlined into work:21 < main:28" for an inlined scope chain; "" for the method's own.
std::string inlined_from(const runtime::ScopeChain& scopes) {
  if (scopes.count <= 1) return "";
  std::string out = fmt::format("   ({}, inlined into", scopes[0].method->function->name);
  for (uint32_t k = 1; k < scopes.count; k++) {
    const vm::Function& f = *scopes[k].method->function;
    out += fmt::format("{} {}:{}", k == 1 ? "" : " <", f.name, f.line_at(uint32_t(scopes[k].bci)));
  }
  return out + ")";
}

bool same_scopes(const runtime::ScopeChain& a, const runtime::ScopeChain& b) {
  if (a.count != b.count) return false;
  for (uint32_t k = 0; k < a.count; k++)
    if (a[k].method != b[k].method || (k > 0 && a[k].bci != b[k].bci)) return false;
  return true;
}

}  // namespace

std::string format_listing(const runtime::CompiledCode& code, const std::vector<AsmLine>& insns,
                           const std::vector<std::string_view>& source, const ListingOptions& options) {
  const vm::Function& fn = *code.method->function;
  std::vector<PollSiteInfo> polls = poll_sites(code);
  std::vector<LoopSite> loops = loop_sites(code);

  // What to say at each offset, in the order the reader needs it.
  std::multimap<uint32_t, std::string> marks;
  marks.emplace(code.frame_complete_offset, "frame complete");
  for (const LoopSite& l : loops) {
    std::string what = fmt::format("{} loop header", l.loop->counted ? "counted" : "uncounted");
    if (!l.has_poll) what += ": NO POLL in this loop";
    marks.emplace(l.header_offset, what);
  }
  for (const PollSiteInfo& p : polls) {
    marks.emplace(p.offset, fmt::format("POLL ({})", runtime::poll_kind_label(p.kind)));
    marks.emplace(p.stub_offset, fmt::format("slow path of the poll at +{:#x}: into the safepoint blob", p.offset));
  }
  for (const runtime::ImplicitNull& n : code.implicit_nulls)
    marks.emplace(uint32_t(n.pc - code.begin),
                  fmt::format("null check: on null this faults, and the thread goes on at +{:#x}", n.handler - code.begin));
  for (const auto& e : code.osr_entries)
    marks.emplace(uint32_t(e.pc - code.begin), fmt::format("OSR entry (loop at bci {})", e.bci));

  std::string out = fmt::format("fn {}: {} bytes, frame complete at +{:#x}, poll sites:", fn.name, code.end - code.begin,
                                code.frame_complete_offset);
  for (const PollSiteInfo& p : polls) out += fmt::format(" +{:#x} ({})", p.offset, runtime::poll_kind_label(p.kind));
  if (polls.empty()) out += " none";
  out += "\n";

  size_t desc = 0;
  bool have_scope = false;
  runtime::ScopeChain shown;
  uint32_t shown_line = 0;
  for (const AsmLine& insn : insns) {
    while (desc + 1 < code.pc_descs.size() && code.pc_descs[desc + 1].pc_offset <= insn.offset) desc++;
    if (insn.offset < code.frame_complete_offset) {
      // The frame being built belongs to the function's declaration, not to its first
      // statement (which the debug info names, so that a sample there has a line).
      if (!have_scope) out += fmt::format("{:>6} | {}   (prologue)\n", fn.line, source_line(source, fn.line));
      have_scope = true;
      shown_line = 0;
    } else if (!code.pc_descs.empty()) {
      runtime::ScopeChain scopes = code.scope_chain(code.pc_descs[desc]);
      uint32_t line = scopes.count ? scopes[0].method->function->line_at(uint32_t(scopes[0].bci)) : 0;
      if (shown_line == 0 || line != shown_line || !same_scopes(scopes, shown)) {
        out += fmt::format("{:>6} | {}{}\n", line, source_line(source, line), inlined_from(scopes));
        have_scope = true;
        shown = scopes;
        shown_line = line;
      }
    }
    std::string row = fmt::format("         +{:#06x}  {}", insn.offset, insn.text);
    auto [first, last] = marks.equal_range(insn.offset);
    if (first != last) {
      row.resize(std::max<size_t>(row.size() + 2, 56), ' ');
      row += "<-";
      for (auto it = first; it != last; ++it) row += (it == first ? " " : "; ") + it->second;
      marks.erase(first, last);  // once, at the first instruction there
    }
    out += row + "\n";
  }

  if (options.pc_table) {
    out += "  debug info (pc -> scopes, innermost first; * = poll or call site):\n";
    for (const runtime::PcDesc& d : code.pc_descs) {
      out += fmt::format("    +{:#06x}{}", d.pc_offset, d.safepoint ? " *" : "  ");
      runtime::ScopeChain scopes = code.scope_chain(d);
      for (uint32_t k = 0; k < scopes.count; k++)
        out += fmt::format(" {}@{} (line {})", scopes[k].method->function->name, scopes[k].bci,
                           scopes[k].method->function->line_at(uint32_t(scopes[k].bci)));
      out += "\n";
    }
  }
  return out;
}

}  // namespace jit
