// The intrinsic stubs (jit/intrinsic_stubs.h): results against memmove and the runtime's
// CRC-32, accesses bounded by guard pages, the frame table, blob registration, and the
// register contract checked by an asmjit trampoline.
#include <asmjit/x86.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "jit/intrinsic_stubs.h"
#include "runtime/natives.h"

using jit::intrinsic_stubs;
using jit::IntrinsicStub;

namespace {

// Copies buf[src, src+count) to buf[dst, dst+count) with the stub and with memmove on a
// copy of buf, and compares the whole buffers (so writes outside the range show).
void check_copy_within(std::vector<int64_t> buf, size_t src, size_t dst, size_t count) {
  std::vector<int64_t> expected = buf;
  std::memmove(expected.data() + dst, expected.data() + src, count * 8);
  intrinsic_stubs().arraycopy_fn()(buf.data() + src, buf.data() + dst, int64_t(count));
  INFO("src " << src << " dst " << dst << " count " << count);
  REQUIRE(buf == expected);
}

std::vector<int64_t> numbered(size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = int64_t(i * 0x100000001ull + 7);
  return v;
}

// `n` elements (n * 8 a multiple of the page size) between two PROT_NONE pages: a stub
// reading or writing one element before or after its arrays faults.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t n) : n_(n) {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    REQUIRE(n * 8 % page_ == 0);
    len_ = n * 8 + 2 * page_;
    map_ = static_cast<char*>(mmap(nullptr, len_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(map_ != MAP_FAILED);
    REQUIRE(mprotect(map_ + page_, n * 8, PROT_READ | PROT_WRITE) == 0);
  }
  ~GuardedBuffer() { munmap(map_, len_); }
  int64_t* data() const { return reinterpret_cast<int64_t*>(map_ + page_); }
  size_t size() const { return n_; }

 private:
  size_t n_, page_, len_;
  char* map_;
};

// Calls a stub on a stack of its own, with rbx, rbp, r12-r15 and xmm8-xmm15 set to known
// values, and records what they hold after the call, the flags, and the stack.
struct CallRecord {
  uint64_t fn, arg0, arg1, arg2;
  uint64_t stack_top;       // rsp the trampoline switches to; it pushes the record there
  uint64_t result;
  uint64_t gp_after[6];     // rbx, rbp, r12, r13, r14, r15
  uint64_t xmm_after[8];    // low qwords of xmm8..xmm15
  uint64_t rflags;
  uint64_t saved_rsp;
};

const asmjit::x86::Gp kPreserved[6] = {asmjit::x86::rbx, asmjit::x86::rbp, asmjit::x86::r12,
                                       asmjit::x86::r13, asmjit::x86::r14, asmjit::x86::r15};
uint64_t gp_magic(int i) { return 0x5AFE000000000000ull + 0x1111111111ull * uint64_t(i + 1); }
uint64_t xmm_magic(int i) { return 0xC0DE000000000000ull + 0x2222222222ull * uint64_t(i + 1); }

using TrampolineFn = void (*)(CallRecord*);

TrampolineFn trampoline() {
  using namespace asmjit;
  using namespace asmjit::x86;
  static TrampolineFn fn = [] {
    static JitRuntime rt;
    CodeHolder code;
    code.init(rt.environment());
    Assembler a(&code);
    for (const Gp& r : kPreserved) a.push(r);
    a.mov(qword_ptr(rdi, offsetof(CallRecord, saved_rsp)), rsp);
    a.mov(rsp, qword_ptr(rdi, offsetof(CallRecord, stack_top)));
    a.push(rdi);  // the record, found again after the call
    a.mov(r11, qword_ptr(rdi, offsetof(CallRecord, fn)));
    a.mov(rsi, qword_ptr(rdi, offsetof(CallRecord, arg1)));
    a.mov(rdx, qword_ptr(rdi, offsetof(CallRecord, arg2)));
    a.mov(rdi, qword_ptr(rdi, offsetof(CallRecord, arg0)));
    for (int i = 0; i < 6; i++) a.mov(kPreserved[i], imm(gp_magic(i)));
    for (int i = 0; i < 8; i++) {
      a.mov(rax, imm(xmm_magic(i)));
      a.movq(xmm(8 + i), rax);
    }
    a.call(r11);
    a.pop(rcx);
    a.mov(qword_ptr(rcx, offsetof(CallRecord, result)), rax);
    for (int i = 0; i < 6; i++) a.mov(qword_ptr(rcx, offsetof(CallRecord, gp_after) + 8 * i), kPreserved[i]);
    for (int i = 0; i < 8; i++) a.movq(qword_ptr(rcx, offsetof(CallRecord, xmm_after) + 8 * i), xmm(8 + i));
    a.pushfq();
    a.pop(rax);
    a.mov(qword_ptr(rcx, offsetof(CallRecord, rflags)), rax);
    a.mov(rsp, qword_ptr(rcx, offsetof(CallRecord, saved_rsp)));
    for (int i = 5; i >= 0; i--) a.pop(kPreserved[i]);
    a.ret();
    void* p = nullptr;
    REQUIRE(rt.add(&p, &code) == kErrorOk);
    return reinterpret_cast<TrampolineFn>(p);
  }();
  return fn;
}

int32_t max_ret_sp_offset(const IntrinsicStub& s) {
  int32_t m = 0;
  for (auto& r : s.frame) m = std::max(m, r.ret_sp_offset);
  return m;
}

// Runs `stub` through the trampoline and checks the contract; returns the result (rax).
uint64_t call_checked(const IntrinsicStub& stub, uint64_t a0, uint64_t a1, uint64_t a2, bool misalign) {
  constexpr uint64_t kCanary = 0xCA9A11CA9A11CA9Aull;
  constexpr size_t kWords = 1024;
  std::vector<uint64_t> stack(kWords, kCanary);
  // Top 16-aligned, or off by 8: a stub must not depend on the alignment.
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack.data() + kWords - 4) & ~uintptr_t(15)) - (misalign ? 8 : 0);
  CallRecord rec{};
  rec.fn = stub.blob.begin;
  rec.arg0 = a0;
  rec.arg1 = a1;
  rec.arg2 = a2;
  rec.stack_top = top;
  trampoline()(&rec);
  for (int i = 0; i < 6; i++) {
    INFO("preserved register #" << i << " (rbx, rbp, r12..r15)");
    CHECK(rec.gp_after[i] == gp_magic(i));
  }
  for (int i = 0; i < 8; i++) {
    INFO("xmm" << 8 + i);
    CHECK(rec.xmm_after[i] == xmm_magic(i));
  }
  CHECK((rec.rflags & 0x400) == 0);  // DF
  // The stub's return address was at top - 16 (below the pushed record); nothing under
  // it may change but the stub's own recorded pushes.
  uintptr_t lowest_allowed = top - 16 - uintptr_t(max_ret_sp_offset(stub));
  size_t intact = 0, below = 0;
  for (size_t i = 0; i < kWords; i++) {
    if (reinterpret_cast<uintptr_t>(&stack[i]) >= lowest_allowed) break;
    below++;
    intact += stack[i] == kCanary;
  }
  CHECK(below > 900);
  CHECK(intact == below);
  return rec.result;
}

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

}  // namespace

