// JFR's compressed integers, strings and event framing (jfr_encoding.h).
#include "sampler/profile/jfr_encoding.h"

namespace sampler::jfr {

size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; n < 9 && v >= 0x80; n++) v >>= 7;
  return n;
}

void put_varint(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    if (v < 0x80) {
      out += char(v);
      return;
    }
    out += char((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += char(v);  // the ninth byte: the top eight bits, no continuation bit
}

void put_string(std::string& out, std::string_view s) {
  if (s.empty()) {
    out += char(kStringEmpty);
    return;
  }
  out += char(kStringUtf8);
  put_varint(out, s.size());
  out += s;
}

void put_big_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--) out += char((v >> (8 * i)) & 0xff);
}

void put_event(std::string& out, std::string_view body) {
  // The size counts its own bytes: the smallest width that holds body + width.
  size_t width = varint_size(body.size() + 1);
  while (varint_size(body.size() + width) != width) width++;
  put_varint(out, body.size() + width);
  out += body;
}

}  // namespace sampler::jfr
