// Names of C/C++ frames in mixed stacks (sampler/mixed_stack.h, `symbolize`). dladdr finds
// the object a pc lies in; its function comes from the object's ELF symbol table, which
// has the local functions too (runtime::thread_main, libc's start_thread and clone3, which
// the dynamic symbols dladdr reads do not hold), demangled with abi::__cxa_demangle.
#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/mixed_stack.h"

namespace sampler {

namespace {

struct Symbol {
  uintptr_t start, size;  // link-time addresses
  std::string name;
  int rank;  // of the names of one address, the larger the better (rank_of)
};

// Of several names for one function, the one a reader knows: a global before a weak or a
// local one, and never glibc's internal aliases (`__GI_clone3` is `clone3`).
int rank_of(const Elf64_Sym& s, const char* name) {
  int bind = ELF64_ST_BIND(s.st_info);
  int r = bind == STB_GLOBAL ? 4 : bind == STB_WEAK ? 2 : 0;
  if (std::strncmp(name, "__GI_", 5) == 0) r -= 8;
  return r;
}

// One ELF file, mapped read-only while it is read.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && size_t(sb.st_size) >= sizeof(Elf64_Ehdr)) {
      void* p = mmap(nullptr, size_t(sb.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        base_ = static_cast<const uint8_t*>(p);
        size_ = size_t(sb.st_size);
      }
    }
    close(fd);
    if (base_ != nullptr && (std::memcmp(base_, ELFMAG, SELFMAG) != 0 || base_[EI_CLASS] != ELFCLASS64 ||
                             header().e_shoff + size_t(header().e_shnum) * sizeof(Elf64_Shdr) > size_)) {
      munmap(const_cast<uint8_t*>(base_), size_);
      base_ = nullptr;
    }
  }
  ~ElfFile() {
    if (base_ != nullptr) munmap(const_cast<uint8_t*>(base_), size_);
  }
  bool ok() const { return base_ != nullptr; }
  const Elf64_Ehdr& header() const { return *reinterpret_cast<const Elf64_Ehdr*>(base_); }
  const Elf64_Shdr* section(uint32_t type) const {
    for (unsigned i = 0; i < header().e_shnum; i++) {
      const Elf64_Shdr& s = sections()[i];
      if (s.sh_type == type && s.sh_offset + s.sh_size <= size_) return &s;
    }
    return nullptr;
  }
  // The function symbols of a symbol table section.
  void functions(const Elf64_Shdr& table, std::vector<Symbol>& out) const {
    if (table.sh_link >= header().e_shnum) return;
    const Elf64_Shdr& strings = sections()[table.sh_link];
    if (strings.sh_offset + strings.sh_size > size_) return;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(base_ + table.sh_offset);
    for (size_t i = 0; i < table.sh_size / sizeof(Elf64_Sym); i++) {
      const Elf64_Sym& s = syms[i];
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0 || s.st_shndx == SHN_UNDEF) continue;
      if (s.st_name >= strings.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(base_ + strings.sh_offset + s.st_name);
      out.push_back(Symbol{uintptr_t(s.st_value), uintptr_t(s.st_size), name, rank_of(s, name)});
    }
  }
  // The procedure linkage table's sections (.plt, .plt.sec, .plt.got), as symbols named
  // `label`: a call to another object passes through one of their entries.
  void plt_sections(const std::string& label, std::vector<Symbol>& out) const {
    if (header().e_shstrndx >= header().e_shnum) return;
    const Elf64_Shdr& names = sections()[header().e_shstrndx];
    if (names.sh_offset + names.sh_size > size_) return;
    for (unsigned i = 0; i < header().e_shnum; i++) {
      const Elf64_Shdr& s = sections()[i];
      if (s.sh_name >= names.sh_size || s.sh_addr == 0) continue;
      const char* name = reinterpret_cast<const char*>(base_ + names.sh_offset + s.sh_name);
      if (std::strncmp(name, ".plt", 4) == 0) out.push_back(Symbol{uintptr_t(s.sh_addr), uintptr_t(s.sh_size), label, -16});
    }
  }
  // The GNU build id in hex, or "".
  std::string build_id() const {
    for (unsigned i = 0; i < header().e_shnum; i++) {
      const Elf64_Shdr& s = sections()[i];
      if (s.sh_type != SHT_NOTE || s.sh_offset + s.sh_size > size_) continue;
      for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= s.sh_size;) {
        const auto* n = reinterpret_cast<const Elf64_Nhdr*>(base_ + s.sh_offset + at);
        size_t name = (n->n_namesz + 3) & ~size_t(3), desc = (n->n_descsz + 3) & ~size_t(3);
        const uint8_t* d = base_ + s.sh_offset + at + sizeof(Elf64_Nhdr) + name;
        if (n->n_type == NT_GNU_BUILD_ID && d + n->n_descsz <= base_ + size_) {
          std::string hex;
          char b[3];
          for (size_t k = 0; k < n->n_descsz; k++) {
            std::snprintf(b, sizeof b, "%02x", d[k]);
            hex += b;
          }
          return hex;
        }
        at += sizeof(Elf64_Nhdr) + name + desc;
      }
    }
    return "";
  }

 private:
  const Elf64_Shdr* sections() const { return reinterpret_cast<const Elf64_Shdr*>(base_ + header().e_shoff); }
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

