// The GDB JIT interface (jit/gdb_jit.h) and the objects it hands over (jit/gdb_jit_elf.h):
// the descriptor's list stays a well-formed doubly linked list through registrations,
// replacements and removals from several threads, each change is announced with its
// entry; and an object is an ELF64 file whose sections are where its headers say.
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "jit/gdb_jit.h"
#include "jit/gdb_jit_elf.h"
#include "jit/gdb_jit_protocol.h"  // the symbols, as gdb sees them

namespace {

// The list as gdb walks it, checked link by link: the objects' first bytes, in list order.
std::vector<std::string> walk_list() {
  std::vector<std::string> names;
  jit_code_entry* prev = nullptr;
  for (jit_code_entry* e = __jit_debug_descriptor.first_entry; e != nullptr; e = e->next_entry) {
    REQUIRE(e->prev_entry == prev);
    names.emplace_back(e->symfile_addr, e->symfile_size);
    prev = e;
  }
  return names;
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

template <typename T>
T read(const std::vector<uint8_t>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

}  // namespace

TEST_CASE("gdb jit: the descriptor's list through registrations and removals", "[gdb_jit]") {
  REQUIRE(__jit_debug_descriptor.version == 1);
  std::vector<std::string> before = walk_list();
  jit::gdb_jit_register(0x1000, bytes("a"));
  jit::gdb_jit_register(0x2000, bytes("b"));
  jit::gdb_jit_register(0x3000, bytes("c"));
  CHECK(__jit_debug_descriptor.action_flag == 0);  // JIT_NOACTION between changes
  CHECK(__jit_debug_descriptor.relevant_entry == nullptr);
  std::vector<std::string> now = walk_list();
  REQUIRE(now.size() == before.size() + 3);
  CHECK(std::vector<std::string>(now.begin(), now.begin() + 3) == std::vector<std::string>{"c", "b", "a"});

  jit::gdb_jit_unregister(0x2000);  // from the middle
  now = walk_list();
  CHECK(std::vector<std::string>(now.begin(), now.begin() + 2) == std::vector<std::string>{"c", "a"});
  jit::gdb_jit_register(0x1000, bytes("a2"));  // new code where old code was: replaces it
  now = walk_list();
  CHECK(std::vector<std::string>(now.begin(), now.begin() + 2) == std::vector<std::string>{"a2", "c"});
  CHECK(now.size() == before.size() + 2);
  jit::gdb_jit_unregister(0x3000);
  jit::gdb_jit_unregister(0x1000);
  jit::gdb_jit_unregister(0x4000);  // never registered: nothing happens
  CHECK(walk_list() == before);
}

TEST_CASE("gdb jit: concurrent registrations and removals keep the list whole", "[gdb_jit]") {
  std::vector<std::string> before = walk_list();
  size_t objects = jit::gdb_jit_stats().objects;
  std::vector<std::thread> threads;
  for (uintptr_t t = 0; t < 4; t++) {
    threads.emplace_back([t] {
      for (uintptr_t i = 0; i < 500; i++) {
        uintptr_t begin = 0x100000 * (t + 1) + 0x100 * (i % 16);
        jit::gdb_jit_register(begin, bytes("x"));
        if (i % 3 != 0) jit::gdb_jit_unregister(begin);
      }
      for (uintptr_t i = 0; i < 16; i++) jit::gdb_jit_unregister(0x100000 * (t + 1) + 0x100 * i);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(walk_list() == before);
  CHECK(jit::gdb_jit_stats().objects == objects);
}

TEST_CASE("gdb jit: an object's ELF headers describe its sections", "[gdb_jit]") {
  jit::ElfCodeObject o;
  o.begin = 0x7f0000001000;
  o.end = o.begin + 0x80;
  o.functions = {{"mini::f", 0, 0x40}, {"mini::g", 0x40, 0x40}};
  o.eh_frame = {1, 2, 3, 4, 5, 6, 7, 8};
  o.source_file = "/tmp/prog.mini";
  o.lines = {{0, 3}, {0x10, 4}, {0x40, 9}};
  std::vector<uint8_t> b = jit::build_elf_object(o);

  REQUIRE(b.size() > 64);
  CHECK(std::memcmp(b.data(), "\x7f" "ELF\x02\x01\x01", 7) == 0);
  CHECK(read<uint16_t>(b, 16) == 1);   // ET_REL
  CHECK(read<uint16_t>(b, 18) == 62);  // EM_X86_64
  uint64_t shoff = read<uint64_t>(b, 40);
  uint16_t shnum = read<uint16_t>(b, 60), shstrndx = read<uint16_t>(b, 62);
  REQUIRE(shoff + uint64_t(shnum) * 64 == b.size());
  auto section = [&](size_t i, size_t field) { return read<uint64_t>(b, shoff + i * 64 + field); };
  uint64_t names = section(shstrndx, 24);
  std::set<std::string> seen;
  for (size_t i = 1; i < shnum; i++) {
    std::string name(reinterpret_cast<const char*>(b.data() + names + read<uint32_t>(b, shoff + i * 64)));
    seen.insert(name);
    uint32_t type = read<uint32_t>(b, shoff + i * 64 + 4);
    if (type != 8) CHECK(section(i, 24) + section(i, 32) <= shoff);  // SHT_NOBITS has no bytes
    if (name == ".text") {
      CHECK(type == 8);
      CHECK(section(i, 16) == o.begin);  // sh_addr: the code's real address
      CHECK(section(i, 32) == 0x80);
    }
    if (name == ".eh_frame") CHECK(std::memcmp(b.data() + section(i, 24), o.eh_frame.data(), 8) == 0);
    if (name == ".symtab") {
      REQUIRE(section(i, 32) == 3 * 24);  // the null symbol and two functions
      uint64_t g = section(i, 24) + 2 * 24;
      CHECK(read<uint64_t>(b, g + 8) == 0x40);   // st_value: section-relative
      CHECK(read<uint64_t>(b, g + 16) == 0x40);  // st_size
    }
  }
  CHECK(seen == std::set<std::string>{".text", ".symtab", ".strtab", ".eh_frame", ".debug_info", ".debug_abbrev",
                                      ".debug_line", ".shstrtab"});
}
