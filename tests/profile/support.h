// What the profile library's tests share: a strict JSON parser (nlohmann-json's) to read
// the writers' output, independent validators (python3's json, node's syntax check) used
// when installed, and the files and pages they write.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sampler/profile/profile.h"

namespace profile_test {

// ---- A strict little JSON parser (RFC 8259), enough to check the writers' output ----

struct Json {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool boolean = false;
  double number = 0;
  std::string str;
  std::vector<Json> items;
  // An object's members, keys[i] naming values[i] (a vector of pair<string, Json> would
  // need Json complete inside its own definition; clang's checks refuse it).
  std::vector<std::string> keys;
  std::vector<Json> values;

  bool has(const std::string& key) const {
    for (const auto& k : keys)
      if (k == key) return true;
    return false;
  }
  const Json& operator[](const std::string& key) const {
    for (size_t i = 0; i < keys.size(); i++)
      if (keys[i] == key) return values[i];
    throw std::runtime_error("no key " + key);
  }
  const Json& operator[](size_t i) const { return items.at(i); }
  uint64_t u64() const { return static_cast<uint64_t>(number); }
};

// `s` parsed strictly, or std::runtime_error saying where it is not JSON.
Json parse_json(std::string_view s);

// `s` parsed and written again on one line: two documents with the same keys in the same
// order and the same values, each number an integer or a float alike, give the same text,
// however each was laid out.
std::string canonical_json(std::string_view s);

// A temporary directory, removed with what it holds.
struct TempDir {
  std::filesystem::path path;
  TempDir();
  ~TempDir();
};

std::string slurp(const std::filesystem::path& p);

// python3's json module as a second, independent validator; true if python3 is absent.
bool python_accepts(const std::string& text, bool per_line);

// `node --check` on the page's last inline script, when node is installed (it is not a
// dependency).
bool node_accepts_script(const std::string& html);

// The JSON a page embeds in its <script type="application/json" id=`id`> element.
std::string page_data(const std::string& html, const std::string& id);

// Three collections: a young one that waited for thread 1 (time to safepoint 300 us, pause
// 2 ms), a full one after it in the same safepoint (1 ms; its time to safepoint and last
// thread are the young one's, counted once), and a young one no thread had to be waited
// for (100 us, 4 ms).
sampler::Collections three_collections();

}  // namespace profile_test
