// FrameKind: one value per row of base/frame_kinds.def, with its name (the `kind` of a
// frame in every output) and the flame graph page's hue. The stack walker produces these
// and the profile's writers print them: one table for both.
#pragma once
#include <cstddef>
#include <cstdint>

namespace base {

enum class FrameKind : uint8_t {
#define FRAME_KIND(name, hue, meaning) name,
#include "base/frame_kinds.def"
#undef FRAME_KIND
};

inline constexpr const char* kFrameKindNames[] = {
#define FRAME_KIND(name, hue, meaning) #name,
#include "base/frame_kinds.def"
#undef FRAME_KIND
};
inline constexpr size_t kFrameKindCount = sizeof(kFrameKindNames) / sizeof(kFrameKindNames[0]);

inline constexpr int kFrameKindHues[kFrameKindCount] = {
#define FRAME_KIND(name, hue, meaning) hue,
#include "base/frame_kinds.def"
#undef FRAME_KIND
};

constexpr const char* frame_kind_name(FrameKind k) { return kFrameKindNames[size_t(k)]; }
// The flame graph page's hue for the kind (HSL), or -1 for grey.
constexpr int frame_kind_hue(FrameKind k) { return kFrameKindHues[size_t(k)]; }

}  // namespace base
