// Frame rows and the DWARF unwind info made from them (runtime/frame_recorder.h,
// jit/dwarf_cfi.h, jit/code_registration.h): LLVM libunwind walks from C++
// called by Mini code (a poll client, run from the safepoint blob) through interpreted and
// compiled frames and the call stub to the thread's start; and from signals that land at
// arbitrary pcs of Mini code, the walk is exact.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "jit/baseline_compiler.h"
#include "jit/code_registration.h"
#include "jit/dwarf_cfi.h"
#include "jit/native_walk.h"
#include "runtime/frame.h"
#include "runtime/poll.h"
#include "runtime/return_barrier.h"
#include "runtime/stack_walker.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

// The interpreter, call stub and safepoint blob described to libunwind (as the CLI does).
void ensure_runtime_unwind_info() {
  fixture_vm();
  std::vector<jit::CodeRange> templates;
  for (auto& t : interp::TemplateInterpreter::get().templates()) templates.push_back({t.name, t.offset, t.size});
  jit::register_runtime_blobs_with_tools(templates);
  REQUIRE(jit::unwind_support_available());
}

size_t function_index(const std::string& name) {
  auto& fns = fixture_vm().module().functions;
  for (size_t i = 0; i < fns.size(); i++)
    if (fns[i]->name == name) return i;
  FAIL("no fixture function " << name);
  return 0;
}

// Switches entries to compiled code for the scope of a test (compile_method registers
// the unwind info itself), then back to the interpreter.
struct Compiled {
  std::vector<std::pair<Method*, void*>> saved;
  void compile(size_t fn) {
    Method* m = fixture_vm().method(fn);
    saved.push_back({m, m->entry.load()});
    m->entry.store(reinterpret_cast<void*>(jit::compile_method(m, {})->begin));
  }
  ~Compiled() {
    for (auto& [m, e] : saved) m->entry.store(e);
  }
};

const void* object_base(uintptr_t pc) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0) return nullptr;
  return info.dli_fbase;
}
std::string object_name(uintptr_t pc) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// What a poll client saw: libunwind's walk and the VM's own stack walk.
struct PollWalk : PollClient {
  std::atomic<bool> done{false};
  std::vector<jit::NativeFrame> frames = std::vector<jit::NativeFrame>(256);
  jit::NativeWalk walk;
  std::vector<Frame> mini;
  void on_poll(Thread* t) override {
    if (done.load()) return;
    walk = jit::walk_native_stack(frames.data(), frames.size());
    StackWalker w(t);
    Frame f;
    while (w.next(f))
      if (f.kind != FrameKind::inlined) mini.push_back(f);
    done = true;
  }
};

// Runs fn(arg) on a new thread whose first poll traps, walking from the poll client.
void walk_at_first_poll(size_t fn, int64_t arg, PollWalk& client) {
  register_poll_client(&client);
  Thread* t = fixture_vm().start_thread(fixture_vm().method(fn), &arg, /*poll_armed=*/true);
  fixture_vm().join_thread(t);
  unregister_poll_client(&client);
  REQUIRE(client.done.load());
}

