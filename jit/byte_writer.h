// Bytes appended to a vector the way ELF, DWARF and perf's jitdump records lay them out:
// little-endian fields, NUL-terminated strings and LEB128 numbers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace jit {

inline void put_uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out.push_back(v != 0 ? byte | 0x80 : byte);
  } while (v != 0);
}

inline void put_sleb(std::vector<uint8_t>& out, int64_t v) {
  for (;;) {
    uint8_t byte = v & 0x7f;
    v >>= 7;  // arithmetic
    if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
      out.push_back(byte);
      return;
    }
    out.push_back(byte | 0x80);
  }
}

struct ByteWriter {
  std::vector<uint8_t> b;
  template <typename T>
  void put(T v) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.insert(b.end(), raw, raw + sizeof(T));
  }
  void str(const std::string& s) {
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
  void bytes(const void* p, size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
  }
  void uleb(uint64_t v) { put_uleb(b, v); }
  void sleb(int64_t v) { put_sleb(b, v); }
  template <typename T>
  void patch(size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(T));
  }
};

}  // namespace jit
