// The primitives of JFR's chunk format (version 2.0, as JDK 17 and JDK 25 read it): every
// integer of an event, a constant pool or the metadata is a compressed integer (LEB128:
// seven bits a byte, least significant first, the top bit saying another byte follows;
// a long's ninth byte carries eight bits), strings say how they are encoded in their first
// byte, and an event starts with its size, which counts itself. Only the chunk header's
// fields are fixed-width, big-endian. report_jfr.cpp and jfr_chunk.cpp build on these.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sampler::jfr {

// How many bytes put_varint writes for `v` (1 to 9).
size_t varint_size(uint64_t v);
// `v` as a compressed long (and, through put_int, int, short: their readers cast it).
void put_varint(std::string& out, uint64_t v);
// An int field: a negative value is written as its 32 bits, which the reader's cast
// turns back into the same int (bytecode index -1 takes five bytes, not nine).
inline void put_int(std::string& out, int32_t v) { put_varint(out, uint32_t(v)); }
inline void put_bool(std::string& out, bool v) { out += char(v ? 1 : 0); }

// A string field: null, empty, or its UTF-8 bytes after their count (encodings 0, 1, 3).
inline constexpr uint8_t kStringNull = 0, kStringEmpty = 1, kStringUtf8 = 3;
void put_string(std::string& out, std::string_view s);
inline void put_null_string(std::string& out) { out += char(kStringNull); }

// `v` in `bytes` bytes, most significant first (the chunk header).
void put_big_endian(std::string& out, uint64_t v, int bytes);

// One event: `body` (its type id and its fields) after the event's size, which counts the
// size's own bytes.
void put_event(std::string& out, std::string_view body);

}  // namespace sampler::jfr