// The walk must be: C++ (the poll client and the poll handler), the safepoint blob, the
// Mini frames `expected` (top first: blob kind and function name), the call stub, then
// C++ down to the thread's start in libc; the Mini frames' fps are the VM walker's.
void check_walk(const PollWalk& c, const std::vector<std::pair<BlobKind, std::string>>& expected) {
  REQUIRE(c.walk.end == jit::WalkEnd::end_of_stack);
  size_t n = c.walk.count, i = 0;
  INFO("frames: " << n);
  while (i < n && find_blob(c.frames[i].pc) == nullptr) i++;
  REQUIRE(i >= 2);  // on_poll, minivm_handle_poll
  REQUIRE(i < n);
  REQUIRE(find_blob(c.frames[i].pc)->kind == BlobKind::safepoint_blob);
  i++;
  REQUIRE(c.mini.size() == expected.size());
  for (size_t k = 0; k < expected.size(); k++, i++) {
    INFO("mini frame " << k);
    REQUIRE(i < n);
    const CodeBlob* b = find_blob(c.frames[i].pc);
    REQUIRE(b != nullptr);
    CHECK(b->kind == expected[k].first);
    if (b->kind == BlobKind::compiled) CHECK(b->name == expected[k].second);
    CHECK(c.mini[k].method->function->name == expected[k].second);
    CHECK(c.frames[i].fp == c.mini[k].pos.fp);
  }
  REQUIRE(i < n);
  const CodeBlob* stub = find_blob(c.frames[i].pc);
  REQUIRE(stub != nullptr);
  CHECK(stub->kind == BlobKind::call_stub);
  i++;
  REQUIRE(i + 1 < n);  // call_mini, the thread's entry, ..., clone
  for (size_t k = i; k < n; k++) CHECK(find_blob(c.frames[k].pc) == nullptr);
  CHECK(object_base(c.frames[i].pc) == object_base(reinterpret_cast<uintptr_t>(&check_walk)));  // call_mini
  CHECK(object_name(c.frames[n - 1].pc).find("libc.so") != std::string::npos);               // clone3
}

}  // namespace

TEST_CASE("unwind: every generator describes its frames from its first pc") {
  ensure_runtime_unwind_info();
  const auto& ti = interp::TemplateInterpreter::get();
  CHECK(ti.blob().frame_rows.size() > 10);  // method entry, overflow path, returns, OSR jumps
  CHECK(ti.blob().frame_rows.front().offset == 0);
  for (const CodeBlob* b : all_blobs()) {
    if (b->kind == BlobKind::call_stub) {
      REQUIRE(!b->frame_rows.empty());
      CHECK(b->frame_rows.front().offset == 0);
      CHECK(b->frame_rows.front().cfa == FrameRow::Cfa::rsp);
      // rbx and r12..r15 are saved below the caller's rbp.
      size_t saved = 0;
      for (int16_t off : b->frame_rows.back().saved) saved += off != 0;
      CHECK(saved == 0);  // by the `ret` only the return address is left
      for (const FrameRow& r : b->frame_rows) {
        size_t n = 0;
        for (int16_t off : r.saved) n += off != 0;
        saved = std::max(saved, n);
      }
      CHECK(saved == 5);
    }
    if (b->kind == BlobKind::safepoint_blob) {
      REQUIRE(!b->frame_rows.empty());
      CHECK(b->frame_rows.front().cfa_offset == 0);  // entered with rsp as the polling frame left it
      CHECK(b->frame_rows.front().ra == FrameRow::Ra::at_resume_pc);
    }
  }
  for (const char* name : {"sum_to", "fib", "depth", "busy", "count_sum", "outer", "ping"}) {
    INFO(name);
    const CompiledCode* code = jit::compile_method(fixture_vm().method(function_index(name)), {});
    REQUIRE(code->frame_rows.front().offset == 0);
    CHECK(code->frame_rows.front().cfa == FrameRow::Cfa::rsp);
    // At the end of the prologue the frame is rbp-based.
    const FrameRow* at_fc = code->frame_row_at(code->begin + code->frame_complete_offset);
    REQUIRE(at_fc != nullptr);
    CHECK(at_fc->cfa == FrameRow::Cfa::rbp);
    CHECK(at_fc->cfa_offset == 16);
    CHECK(jit::frame_rows_valid(code->end - code->begin, code->frame_rows));
  }
}