TEST_CASE("stubs: arraycopy without overlap, and count 0") {
  auto copy = intrinsic_stubs().arraycopy_fn();
  std::vector<int64_t> src = numbered(100), dst(100, -1);
  copy(src.data(), dst.data(), 100);
  CHECK(dst == src);
  // Disjoint with dst above src, and dst below src: both must copy exactly.
  check_copy_within(numbered(64), 0, 32, 32);
  check_copy_within(numbered(64), 40, 0, 24);
  check_copy_within(numbered(64), 0, 60, 3);
  // Count 0 touches nothing, whatever the positions.
  check_copy_within(numbered(16), 3, 5, 0);
  check_copy_within(numbered(16), 5, 3, 0);
  check_copy_within(numbered(16), 4, 4, 0);
  copy(nullptr, nullptr, 0);
}

TEST_CASE("stubs: arraycopy with overlap in both directions") {
  SECTION("backward: dst above src inside the source") {
    check_copy_within(numbered(64), 0, 1, 63);
    check_copy_within(numbered(64), 10, 20, 30);
    check_copy_within(numbered(64), 0, 63, 1);
  }
  SECTION("forward: dst below src inside the source") {
    check_copy_within(numbered(64), 1, 0, 63);
    check_copy_within(numbered(64), 20, 10, 30);
  }
  SECTION("same position") { check_copy_within(numbered(64), 7, 7, 50); }
  SECTION("large counts") {
    const size_t n = 100000;
    check_copy_within(numbered(n + 1000), 0, 1000, n);
    check_copy_within(numbered(n + 1000), 1000, 0, n);
    check_copy_within(numbered(n + 1), 0, 1, n);
    check_copy_within(numbered(n + 1), 1, 0, n);
    check_copy_within(numbered(2 * n), 0, n, n);
  }
}

