#include "jit/intrinsic_stubs.h"

#include <asmjit/x86.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "runtime/invariant.h"

namespace jit {

using namespace asmjit;
using namespace asmjit::x86;

int32_t IntrinsicStub::ret_sp_offset_at(uintptr_t pc) const {
  // Checked in every build (the answer would be a wild stack offset); may run in a signal
  // handler (a sampler asking), which invariant_failed allows.
  if (!blob.contains(pc))
    runtime::invariant_failed("ret_sp_offset_at is asked about a pc inside the stub", "blob.contains(pc)", __FILE__,
                              __LINE__);
  uint32_t off = uint32_t(pc - blob.begin);
  for (const StubFrameRange& r : frame)  // two or three ranges at most: a scan is fine
    if (off < r.end_offset) return r.ret_sp_offset;
  runtime::invariant_failed("a stub's frame ranges cover the whole stub", "off < end_offset of some range", __FILE__,
                            __LINE__);
}

namespace {

// IEEE 802.3 CRC-32, reflected (zlib's). Static data, not in the code buffer, so every
// byte of a stub's blob is an instruction and the frame table speaks only of pcs.
alignas(64) constexpr std::array<uint32_t, 256> kCrcTable = [] {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}();

// Builds a stub's frame table while it is emitted. The table starts at offset 0 with the
// return address at [rsp]; a stub that moves rsp (a push, a pop, a second exit path after
// a `ret`) calls ret_sp_offset(n) right after the instruction that moved it. Today's
// stubs never do: one range covers them.
class FrameRecorder {
 public:
  explicit FrameRecorder(Assembler& a) : a_(a) {}
  void ret_sp_offset(int32_t off) {
    uint32_t here = uint32_t(a_.offset());
    if (ranges_.back().begin_offset == here) ranges_.pop_back();  // no empty ranges
    if (!ranges_.empty() && ranges_.back().ret_sp_offset == off) return;
    ranges_.push_back({here, 0, off});
  }
  std::vector<StubFrameRange> finish(uint32_t size) {
    for (size_t i = 0; i + 1 < ranges_.size(); i++) ranges_[i].end_offset = ranges_[i + 1].begin_offset;
    ranges_.back().end_offset = size;
    return ranges_;
  }

 private:
  Assembler& a_;
  std::vector<StubFrameRange> ranges_{{0, 0, 0}};
};

// void arraycopy(const int64_t* src rdi, int64_t* dst rsi, int64_t count rdx)
// Forward (`rep movsq`, fast for large counts) when dst <= src or the ranges are
// disjoint; otherwise dst lies inside the source above src and the copy must go
// highest element first. Backward is a plain loop rather than `std; rep movsq; cld`:
// DF stays clear throughout, so nothing interrupted mid-copy ever sees it set.
void emit_arraycopy(Assembler& a, FrameRecorder&) {
  Label forward = a.newLabel(), backward = a.newLabel();
  a.mov(rcx, rdx);
  a.cmp(rsi, rdi);
  a.jbe(forward);                     // dst <= src (unsigned)
  a.lea(rax, ptr(rdi, rdx, 3));       // src + count
  a.cmp(rsi, rax);
  a.jb(backward);                     // src < dst < src + count: overlap, dst above
  a.bind(forward);
  a.xchg(rsi, rdi);                   // movsq reads [rsi], writes [rdi]
  a.rep().movsq();                   // rcx elements
  a.ret();
  a.bind(backward);                   // count > 0 here, since src < dst < src + count
  Label loop = a.newLabel();
  a.bind(loop);
  a.mov(rax, qword_ptr(rdi, rcx, 3, -8));
  a.mov(qword_ptr(rsi, rcx, 3, -8), rax);
  a.dec(rcx);
  a.jnz(loop);
  a.ret();
}

// uint32_t crc32(const int64_t* data rdi, int64_t count rsi)
// The byte-at-a-time table loop (Sarwate). Not the SSE4.2 `crc32` instruction: that
// computes CRC-32C (Castagnoli), a different polynomial.
void emit_crc32(Assembler& a, FrameRecorder&) {
  Label loop = a.newLabel(), done = a.newLabel();
  a.mov(eax, 0xFFFFFFFFu);
  a.test(rsi, rsi);
  a.jz(done);
  a.mov(rcx, imm(reinterpret_cast<uint64_t>(kCrcTable.data())));
  a.bind(loop);
  a.movzx(edx, byte_ptr(rdi));        // the element's low byte (little endian)
  a.xor_(edx, eax);
  a.movzx(edx, dl);                   // (crc ^ byte) & 0xff, without a partial-register write
  a.shr(eax, 8);
  a.xor_(eax, dword_ptr(rcx, rdx, 2));
  a.add(rdi, 8);
  a.dec(rsi);
  a.jnz(loop);
  a.bind(done);
  a.not_(eax);
  a.ret();
}

class AbortOnError : public ErrorHandler {
 public:
  void handleError(Error err, const char* message, BaseEmitter*) override {
    std::fprintf(stderr, "minivm: internal error: stub generation failed: %s (%u)\n", message, err);
    std::abort();
  }
};

void generate(IntrinsicStub& stub, const char* name, void (*emit)(Assembler&, FrameRecorder&)) {
  // Never destroyed: detached Mini threads may still be inside a stub while the process
  // exits, and the blob registry keeps pointers to the blobs.
  static JitRuntime* rt = new JitRuntime();
  AbortOnError on_error;
  CodeHolder code;
  code.init(rt->environment());
  code.setErrorHandler(&on_error);
  Assembler a(&code);
  FrameRecorder frame(a);
  emit(a, frame);
  void* fn = nullptr;
  if (rt->add(&fn, &code) != kErrorOk) {
    std::fprintf(stderr, "minivm: internal error: cannot install %s\n", name);
    std::abort();
  }
  stub.frame = frame.finish(uint32_t(code.codeSize()));
  stub.blob.name = name;
  stub.blob.kind = runtime::BlobKind::stub;
  stub.blob.begin = reinterpret_cast<uintptr_t>(fn);
  stub.blob.end = stub.blob.begin + code.codeSize();
  // The same frame table, for samplers that read code blobs through the runtime.
  stub.blob.frame_name = std::string(name).substr(0, std::string(name).find("_stub"));
  for (const StubFrameRange& r : stub.frame)
    stub.blob.stub_frames.push_back({stub.blob.begin + r.begin_offset, stub.blob.begin + r.end_offset, r.ret_sp_offset});
  runtime::register_blob(&stub.blob);
}

}  // namespace

const IntrinsicStubs& intrinsic_stubs() {
  // A function-local static: C++ runs the generation once even when threads race here.
  // Leaked on purpose, like the code it describes.
  static const IntrinsicStubs* stubs = [] {
    auto* s = new IntrinsicStubs();
    generate(s->arraycopy, "arraycopy_stub", emit_arraycopy);
    generate(s->crc32, "crc32_stub", emit_crc32);
    return s;
  }();
  return *stubs;
}

}  // namespace jit