TEST_CASE("unwind: the eh_frame encoding is one CIE, one FDE for the range and a terminator") {
  std::vector<FrameRow> rows{FrameRow::entry(), FrameRow::rbp_pushed(), FrameRow::rbp_frame()};
  rows[1].offset = 1;
  rows[2].offset = 4;
  std::vector<uint8_t> b = jit::encode_eh_frame(0x1000, 0x1100, rows);
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
  };
  uint32_t cie_len = u32(0);
  CHECK((cie_len + 4) % 8 == 0);
  CHECK(u32(4) == 0);  // CIE id
  size_t fde = 4 + cie_len;
  uint32_t fde_len = u32(fde);
  CHECK((fde_len + 4) % 8 == 0);
  CHECK(u32(fde + 4) == fde + 4);  // back to the CIE
  CHECK(u64(fde + 8) == 0x1000);
  CHECK(u64(fde + 16) == 0x100);
  REQUIRE(b.size() == fde + 4 + fde_len + 4);
  CHECK(u32(fde + 4 + fde_len) == 0);
  // advance 1; def_cfa_offset 16; offset rbp, 2; advance 3; def_cfa_register rbp
  const uint8_t program[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
  CHECK(std::memcmp(b.data() + fde + 25, program, sizeof program) == 0);
}

TEST_CASE("unwind: from a poll in interpreted code, libunwind walks every interpreter frame to the thread start") {
  ensure_runtime_unwind_info();
  PollWalk c;
  walk_at_first_poll(kDepth, 5, c);  // the first poll is depth(0)'s return
  std::vector<std::pair<BlobKind, std::string>> expected(6, {BlobKind::interpreter, "depth"});
  check_walk(c, expected);
}

TEST_CASE("unwind: from a poll in compiled code, libunwind walks every compiled frame to the thread start") {
  ensure_runtime_unwind_info();
  Compiled jit;
  jit.compile(kDepth);
  PollWalk c;
  walk_at_first_poll(kDepth, 5, c);
  std::vector<std::pair<BlobKind, std::string>> expected(6, {BlobKind::compiled, "depth"});
  check_walk(c, expected);
}

TEST_CASE("unwind: alternating compiled and interpreted frames") {
  ensure_runtime_unwind_info();
  size_t ping = function_index("ping");
  for (bool ping_compiled : {true, false}) {
    INFO("ping compiled: " << ping_compiled);
    Compiled jit;
    jit.compile(ping_compiled ? ping : function_index("pong"));
    PollWalk c;
    walk_at_first_poll(ping, 6, c);  // ping(6) -> pong(5) -> ... -> ping(0), whose return polls
    std::vector<std::pair<BlobKind, std::string>> expected;
    for (int k = 0; k <= 6; k++) {
      bool is_ping = k % 2 == 0;  // top first: ping(0), pong(1), ping(2), ...
      expected.push_back({is_ping == ping_compiled ? BlobKind::compiled : BlobKind::interpreter, is_ping ? "ping" : "pong"});
    }
    check_walk(c, expected);
  }
}

TEST_CASE("unwind: a poll in an inlined loop walks to the compiled frame that inlines it") {
  ensure_runtime_unwind_info();
  Compiled jit;
  jit.compile(kOuter);
  PollWalk c;
  walk_at_first_poll(kOuter, 100, c);
  check_walk(c, {{BlobKind::compiled, "outer"}});
}

// --- Signals at arbitrary pcs --------------------------------------------------------

