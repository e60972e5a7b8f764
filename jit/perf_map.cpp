#include "jit/perf_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "jit/byte_writer.h"
#include "jit/dwarf_cfi.h"
#include "runtime/errors.h"

namespace jit {

namespace {

// jitdump-specification.txt
constexpr uint32_t kJitdumpMagic = 0x4A695444;  // "JiTD"
constexpr uint32_t kJitdumpVersion = 1;
constexpr uint32_t kElfMachX86_64 = 62;         // EM_X86_64
enum : uint32_t { kJitCodeLoad = 0, kJitCodeMove = 1, kJitCodeDebugInfo = 2, kJitCodeClose = 3, kJitCodeUnwindingInfo = 4 };

struct State {
  std::mutex mutex;
  bool enabled = false;  // enable() ran and close() has not
  FILE* map = nullptr;
  int dump_fd = -1;
  void* marker = nullptr;
  size_t marker_size = 0;
  uint64_t code_index = 0;
  std::string map_path, dump_path;
};
State& state() {
  static State* s = new State();  // never destroyed: compiler threads may record during exit
  return *s;
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// A record under construction: little-endian fields appended in order.
struct Buf : ByteWriter {
  // Record header: id, total size (patched by finish), timestamp.
  void header(uint32_t id) {
    put(id);
    put(uint32_t(0));
    put(monotonic_ns());
  }
  void finish() {
    uint32_t size = uint32_t(b.size());
    std::memcpy(b.data() + 4, &size, 4);
  }
};

bool write_all(int fd, const std::vector<uint8_t>& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

void warn(const char* what, const std::string& path) {
  std::fprintf(stderr, "minivm: --perf-map: cannot %s '%s': %s\n", what, path.c_str(), std::strerror(errno));
}

// Where jit-PID.dump goes: $MINIVM_JITDUMP_DIR as given, else perf's convention for JIT
// dumps (its jvmti agent's): a fresh directory BASE/.debug/jit/minivm-jit-YYYYMMDD.XXXXXXXX
// with BASE = $JITDUMPDIR, else $HOME. `perf inject --jit` finds the dump through its
// recorded mmap wherever it is, and writes its jitted-PID-N.so files beside it, so neither
// lands in the directory the program was run from (perf's agent falls back to that one
// without a HOME; here it is /tmp, which is never a source tree). Empty with errno set
// when a directory cannot be made; `tried` is then the one that failed.
std::string jitdump_directory(std::string& tried) {
  const char* own = std::getenv("MINIVM_JITDUMP_DIR");
  if (own != nullptr && *own != '\0') return own;
  const char* base = std::getenv("JITDUMPDIR");
  if (base == nullptr || *base == '\0') base = std::getenv("HOME");
  if (base == nullptr || *base == '\0') base = "/tmp";
  for (const char* sub : {"/.debug", "/.debug/jit"}) {
    tried = std::string(base) + sub;
    if (mkdir(tried.c_str(), 0755) != 0 && errno != EEXIST) return "";
  }
  time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char day[16];
  std::strftime(day, sizeof day, "%Y%m%d", &local);
  tried += std::string("/minivm-jit-") + day + ".XXXXXXXX";
  std::vector<char> name(tried.begin(), tried.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) return "";
  return name.data();
}

size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

}  // namespace

void perf_support_enable() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.enabled) return;
  pid_t pid = getpid();

  s.map_path = "/tmp/perf-" + std::to_string(pid) + ".map";
  s.map = std::fopen(s.map_path.c_str(), "w");
  if (s.map == nullptr) {
    warn("create", s.map_path);
    s.map_path.clear();
  }

