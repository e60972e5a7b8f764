// The builtins of LANGUAGE.md implemented in C++ (vm/builtins.h lists them).
#pragma once
#include <cstdint>

namespace runtime {

class Thread;
struct Array;

int64_t native_nanotime();
void native_sleep_ms(Thread* t, int64_t ms);
void native_spin_ns(Thread* t, int64_t ns);
void native_join(Thread* t, int64_t handle);
void native_arraycopy(Thread* t, Array* src, int64_t src_pos, Array* dst, int64_t dst_pos, int64_t n);
int64_t native_crc32(Thread* t, Array* a, int64_t from, int64_t to);

// CRC-32 (IEEE 802.3, as zlib's crc32) of the low 8 bits of each element.
uint32_t crc32_of_low_bytes(const int64_t* data, int64_t n);

// The errno of `print`'s first write to stdout that failed, or 0. Once a write fails the
// stream drops its buffer, so a flush at exit may find nothing left to fail on and no
// reason to give: the reason is kept where it happened.
int print_write_errno();

}  // namespace runtime