namespace {

constexpr size_t kMaxSamples = 1500;
constexpr size_t kSampleDepth = 64;
struct Sample {
  jit::NativeFrame frames[kSampleDepth];
  jit::NativeWalk walk;
  const Method* method[kSampleDepth];  // interpreter frames: [fp-8], read while the stack is live
};
uintptr_t g_stack_low = 0, g_stack_high = 0;  // the sampled thread's stack
Sample* g_samples = nullptr;
std::atomic<size_t> g_sample_count{0};
std::atomic<size_t> g_outside{0};  // signals that landed outside Mini code (not walked)

void on_sigprof(int, siginfo_t*, void* uc) {
  int saved = errno;
  uintptr_t pc = uintptr_t(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
  const CodeBlob* b = find_blob(pc);
  if (b == nullptr || (b->kind != BlobKind::compiled && b->kind != BlobKind::interpreter)) {
    g_outside++;
  } else {
    size_t i = g_sample_count.load();
    if (i < kMaxSamples) {
      Sample& s = g_samples[i];
      s.walk = jit::walk_native_stack_from(uc, s.frames, kSampleDepth);
      for (size_t k = 0; k < s.walk.count; k++) {
        const CodeBlob* fb = find_blob(s.frames[k].pc);
        uintptr_t fp = s.frames[k].fp;
        bool readable = fp - 8 >= g_stack_low && fp < g_stack_high;
        s.method[k] = fb && fb->kind == BlobKind::interpreter && readable
                          ? *reinterpret_cast<const Method* const*>(fp + kInterpFrameMethodOffset)
                          : nullptr;
      }
      g_sample_count.store(i + 1);
    }
  }
  errno = saved;
}

}  // namespace

TEST_CASE("unwind: walks from signals at arbitrary pcs of Mini code are exact") {
  ensure_runtime_unwind_info();
  VM& vm = fixture_vm();
  Method* busy = vm.method(kBusy);
  Method* sum_to = vm.method(kSumTo);
  std::vector<Sample> storage(kMaxSamples);
  g_samples = storage.data();
  struct sigaction sa{}, old{};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGPROF, &sa, &old) == 0);

  // busy(n) loops calling sum_to(n): prologues, loops, polls, returns of both, in every
  // combination of compiled and interpreted.
  for (int mode = 0; mode < 4; mode++) {
    bool busy_compiled = mode & 1, sum_to_compiled = mode & 2;
    INFO("busy compiled: " << busy_compiled << ", sum_to compiled: " << sum_to_compiled);
    Compiled jit;
    if (busy_compiled) jit.compile(kBusy);
    if (sum_to_compiled) jit.compile(kSumTo);
    g_sample_count = 0;
    g_outside = 0;
    __atomic_store_n(&vm.globals()[0], 0, __ATOMIC_SEQ_CST);
    int64_t n = 3;  // short sum_to calls: many entries and returns
    Thread* t = vm.start_thread(busy, &n);
    while (t->get_state() != ThreadState::in_java) std::this_thread::yield();
    g_stack_low = t->stack_low;
    g_stack_high = t->stack_high;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (g_sample_count.load() < kMaxSamples && std::chrono::steady_clock::now() < deadline) {
      pthread_kill(t->pthread, SIGPROF);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    __atomic_store_n(&vm.globals()[0], 1, __ATOMIC_SEQ_CST);
    vm.join_thread(t);
    size_t count = g_sample_count.load();
    CHECK(count >= kMaxSamples / 2);

    // Below busy's frame nothing moves: every walk must agree on it, on the call stub
    // and on the C++ frames down to the thread start.
    std::vector<jit::NativeFrame> base;  // busy's frame, the call stub, C++ ...
    size_t bad = 0, frameless_tops = 0;
    for (size_t s = 0; s < count; s++) {
      const Sample& sm = storage[s];
      size_t k = 0;
      std::string why;
      while (k < sm.walk.count && find_blob(sm.frames[k].pc) != nullptr &&
             find_blob(sm.frames[k].pc)->kind != BlobKind::call_stub)
        k++;
      if (sm.walk.end != jit::WalkEnd::end_of_stack) why = "walk did not end cleanly";
      else if (k < 1 || k > 2) why = "expected 1 or 2 Mini frames, got " + std::to_string(k);
      else if (k == sm.walk.count || find_blob(sm.frames[k].pc) == nullptr) why = "no call stub";
      else if (object_name(sm.frames[sm.walk.count - 1].pc).find("libc.so") == std::string::npos)
        why = "does not end in libc";
      if (why.empty()) {
        std::vector<jit::NativeFrame> tail(sm.frames + k - 1, sm.frames + sm.walk.count);
        tail[0].pc = find_blob(tail[0].pc)->kind == BlobKind::compiled ? find_blob(tail[0].pc)->begin : 0;
        tail[0].sp = 0;  // the CFA-derived sp of an interpreter frame is virtual
        if (base.empty()) base = tail;
        bool same = tail.size() == base.size();
        for (size_t j = 0; same && j < tail.size(); j++)
          same = tail[j].fp == base[j].fp && (j == 0 || tail[j].pc == base[j].pc);
        if (!same) why = "frames below the top differ from the first walk";
        // The bottom Mini frame is busy's.
        const CodeBlob* b = find_blob(sm.frames[k - 1].pc);
        if (b->kind == BlobKind::compiled && b->name != "busy") why = "bottom compiled frame is " + b->name;
        if (b->kind == BlobKind::interpreter && sm.method[k - 1] != busy)
          why = "bottom interpreter frame is not busy's";
        const CodeBlob* top = find_blob(sm.frames[0].pc);
        if (k == 2 && top->kind == BlobKind::compiled && top->name != "sum_to")
          why = "top compiled frame is " + top->name;
        // Where the top frame has no rbp frame of its own (prologue, epilogue, method
        // entry) rbp is still the caller's.
        const FrameRow* row = top->frame_row_at(sm.frames[0].pc);
        bool own_frame = row != nullptr && row->cfa == FrameRow::Cfa::rbp;
        if (!own_frame) frameless_tops++;
        // An interpreted top frame is sum_to's when there are two Mini frames, busy's when one.
        if (top->kind == BlobKind::interpreter && own_frame && sm.method[0] != (k == 2 ? sum_to : busy))
          why = "top interpreter frame is not " + std::string(k == 2 ? "sum_to" : "busy") + "'s";
      }
      if (!why.empty()) {
        const CodeBlob* b = find_blob(sm.frames[0].pc);
        if (bad++ < 5)
          WARN("sample " << s << " at " << (b ? b->name : "?") << "+0x" << std::hex << (sm.frames[0].pc - (b ? b->begin : 0))
                         << std::dec << ": " << why);
      }
    }
    CHECK(bad == 0);
    // Prologues, epilogues and method entry were hit, not only rbp-framed bodies.
    INFO("samples " << count << ", in code without an rbp frame " << frameless_tops);
    CHECK(frameless_tops > 0);
  }
  sigaction(SIGPROF, &old, nullptr);
  g_samples = nullptr;
}

