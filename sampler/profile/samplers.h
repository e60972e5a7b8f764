// SamplerId: one value per sampling method (sampler/profile/samplers.def), with the name the
// command line accepts and the reports print, where its stack is taken, and its one-line
// description.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sampler/profile/reasons.h"

namespace sampler {

enum class SamplerId : uint8_t {
#define SAMPLER(name, where, bias, help) name,
#include "sampler/profile/samplers.def"
#undef SAMPLER
};

inline constexpr const char* kSamplerNames[] = {
#define SAMPLER(name, where, bias, help) #name,
#include "sampler/profile/samplers.def"
#undef SAMPLER
};
inline constexpr size_t kSamplerCount = sizeof(kSamplerNames) / sizeof(kSamplerNames[0]);

enum class StackTaken : uint8_t { at_poll, in_handler, by_sampler_thread };

inline constexpr StackTaken kSamplerStackTaken[kSamplerCount] = {
#define SAMPLER(name, where, bias, help) StackTaken::where,
#include "sampler/profile/samplers.def"
#undef SAMPLER
};

// When a sampler's samples are biased (the bias column of samplers.def).
enum class Bias : uint8_t { never, if_bcp_lags, if_not_rebuilt, always };

inline constexpr Bias kSamplerBias[kSamplerCount] = {
#define SAMPLER(name, where, bias, help) Bias::bias,
#include "sampler/profile/samplers.def"
#undef SAMPLER
};

// What "biased" means, in every report and help text that prints the word.
inline constexpr const char* kBiasedMeaning =
    "its top frame is not where the signal landed: the stack is the one at the thread's next poll, or (stale_bcp) "
    "an interpreted frame's position is the one the interpreter saved at its last call or poll";
// What --debug-info=safepoints does to every sampler's answer (said by every report).
inline constexpr const char* kDebugInfoAtSafepointsNote =
    "Debug info only at polls and calls (--debug-info=safepoints): every sampler, the oracle too, "
    "names a pc elsewhere by the poll or call before it, with that site's line and inlined frames; "
    "the oracle is only as exact as the debug info.";

inline constexpr const char* kSamplerHelp[kSamplerCount] = {
#define SAMPLER(name, where, bias, help) help,
#include "sampler/profile/samplers.def"
#undef SAMPLER
};

constexpr const char* sampler_name(SamplerId s) { return kSamplerNames[size_t(s)]; }
constexpr const char* sampler_help(SamplerId s) { return kSamplerHelp[size_t(s)]; }
constexpr StackTaken stack_taken(SamplerId s) { return kSamplerStackTaken[size_t(s)]; }
constexpr Bias bias(SamplerId s) { return kSamplerBias[size_t(s)]; }
// The reason every sample of a sampler biased by construction carries; nullopt for the others.
constexpr std::optional<Reason> biased_by_construction(SamplerId s) {
  return bias(s) == Bias::always ? std::optional<Reason>(Reason::taken_at_poll) : std::nullopt;
}
// The sampler a name stands for; nullopt for a name not in the table.
inline std::optional<SamplerId> sampler_named(std::string_view name) {
  for (size_t i = 0; i < kSamplerCount; i++)
    if (name == kSamplerNames[i]) return SamplerId(i);
  return std::nullopt;
}

}  // namespace sampler
