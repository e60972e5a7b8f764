// `--perf-map`: makes generated code visible to Linux perf.
//
// Two files, both described in the Linux sources (tools/perf/Documentation):
//   - /tmp/perf-PID.map (jit-interface.txt): one text line per code range,
//     "START SIZE name" in hex without 0x; `perf report` reads it directly.
//   - jit-PID.dump (jitdump-specification.txt), in $MINIVM_JITDUMP_DIR, else where perf's
//     own JIT agent puts its dumps: a new directory $JITDUMPDIR/.debug/jit/minivm-jit-
//     YYYYMMDD.XXXXXXXX ($HOME when JITDUMPDIR is unset, /tmp without either), never the
//     current directory. A binary file header, then per code range a JIT_CODE_DEBUG_INFO
//     record (pc -> source line) and a JIT_CODE_UNWINDING_INFO record (its CFI) followed
//     by its JIT_CODE_LOAD record (with a copy of the code bytes), timestamps from
//     CLOCK_MONOTONIC. The file is also mapped with PROT_EXEC
//     once: that mmap is the marker `perf inject --jit` looks for in perf.data, and the
//     monotonic timestamps are why `perf record` must run with `-k 1`.
// Every write is under one mutex: the background compiler and the main thread may record
// at once. Freed code (--stress-unload) is not retracted: perf resolves an address by the
// latest load record before a sample, so code later placed at the same address wins.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/frame_row.h"

namespace jit {

// Opens both files (idempotent) and closes them at VM exit. A file that cannot be opened
// gets a one-line warning on stderr and is skipped.
void perf_support_enable();
bool perf_support_enabled();
// One code range: its name (mini::fib, minivm::interpreter::iadd, ...), address, size,
// and for jitdump optional line info: (pc offset from `begin`, source line) pairs sorted
// by offset, each holding until the next, all in `source_file`; and optional unwind info:
// the range's frame rows (by offset from `begin`), written as .eh_frame and .eh_frame_hdr
// in a JIT_CODE_UNWINDING_INFO record, so `perf --call-graph dwarf` walks through the
// range (when the code has those bytes after it: perf_unwinding_info).
void perf_record_code(const std::string& name, uintptr_t begin, size_t size, const std::string& source_file,
                      const std::vector<std::pair<uint32_t, uint32_t>>& pc_offset_to_line,
                      const std::vector<runtime::FrameRow>& frame_rows = {}, bool signal_frame = false);
// The unwinding info JIT_CODE_UNWINDING_INFO carries for a range of `code_size` bytes
// described by `frame_rows`: its .eh_frame and the .eh_frame_hdr indexing it, every pointer
// relative, so the bytes do not depend on the range's address (empty when the rows cannot
// be encoded). `perf inject --jit` maps them right after the code, at
// perf_unwinding_info_offset, and perf reads them from its file there, or from the
// process's memory when that address lies in the copy of a sampled stack (a thread's stack
// may end right below the code). So compiled code is installed with these bytes after it
// (compile_method), where no other code may be placed.
std::vector<uint8_t> perf_unwinding_info(size_t code_size, const std::vector<runtime::FrameRow>& frame_rows,
                                         bool signal_frame = false);
size_t perf_unwinding_info_offset(size_t code_size);
// Writes JIT_CODE_CLOSE, unmaps the marker and closes both files; later records are dropped.
void perf_support_close();

// The files in use (empty when not enabled or not open).
std::string perf_map_path();
std::string perf_jitdump_path();

}  // namespace jit