TEST_CASE("stubs: arraycopy at random positions matches memmove") {
  std::mt19937_64 rng(20240518);
  for (int iter = 0; iter < 2000; iter++) {
    size_t n = 1 + rng() % 300;
    std::vector<int64_t> buf(n);
    for (auto& x : buf) x = int64_t(rng());
    size_t count = rng() % (n + 1);
    size_t src = rng() % (n - count + 1), dst = rng() % (n - count + 1);
    check_copy_within(std::move(buf), src, dst, count);
  }
}

TEST_CASE("stubs: crc32 matches zlib's check value and the runtime's CRC-32") {
  auto crc = intrinsic_stubs().crc32_fn();
  const char* text = "123456789";
  int64_t data[9];
  for (int i = 0; i < 9; i++) data[i] = text[i] | int64_t(0x7EADBEEF00ull * (i + 1)) | INT64_MIN;  // high bits ignored
  CHECK(crc(data, 9) == 0xCBF43926u);
  CHECK(crc(data, 0) == 0u);
  CHECK(crc(nullptr, 0) == 0u);

  std::mt19937_64 rng(31337);
  std::vector<int64_t> v(300);
  for (int round = 0; round < 4; round++) {
    for (auto& x : v) x = int64_t(rng());
    for (size_t n = 0; n <= v.size(); n++) {
      INFO("length " << n);
      REQUIRE(crc(v.data(), int64_t(n)) == runtime::crc32_of_low_bytes(v.data(), int64_t(n)));
    }
  }
  std::vector<int64_t> big(100000);
  for (auto& x : big) x = int64_t(rng());
  CHECK(crc(big.data(), int64_t(big.size())) == runtime::crc32_of_low_bytes(big.data(), int64_t(big.size())));
}

TEST_CASE("stubs: no access outside the arrays (guard pages)") {
  const auto& s = intrinsic_stubs();
  GuardedBuffer g(1024), h(1024);
  int64_t* b = g.data();
  const int64_t n = int64_t(g.size());
  for (int64_t i = 0; i < n; i++) b[i] = i;
  // Each copy spans the whole mapping, so one element too far either way faults.
  s.arraycopy_fn()(b, b + 1, n - 1);  // backward
  for (int64_t i = 1; i < n; i++) REQUIRE(b[i] == i - 1);
  s.arraycopy_fn()(b + 1, b, n - 1);  // forward overlap
  for (int64_t i = 0; i < n - 1; i++) REQUIRE(b[i] == i);
  s.arraycopy_fn()(b, h.data(), n);   // disjoint
  CHECK(std::equal(b, b + n, h.data()));
  CHECK(s.crc32_fn()(b, n) == runtime::crc32_of_low_bytes(b, n));
  CHECK(s.crc32_fn()(b + n - 5, 5) == runtime::crc32_of_low_bytes(b + n - 5, 5));
}