TEST_CASE("frame rows: every pc of the interpreter and of compiled code has an exact row for the oracle") {
  ensure_runtime_unwind_info();
  std::vector<const CodeBlob*> blobs;
  for (const char* name : {"sum_to", "fib", "depth", "busy", "count_sum", "outer", "ping"})
    blobs.push_back(jit::compile_method(fixture_vm().method(function_index(name)), {}));
  for (const CodeBlob* b : all_blobs())
    if (b->kind == BlobKind::interpreter || b->kind == BlobKind::safepoint_blob) blobs.push_back(b);
  for (const CodeBlob* b : blobs) {
    INFO(b->name);
    const std::vector<FrameRow>& rows = b->frame_rows;
    REQUIRE(!rows.empty());
    REQUIRE(rows.front().offset == 0);
    // What the oracle does not read from registers (sampler/context_walk.cpp step_out).
    size_t from_thread = 0;
    for (const FrameRow& r : rows)
      if (r.cfa == FrameRow::Cfa::anchor_sp || r.ra == FrameRow::Ra::at_resume_pc) from_thread++;
    if (b->kind == BlobKind::safepoint_blob) {
      // Only its first instruction (return address in the thread) is out of reach, and a
      // sample never sees it: the thread is marked in_vm from the trap on.
      CHECK(from_thread == 1);
      CHECK(b->frame_row_at(b->begin)->ra == FrameRow::Ra::at_resume_pc);
    } else {
      // The one exception: the out-of-line stack-overflow path after it realigned rsp,
      // whose CFA is the anchor sp it stored. The program ends there with a Mini error;
      // the oracle reports no_frame_description if it lands in it.
      CHECK(from_thread <= 1);
    }
    for (uintptr_t pc = b->begin; pc < b->end; pc++) REQUIRE(b->frame_row_at(pc) != nullptr);
    CHECK(b->frame_row_at(b->end) == nullptr);
  }
}

