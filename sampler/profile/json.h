// JSON as every writer of the profile builds it: a value of nlohmann-json's ordered type
// (objects keep their keys in the order they were set, which is the order each format
// documents) made text by `json_text`. Only the writers' .cpp files include this: the
// library's own headers stay free of nlohmann's, so the VM's files that call a writer do
// not compile it.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace sampler {

using Json = nlohmann::ordered_json;

// `value` as JSON text: on one line, or with `indent` spaces per level. A string that is
// not UTF-8 (a Mini program names its functions and files with any bytes) has each bad
// byte as U+FFFD, where nlohmann would throw; other text passes as it is (no \u escapes
// but for control characters, '"' and '\\'). A number that is not finite is null.
std::string json_text(const Json& value, int indent = -1);
// The same text on one line, appended to `out` by nlohmann's serializer itself: no string
// of its own to copy (a .jsonl line at a time).
void append_json_text(std::string& out, const Json& value);

// `value` rounded to `decimals` places, so that a share or a rate is written with the
// precision it has ("29.6", "0.0312"), not with a double's seventeen digits.
double rounded(double value, int decimals);

}  // namespace sampler