TEST_CASE("stubs: the frame table covers every pc once, with the return address at [rsp] on entry") {
  const auto& s = intrinsic_stubs();
  for (const IntrinsicStub* stub : {&s.arraycopy, &s.crc32}) {
    INFO(stub->blob.name);
    const runtime::CodeBlob& b = stub->blob;
    REQUIRE(b.end > b.begin);
    REQUIRE(!stub->frame.empty());
    CHECK(stub->frame.front().begin_offset == 0);
    CHECK(stub->frame.back().end_offset == b.end - b.begin);
    for (size_t i = 0; i < stub->frame.size(); i++) {
      const auto& r = stub->frame[i];
      CHECK(r.begin_offset < r.end_offset);
      if (i > 0) CHECK(r.begin_offset == stub->frame[i - 1].end_offset);
      CHECK(r.ret_sp_offset >= 0);
      CHECK(r.ret_sp_offset % 8 == 0);
    }
    CHECK(stub->ret_sp_offset_at(b.begin) == 0);
    for (uintptr_t pc = b.begin; pc < b.end; pc++) {
      uint32_t off = uint32_t(pc - b.begin);
      size_t covering = 0;
      int32_t expected = -1;
      for (auto& r : stub->frame)
        if (off >= r.begin_offset && off < r.end_offset) covering++, expected = r.ret_sp_offset;
      REQUIRE(covering == 1);
      REQUIRE(stub->ret_sp_offset_at(pc) == expected);
    }
    // Frameless and push-free today: one range.
    CHECK(stub->frame.size() == 1);
  }
}

TEST_CASE("stubs: ret_sp_offset_at aborts on a pc outside the stub") {
  const IntrinsicStub& stub = intrinsic_stubs().crc32;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(2);  // keep the expected message out of the test log
    stub.ret_sp_offset_at(stub.blob.end);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

TEST_CASE("stubs: generated once, registered as stub blobs, found by pc") {
  const jit::IntrinsicStubs* seen[8];
  std::vector<std::thread> threads;
  for (auto& p : seen) threads.emplace_back([&p] { p = &intrinsic_stubs(); });
  for (auto& t : threads) t.join();
  for (auto* p : seen) CHECK(p == &intrinsic_stubs());

  const auto& s = intrinsic_stubs();
  CHECK(s.arraycopy.blob.name == "arraycopy_stub");
  CHECK(s.crc32.blob.name == "crc32_stub");
  for (const IntrinsicStub* stub : {&s.arraycopy, &s.crc32}) {
    INFO(stub->blob.name);
    const runtime::CodeBlob& b = stub->blob;
    CHECK(b.kind == runtime::BlobKind::stub);
    CHECK(b.polls.empty());  // a stub never polls: it is a leaf that finishes
    CHECK(runtime::find_blob(b.begin) == &b);
    CHECK(runtime::find_blob(b.end - 1) == &b);
    CHECK(runtime::find_blob(b.end) != &b);
    size_t same_name = 0;
    for (const runtime::CodeBlob* c : runtime::all_blobs()) same_name += c->name == b.name;
    CHECK(same_name == 1);
  }
}

TEST_CASE("stubs: calls preserve rbx, rbp, r12-r15, xmm8-15, leave DF clear, write nothing below rsp") {
  const auto& s = intrinsic_stubs();
  for (bool misalign : {false, true}) {
    INFO("misaligned stack: " << misalign);
    std::vector<int64_t> buf = numbered(200), expected = buf;
    std::memmove(expected.data() + 10, expected.data(), 150 * 8);
    call_checked(s.arraycopy, addr(buf.data()), addr(buf.data() + 10), 150, misalign);  // backward
    std::memmove(expected.data(), expected.data() + 30, 100 * 8);
    call_checked(s.arraycopy, addr(buf.data() + 30), addr(buf.data()), 100, misalign);  // forward
    call_checked(s.arraycopy, addr(buf.data()), addr(buf.data() + 5), 0, misalign);     // empty
    CHECK(buf == expected);

    uint64_t r = call_checked(s.crc32, addr(buf.data()), buf.size(), 0, misalign);
    CHECK(uint32_t(r) == runtime::crc32_of_low_bytes(buf.data(), int64_t(buf.size())));
    CHECK(uint32_t(call_checked(s.crc32, addr(buf.data()), 0, 0, misalign)) == 0u);
  }
}
