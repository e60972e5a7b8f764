// Intrinsic stubs: hand-written machine code for `arraycopy` and `crc32`, HotSpot's
// StubRoutines in miniature.
//
// Compiled Mini code calls a stub directly (`call`), with no thread-state transition and
// no last-Java-frame anchor: the thread stays in_java. A stub is a frameless leaf: it sets
// up no rbp frame and by default carries no frame metadata, so a sampler that interrupts
// a thread inside one cannot walk out of it (DESIGN.md: "pc in a stub without metadata").
// What would make the walk possible is recorded anyway: for every pc of a stub, where its
// return address is relative to rsp (`frame`), for `--stub-metadata` to publish.
//
// Calling convention (System V registers, so C++ may call a stub through a function
// pointer): arguments in rdi, rsi, rdx; result in eax (crc32). A stub may clobber rax,
// rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm7 and the status flags; it preserves every other
// register, leaves DF clear, needs no particular stack alignment, and touches no memory
// but its arrays (no pushes, nothing written below rsp).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/code_blob.h"

namespace jit {

// Where the return address is, for the pcs [begin_offset, end_offset) of a stub:
// at [rsp + ret_sp_offset]. Covers every pc of the stub, in order.
struct StubFrameRange {
  uint32_t begin_offset, end_offset;
  int32_t ret_sp_offset;
};

struct IntrinsicStub {
  runtime::CodeBlob blob;             // kind BlobKind::stub, registered with runtime::register_blob
  std::vector<StubFrameRange> frame;  // return-address location for every pc
  // The ret_sp_offset at `pc`; aborts if pc is outside the stub. Async-signal-safe.
  int32_t ret_sp_offset_at(uintptr_t pc) const;
};

using ArraycopyStubFn = void (*)(const int64_t* src, int64_t* dst, int64_t count);
using Crc32StubFn = uint32_t (*)(const int64_t* data, int64_t count);

struct IntrinsicStubs {
  // void arraycopy(const int64_t* src, int64_t* dst, int64_t count): memmove of `count`
  // 8-byte elements, correct for overlap in both directions. count >= 0, checked by the caller.
  IntrinsicStub arraycopy;
  // uint32_t crc32(const int64_t* data, int64_t count): CRC-32 (IEEE 802.3, zlib's) of
  // the low 8 bits of each element, returned in eax.
  IntrinsicStub crc32;

  ArraycopyStubFn arraycopy_fn() const { return reinterpret_cast<ArraycopyStubFn>(arraycopy.blob.begin); }
  Crc32StubFn crc32_fn() const { return reinterpret_cast<Crc32StubFn>(crc32.blob.begin); }
};

// Generated and registered on first use (thread-safe); alive for the rest of the process.
const IntrinsicStubs& intrinsic_stubs();

}  // namespace jit
