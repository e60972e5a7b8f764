#include "jit/gdb_jit_elf.h"

#include <cstring>

#include "jit/byte_writer.h"
#include "runtime/invariant.h"

namespace jit {

namespace {

// ELF (System V gABI) and DWARF 2 constants used below.
enum : uint32_t { SHT_NULL = 0, SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_NOBITS = 8 };
enum : uint64_t { SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4 };
constexpr uint16_t kEtRel = 1, kEmX86_64 = 62;
constexpr uint8_t kStbGlobalFunc = (1 << 4) | 2;  // STB_GLOBAL, STT_FUNC
constexpr size_t kElfHeaderSize = 64, kSectionHeaderSize = 64, kSymbolSize = 24;
constexpr uint16_t kTextIndex = 1;  // .text: the first section after the null one

enum : uint8_t {
  DW_TAG_compile_unit = 0x11, DW_TAG_subprogram = 0x2e,
  DW_AT_name = 0x03, DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11, DW_AT_high_pc = 0x12,
  DW_AT_language = 0x13, DW_AT_producer = 0x25, DW_AT_external = 0x3f,
  DW_FORM_addr = 0x01, DW_FORM_data2 = 0x05, DW_FORM_data4 = 0x06, DW_FORM_string = 0x08, DW_FORM_flag = 0x0c,
  DW_LNS_copy = 0x01, DW_LNS_advance_line = 0x03,
  DW_LNE_end_sequence = 0x01, DW_LNE_set_address = 0x02,
};
constexpr uint16_t kDwLangC99 = 0x000c;  // gdb needs some language; the names are printed as they are
constexpr uint16_t kDwarfVersion = 2;

using Bytes = ByteWriter;

// A string table: offset 0 is the empty string.
struct StringTable {
  Bytes bytes;
  StringTable() { bytes.b.push_back(0); }
  uint32_t add(const std::string& s) {
    uint32_t at = uint32_t(bytes.b.size());
    bytes.str(s);
    return at;
  }
};

struct Section {
  std::string name;
  uint32_t type = SHT_PROGBITS;
  uint64_t flags = 0, addr = 0, nobits_size = 0, align = 1, entsize = 0;
  uint32_t link = 0, info = 0;
  std::vector<uint8_t> data;
};

std::vector<uint8_t> debug_abbrev() {
  Bytes a;
  a.uleb(1);
  a.uleb(DW_TAG_compile_unit);
  a.b.push_back(1);  // DW_CHILDREN_yes
  for (uint8_t at_form : {DW_AT_name, DW_FORM_string, DW_AT_producer, DW_FORM_string, DW_AT_language, DW_FORM_data2,
                          DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_addr, DW_AT_stmt_list, DW_FORM_data4})
    a.uleb(at_form);
  a.uleb(0), a.uleb(0);
  a.uleb(2);
  a.uleb(DW_TAG_subprogram);
  a.b.push_back(0);  // DW_CHILDREN_no
  for (uint8_t at_form : {DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_addr,
                          DW_AT_external, DW_FORM_flag})
    a.uleb(at_form);
  a.uleb(0), a.uleb(0);
  a.uleb(0);  // end of the abbreviations
  return a.b;
}

// One compile unit for the whole range, its line table at offset 0 of .debug_line.
std::vector<uint8_t> debug_info(const ElfCodeObject& o) {
  Bytes d;
  d.put(uint32_t(0));  // unit_length, patched
  d.put(kDwarfVersion);
  d.put(uint32_t(0));  // abbrev offset
  d.b.push_back(8);    // address size
  d.uleb(1);
  d.str(o.source_file);
  d.str("minivm");
  d.put(kDwLangC99);
  d.put(uint64_t(o.begin));
  d.put(uint64_t(o.end));
  d.put(uint32_t(0));  // stmt_list
  for (const ElfFunction& f : o.functions) {
    d.uleb(2);
    d.str(f.name);
    d.put(uint64_t(o.begin + f.offset));
    d.put(uint64_t(o.begin + f.offset + f.size));
    d.b.push_back(1);
  }
  d.uleb(0);  // end of the compile unit's children
  d.patch(0, uint32_t(d.b.size() - 4));
  return d.b;
}

// A DWARF 2 line program: for each row set the address, move the line, emit a row;
// then end the sequence at the end of the range. One file, the source.
std::vector<uint8_t> debug_line(const ElfCodeObject& o) {
  Bytes l;
  l.put(uint32_t(0));  // unit_length, patched
  l.put(kDwarfVersion);
  size_t header_length_at = l.b.size();
  l.put(uint32_t(0));  // header_length, patched
  l.b.insert(l.b.end(), {1, 1, uint8_t(-5), 14, 10});  // min_inst_length, default_is_stmt, line_base, line_range, opcode_base
  l.b.insert(l.b.end(), {0, 1, 1, 1, 1, 0, 0, 0, 1});  // standard_opcode_lengths
  l.b.push_back(0);                                    // no include directories
  l.str(o.source_file);
  l.uleb(0), l.uleb(0), l.uleb(0);                     // directory, mtime, length
  l.b.push_back(0);                                    // end of the file names
  l.patch(header_length_at, uint32_t(l.b.size() - header_length_at - 4));
  auto set_address = [&](uint64_t address) {
    l.b.insert(l.b.end(), {0, 9, DW_LNE_set_address});
    l.put(address);
  };
  int64_t line = 1;
  for (auto& [offset, row_line] : o.lines) {
    set_address(o.begin + offset);
    l.b.push_back(DW_LNS_advance_line);
    l.sleb(int64_t(row_line) - line);
    line = row_line;
    l.b.push_back(DW_LNS_copy);
  }
  set_address(o.end);
  l.b.insert(l.b.end(), {0, 1, DW_LNE_end_sequence});
  l.patch(0, uint32_t(l.b.size() - 4));
  return l.b;
}

}  // namespace

std::vector<uint8_t> build_elf_object(const ElfCodeObject& o) {
  std::vector<Section> sections(1);  // index 0: SHT_NULL
  Section text{".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, o.begin, o.end - o.begin, 16, 0, 0, 0, {}};
  sections.push_back(text);
  MVM_ASSERT(sections.size() == size_t(kTextIndex) + 1, "the symbols' section index, kTextIndex, is .text's");

  StringTable strtab;
  Bytes symtab;
  symtab.b.resize(kSymbolSize);  // symbol 0: undefined
  for (const ElfFunction& f : o.functions) {
    symtab.put(strtab.add(f.name));
    symtab.b.push_back(kStbGlobalFunc);
    symtab.b.push_back(0);  // default visibility
    symtab.put(kTextIndex);
    symtab.put(uint64_t(f.offset));  // section-relative: .text's address is added
    symtab.put(uint64_t(f.size));
  }
  uint32_t strtab_index = uint32_t(sections.size() + 1);
  sections.push_back({".symtab", SHT_SYMTAB, 0, 0, 0, 8, kSymbolSize, strtab_index, 1, symtab.b});
  sections.push_back({".strtab", SHT_STRTAB, 0, 0, 0, 1, 0, 0, 0, strtab.bytes.b});
  if (!o.eh_frame.empty()) sections.push_back({".eh_frame", SHT_PROGBITS, 0, 0, 0, 8, 0, 0, 0, o.eh_frame});
  if (!o.source_file.empty()) {
    sections.push_back({".debug_info", SHT_PROGBITS, 0, 0, 0, 1, 0, 0, 0, debug_info(o)});
    sections.push_back({".debug_abbrev", SHT_PROGBITS, 0, 0, 0, 1, 0, 0, 0, debug_abbrev()});
    sections.push_back({".debug_line", SHT_PROGBITS, 0, 0, 0, 1, 0, 0, 0, debug_line(o)});
  }
  StringTable shstrtab;
  std::vector<uint32_t> names(sections.size() + 1, 0);
  for (size_t i = 1; i < sections.size(); i++) names[i] = shstrtab.add(sections[i].name);
  names.back() = shstrtab.add(".shstrtab");
  sections.push_back({".shstrtab", SHT_STRTAB, 0, 0, 0, 1, 0, 0, 0, {}});
  sections.back().data = shstrtab.bytes.b;

  // Layout: header, each section's bytes (8-aligned), the section header table.
  Bytes out;
  out.b.resize(kElfHeaderSize);
  std::vector<uint64_t> offsets(sections.size(), 0);
  for (size_t i = 1; i < sections.size(); i++) {
    while (out.b.size() % 8 != 0) out.b.push_back(0);
    offsets[i] = out.b.size();
    out.b.insert(out.b.end(), sections[i].data.begin(), sections[i].data.end());
  }
  while (out.b.size() % 8 != 0) out.b.push_back(0);
  uint64_t shoff = out.b.size();
  for (size_t i = 0; i < sections.size(); i++) {
    const Section& s = sections[i];
    out.put(names[i]);
    out.put(i == 0 ? uint32_t(SHT_NULL) : s.type);
    out.put(s.flags);
    out.put(s.addr);
    out.put(offsets[i]);
    out.put(uint64_t(s.type == SHT_NOBITS ? s.nobits_size : s.data.size()));
    out.put(s.link);
    out.put(s.info);
    out.put(i == 0 ? uint64_t(0) : s.align);
    out.put(s.entsize);
  }

  Bytes h;
  h.b.insert(h.b.end(), {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little endian */, 1 /* EV_CURRENT */, 0 /* SysV */});
  h.b.resize(16, 0);
  h.put(kEtRel);
  h.put(kEmX86_64);
  h.put(uint32_t(1));  // e_version
  h.put(uint64_t(0));  // e_entry
  h.put(uint64_t(0));  // e_phoff: no program headers
  h.put(shoff);
  h.put(uint32_t(0));  // e_flags
  h.put(uint16_t(kElfHeaderSize));
  h.put(uint16_t(0));  // e_phentsize
  h.put(uint16_t(0));  // e_phnum
  h.put(uint16_t(kSectionHeaderSize));
  h.put(uint16_t(sections.size()));
  h.put(uint16_t(sections.size() - 1));  // e_shstrndx: .shstrtab is last
  std::memcpy(out.b.data(), h.b.data(), kElfHeaderSize);
  return out.b;
}

}  // namespace jit