  std::string tried;
  std::string dir = jitdump_directory(tried);
  s.dump_path = dir.empty() ? tried : dir + "/jit-" + std::to_string(pid) + ".dump";
  s.dump_fd = dir.empty() ? -1 : ::open(s.dump_path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
  if (s.dump_fd < 0) {
    warn("create", s.dump_path);
    s.dump_path.clear();
  } else {
    Buf h;
    h.put(kJitdumpMagic);
    h.put(kJitdumpVersion);
    h.put(uint32_t(40));  // total_size of this header
    h.put(kElfMachX86_64);
    h.put(uint32_t(0));   // pad1
    h.put(uint32_t(pid));
    h.put(monotonic_ns());
    h.put(uint64_t(0));   // flags: CLOCK_MONOTONIC timestamps, not TSC
    if (!write_all(s.dump_fd, h.b)) warn("write", s.dump_path);
    // The marker: perf records executable mappings of files, and `perf inject --jit`
    // recognises this one by its name, jit-PID.dump.
    s.marker_size = size_t(sysconf(_SC_PAGESIZE));
    s.marker = mmap(nullptr, s.marker_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, s.dump_fd, 0);
    if (s.marker == MAP_FAILED) {
      warn("map", s.dump_path);
      s.marker = nullptr;
    }
  }
  s.enabled = true;
  runtime::add_exit_hook(&perf_support_close);
}

bool perf_support_enabled() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.enabled;
}

void perf_record_code(const std::string& name, uintptr_t begin, size_t size, const std::string& source_file,
                      const std::vector<std::pair<uint32_t, uint32_t>>& pc_offset_to_line,
                      const std::vector<runtime::FrameRow>& frame_rows, bool signal_frame) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.enabled) return;
  if (s.map != nullptr) {
    std::fprintf(s.map, "%lx %zx %s\n", static_cast<unsigned long>(begin), size, name.c_str());
    std::fflush(s.map);  // complete even if the process dies
  }
  if (s.dump_fd < 0) return;
  Buf out;
  // JIT_CODE_DEBUG_INFO first: perf attaches it to the next JIT_CODE_LOAD.
  if (!pc_offset_to_line.empty()) {
    // perf's line table ends its sequence at the last entry's address, so that entry
    // would cover no code: close the table with the last line again at the end.
    std::vector<std::pair<uint32_t, uint32_t>> entries = pc_offset_to_line;
    if (entries.back().first < size) entries.push_back({uint32_t(size), entries.back().second});
    out.header(kJitCodeDebugInfo);
    out.put(uint64_t(begin));
    out.put(uint64_t(entries.size()));
    for (auto& [off, line] : entries) {
      out.put(uint64_t(begin + off));  // absolute address
      out.put(uint32_t(line));
      out.put(uint32_t(0));            // discriminator
      out.str(source_file);
    }
    while (out.b.size() % 8 != 0) out.b.push_back(0);  // padding, counted in total_size
    out.finish();
    if (!write_all(s.dump_fd, out.b)) warn("write", s.dump_path);
    out.b.clear();
  }
  if (std::vector<uint8_t> data = perf_unwinding_info(size, frame_rows, signal_frame); !data.empty()) {
    // Also attached to the next JIT_CODE_LOAD.
    out.header(kJitCodeUnwindingInfo);
    out.put(uint64_t(data.size()));       // unwinding_size
    out.put(uint64_t(20));                // eh_frame_hdr_size: perf_unwinding_info's header
    out.put(uint64_t(data.size()));       // mapped_size: what follows the code in perf's view
    out.bytes(data.data(), data.size());
    while (out.b.size() % 8 != 0) out.b.push_back(0);
    out.finish();
    if (!write_all(s.dump_fd, out.b)) warn("write", s.dump_path);
    out.b.clear();
  }
  out.header(kJitCodeLoad);
  out.put(uint32_t(getpid()));
  out.put(uint32_t(gettid()));
  out.put(uint64_t(begin));  // vma
  out.put(uint64_t(begin));  // code_addr
  out.put(uint64_t(size));
  out.put(uint64_t(s.code_index++));
  out.str(name);
  out.bytes(reinterpret_cast<const void*>(begin), size);
  out.finish();
  if (!write_all(s.dump_fd, out.b)) warn("write", s.dump_path);
}

size_t perf_unwinding_info_offset(size_t code_size) { return align8(code_size); }

// The .eh_frame (its FDE's pc relative to itself, as if at perf_unwinding_info_offset), then
// the .eh_frame_hdr: its pointer to the .eh_frame relative to that field, its one table
// entry (first pc, FDE) relative to the header itself.
std::vector<uint8_t> perf_unwinding_info(size_t code_size, const std::vector<runtime::FrameRow>& frame_rows,
                                         bool signal_frame) {
  if (!frame_rows_valid(code_size, frame_rows)) return {};
  constexpr uint8_t kPcrelSdata4 = 0x1b, kUdata4 = 0x03, kDatarelSdata4 = 0x3b;  // DW_EH_PE_*
  // Encoded for code at an arbitrary address: the relative pointers come out the same.
  constexpr uintptr_t kAnywhere = uintptr_t(1) << 32;
  size_t at = perf_unwinding_info_offset(code_size);
  std::vector<uint8_t> eh_frame =
      encode_eh_frame(kAnywhere, kAnywhere + code_size, frame_rows, signal_frame, kAnywhere + at);
  Buf u;
  u.bytes(eh_frame.data(), eh_frame.size());
  int64_t header = int64_t(u.b.size());  // the header's offset from the .eh_frame
  u.b.insert(u.b.end(), {1, kPcrelSdata4, kUdata4, kDatarelSdata4});  // version and encodings
  u.put(int32_t(-(header + 4)));                                      // the .eh_frame
  u.put(uint32_t(1));                                                 // one FDE
  u.put(int32_t(-(int64_t(at) + header)));                            // its first pc
  uint32_t cie_length;
  std::memcpy(&cie_length, eh_frame.data(), 4);
  u.put(int32_t(int64_t(cie_length) + 4 - header));                   // the FDE, after the CIE
  return u.b;
}

void perf_support_close() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.enabled) return;
  s.enabled = false;
  if (s.map != nullptr) {
    std::fclose(s.map);
    s.map = nullptr;
  }
  if (s.dump_fd >= 0) {
    Buf out;
    out.header(kJitCodeClose);
    out.finish();
    write_all(s.dump_fd, out.b);
    if (s.marker != nullptr) munmap(s.marker, s.marker_size);
    s.marker = nullptr;
    ::close(s.dump_fd);
    s.dump_fd = -1;
  }
}

std::string perf_map_path() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.map_path;
}

std::string perf_jitdump_path() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.dump_path;
}

}  // namespace jit