// An object's functions, sorted by address; `exec`: a non-PIE executable (absolute addresses).
struct SymbolTable {
  std::vector<Symbol> symbols;
  bool exec = false;
};

std::unique_ptr<SymbolTable> load_table(const std::string& path) {
  auto t = std::make_unique<SymbolTable>();
  ElfFile f(path);
  if (!f.ok()) return t;
  t->exec = f.header().e_type == ET_EXEC;
  if (const Elf64_Shdr* s = f.section(SHT_SYMTAB)) f.functions(*s, t->symbols);
  if (t->symbols.empty()) {
    std::string id = f.build_id();
    if (id.size() > 2) {
      ElfFile debug("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
      if (debug.ok())
        if (const Elf64_Shdr* s = debug.section(SHT_SYMTAB)) debug.functions(*s, t->symbols);
    }
  }
  if (t->symbols.empty())
    if (const Elf64_Shdr* s = f.section(SHT_DYNSYM)) f.functions(*s, t->symbols);
  size_t slash = path.rfind('/');
  f.plt_sections(path.substr(slash == std::string::npos ? 0 : slash + 1) + "@plt", t->symbols);
  // By address, the best name of each address last (where lookup finds it).
  std::sort(t->symbols.begin(), t->symbols.end(), [](const Symbol& a, const Symbol& b) {
    return a.start != b.start ? a.start < b.start : a.rank < b.rank;
  });
  return t;
}

const Symbol* lookup(const SymbolTable& t, uintptr_t addr) {
  auto it = std::upper_bound(t.symbols.begin(), t.symbols.end(), addr,
                             [](uintptr_t a, const Symbol& s) { return a < s.start; });
  while (it != t.symbols.begin()) {
    --it;
    if (addr < it->start + std::max<uintptr_t>(it->size, 1)) return &*it;
    if (it->size != 0) return nullptr;  // past a sized function: in none
  }
  return nullptr;
}

// `ns::f(int) const` -> `ns::f`: cut at the parameter list, the first '(' outside template
// arguments that is not part of "(anonymous namespace)".
std::string without_parameters(const std::string& s) {
  static const std::string kAnon = "(anonymous namespace)";
  int angle = 0;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '<') angle++;
    if (s[i] == '>') angle--;
    if (s[i] != '(' || angle > 0 || i == 0) continue;
    if (s.compare(i, kAnon.size(), kAnon) == 0) {
      i += kAnon.size() - 1;
      continue;
    }
    return s.substr(0, i);
  }
  return s;
}

// A symbol's name as a reader knows it: demangled, without its parameters, and without a
// symbol version (`_IO_file_xsputn@@GLIBC_2.2.5` is `_IO_file_xsputn`; `minivm@plt`, a
// linkage table, stays as it is).
std::string demangled(const std::string& symbol) {
  size_t at = symbol.find('@');
  if (at != std::string::npos && symbol.compare(at, std::string::npos, "@plt") == 0) return symbol;
  std::string name = symbol.substr(0, at);
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string s = status == 0 && d != nullptr ? without_parameters(d) : name;
  std::free(d);
  return s;
}

// The file of the object dladdr found. For the executable, dladdr names argv[0], which is
// the launcher when `minivm` started the VM (vm/cli/launcher): the kernel's link to the
// file it runs is the right one.
std::string object_path(const Dl_info& info) {
  static const void* const exe_base = [] {
    Dl_info self{};
    return dladdr(reinterpret_cast<void*>(&symbolize), &self) != 0 ? self.dli_fbase : nullptr;
  }();
  static const std::string exe = [] {
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, size_t(n)) : std::string("/proc/self/exe");
  }();
  if (info.dli_fbase == exe_base || info.dli_fname == nullptr || info.dli_fname[0] == '\0') return exe;
  return info.dli_fname;
}

std::string name_of(uintptr_t pc, std::map<std::string, std::unique_ptr<SymbolTable>>& tables) {
  Dl_info info{};
  char buf[48];
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0) {
    std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(pc));
    return buf;
  }
  std::string path = object_path(info);
  auto& table = tables[path];
  if (table == nullptr) table = load_table(path);
  uintptr_t base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  if (const Symbol* s = lookup(*table, table->exec ? pc : pc - base)) return demangled(s->name);
  if (info.dli_sname != nullptr) return demangled(info.dli_sname);
  size_t slash = path.rfind('/');
  std::snprintf(buf, sizeof buf, "+0x%lx", static_cast<unsigned long>(pc - base));
  return path.substr(slash == std::string::npos ? 0 : slash + 1) + buf;
}

}  // namespace

std::string symbolize(uintptr_t pc) {
  static std::mutex mutex;
  static std::unordered_map<uintptr_t, std::string> names;
  static std::map<std::string, std::unique_ptr<SymbolTable>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(pc);
  if (it == names.end()) it = names.emplace(pc, name_of(pc, tables)).first;
  return it->second;
}

}  // namespace sampler
