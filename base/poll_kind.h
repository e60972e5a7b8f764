// PollKind: one value per row of base/poll_kinds.def, with its name, its one-character
// mark, its label for a listing and its meaning for a legend. runtime/poll_lines.h decides
// which kind a poll site is; the disassembler and `compare` print it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace base {

enum class PollKind : uint8_t {
#define POLL_KIND(name, mark, label, meaning) name,
#include "base/poll_kinds.def"
#undef POLL_KIND
};

struct PollKindInfo {
  const char* name;
  const char* mark;
  const char* label;
  const char* meaning;
};
inline constexpr PollKindInfo kPollKinds[] = {
#define POLL_KIND(name, mark, label, meaning) {#name, mark, label, meaning},
#include "base/poll_kinds.def"
#undef POLL_KIND
};
inline constexpr size_t kPollKindCount = sizeof(kPollKinds) / sizeof(kPollKinds[0]);

constexpr const char* poll_kind_name(PollKind k) { return kPollKinds[size_t(k)].name; }
constexpr const char* poll_kind_mark(PollKind k) { return kPollKinds[size_t(k)].mark; }    // one character for a column
constexpr const char* poll_kind_label(PollKind k) { return kPollKinds[size_t(k)].label; }  // "strip-mined latch"
constexpr const char* poll_kind_meaning(PollKind k) { return kPollKinds[size_t(k)].meaning; }  // for a legend

}  // namespace base
