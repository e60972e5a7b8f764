// The in-memory ELF64 object that describes one range of generated code to a debugger
// (jit/gdb_jit.h hands it over). gdb reads it like a file on disk, so it holds only what
// gdb needs to name, place and unwind the code; the machine code itself stays where it is:
//   - .text: SHT_NOBITS at the code's real address (no bytes: gdb reads memory),
//   - .symtab/.strtab: one function symbol per named range (the names perf sees),
//   - .eh_frame: the CFI the generator recorded (jit/dwarf_cfi.h), absolute addresses,
//   - with a source file: .debug_line (pc -> line), and the one DW_TAG_compile_unit in
//     .debug_info/.debug_abbrev that points gdb at it, with a DW_TAG_subprogram per
//     symbol so gdb names the frame from its full symbol.
// A relocatable object (ET_REL) whose only allocated section, .text, already has its
// address: gdb places nothing and relocates nothing.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jit {

struct ElfFunction {
  std::string name;
  uint64_t offset = 0, size = 0;  // inside the code range
};

struct ElfCodeObject {
  uintptr_t begin = 0, end = 0;          // the code range: [begin, end)
  std::vector<ElfFunction> functions;    // sorted by offset, inside the range
  std::vector<uint8_t> eh_frame;         // .eh_frame bytes (absolute pointers), or empty
  std::string source_file;               // empty: no debug sections
  // (pc offset from begin, line) sorted by offset, each holding until the next.
  std::vector<std::pair<uint32_t, uint32_t>> lines;
};

// The object's bytes.
std::vector<uint8_t> build_elf_object(const ElfCodeObject& object);

}  // namespace jit