TEST_CASE("frame rows: the interpreter's method entry and returns keep their return address in registers") {
  ensure_runtime_unwind_info();
  const CodeBlob* interp = nullptr;
  for (const CodeBlob* b : all_blobs())
    if (b->kind == BlobKind::interpreter) interp = b;
  REQUIRE(interp != nullptr);
  bool rax = false, rcx = false, r14_params = false, at_rsp = false;
  for (const FrameRow& r : interp->frame_rows) {
    rax |= r.ra == FrameRow::Ra::in_rax;
    rcx |= r.ra == FrameRow::Ra::in_rcx;
    at_rsp |= r.ra == FrameRow::Ra::at_rsp;
    r14_params |= r.cfa == FrameRow::Cfa::r14_less_params;
  }
  CHECK(rax);
  CHECK(rcx);
  CHECK(at_rsp);
  CHECK(r14_params);
}

// --- Through the stack watermark's mark ----------------------------------------------

namespace {

// At its first poll, marks the return slot of the frame below the top one (as the stack
// watermark does, runtime/return_barrier.h) and walks with and without the thread's core.
struct MarkedWalk : PollWalk {
  std::vector<jit::NativeFrame> unaware = std::vector<jit::NativeFrame>(256);
  jit::NativeWalk unaware_walk;
  uintptr_t real_return = 0;
  void on_poll(Thread* t) override {
    if (done.load()) return;
    StackWalker w(t);
    Frame f;
    while (w.next(f))
      if (f.kind != FrameKind::inlined) mini.push_back(f);
    if (mini.size() >= 3) {
      auto* slot = reinterpret_cast<uintptr_t*>(mini[1].pos.fp + kFrameReturnPcOffset);
      real_return = *slot;
      mark_return_slot(t, slot, mini.size() - 2);
      unaware_walk = jit::walk_native_stack(unaware.data(), unaware.size());
      walk = jit::walk_native_stack(frames.data(), frames.size(), &t->core);
      unmark_return_slot(t, slot);
    }
    done = true;
  }
};

}  // namespace

TEST_CASE("unwind: a return slot holding the return barrier is walked through at its real return pc") {
  ensure_runtime_unwind_info();
  for (bool compiled : {false, true}) {
    INFO("compiled: " << compiled);
    Compiled jit;
    if (compiled) jit.compile(kDepth);
    MarkedWalk c;
    walk_at_first_poll(kDepth, 5, c);
    REQUIRE(c.real_return != 0);
    // Given the thread's core, the walk goes on at the real return pc, down to the start.
    check_walk(c, std::vector<std::pair<BlobKind, std::string>>(
                      6, {compiled ? BlobKind::compiled : BlobKind::interpreter, "depth"}));
    bool at_real_return = false;
    for (size_t i = 0; i < c.walk.count; i++) at_real_return |= c.frames[i].pc == c.real_return;
    CHECK(at_real_return);
    // Without it, libunwind stops at the barrier: the call stub is never reached.
    bool reached_call_stub = false;
    for (size_t i = 0; i < c.unaware_walk.count; i++) {
      const CodeBlob* b = find_blob(c.unaware[i].pc);
      reached_call_stub |= b != nullptr && b->kind == BlobKind::call_stub;
    }
    CHECK_FALSE(reached_call_stub);
  }
}
