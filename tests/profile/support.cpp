#include "tests/profile/support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace profile_test {

namespace {

// nlohmann's ordered JSON (objects keep their keys in document order, as the writers'
// byte-for-byte tests read them) made the tests' Json.
Json from_library(const nlohmann::ordered_json& j) {
  Json v;
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::object:
      v.type = Json::Object;
      for (const auto& [key, value] : j.items()) {
        v.keys.push_back(key);
        v.values.push_back(from_library(value));
      }
      break;
    case nlohmann::ordered_json::value_t::array:
      v.type = Json::Array;
      for (const auto& item : j) v.items.push_back(from_library(item));
      break;
    case nlohmann::ordered_json::value_t::string:
      v.type = Json::String;
      v.str = j.get<std::string>();
      break;
    case nlohmann::ordered_json::value_t::boolean:
      v.type = Json::Bool;
      v.boolean = j.get<bool>();
      break;
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
    case nlohmann::ordered_json::value_t::number_float:
      v.type = Json::Number;
      v.number = j.get<double>();
      break;
    default:  // null (a discarded value never comes out of a strict parse)
      break;
  }
  return v;
}

}  // namespace

// Strict (RFC 8259): trailing text, bad escapes, lone surrogates and invalid UTF-8 are
// errors, thrown as std::runtime_error with the library's message.
Json parse_json(std::string_view s) {
  try {
    return from_library(nlohmann::ordered_json::parse(s));
  } catch (const nlohmann::ordered_json::exception& e) {
    throw std::runtime_error(std::string("JSON error: ") + e.what());
  }
}

std::string canonical_json(std::string_view s) {
  try {
    return nlohmann::ordered_json::parse(s).dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    throw std::runtime_error(std::string("JSON error: ") + e.what());
  }
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/minivm_reports_XXXXXX";
  char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  path = d;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool python_accepts(const std::string& text, bool per_line) {
  if (std::system("python3 -c 'pass' >/dev/null 2>&1") != 0) {
    WARN("python3 not found: skipping its JSON check");
    return true;
  }
  TempDir dir;
  auto file = dir.path / "doc.json";
  std::ofstream(file, std::ios::binary) << text;
  std::string code = per_line ? "import json,sys\nfor l in open(sys.argv[1],encoding='utf-8'): json.loads(l)"
                              : "import json,sys; json.load(open(sys.argv[1],encoding='utf-8'))";
  std::string cmd = "python3 -c \"" + code + "\" " + file.string() + " 2>&1";
  return std::system(cmd.c_str()) == 0;
}

bool node_accepts_script(const std::string& html) {
  if (std::system("node --version >/dev/null 2>&1") != 0) {
    WARN("node not found: skipping the syntax check of the HTML's JavaScript");
    return true;
  }
  size_t b = html.rfind("<script>");
  size_t e = html.find("</script>", b);
  REQUIRE((b != std::string::npos && e != std::string::npos));
  TempDir dir;
  auto file = dir.path / "page.js";
  std::ofstream(file, std::ios::binary) << html.substr(b + 8, e - b - 8);
  return std::system(("node --check " + file.string() + " 2>&1").c_str()) == 0;
}

std::string page_data(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  size_t b = html.find(open);
  REQUIRE(b != std::string::npos);
  b += open.size();
  size_t e = html.find("</script>", b);
  REQUIRE(e != std::string::npos);
  return html.substr(b, e - b);
}

sampler::Collections three_collections() {
  auto pause = [](uint64_t id, bool young, uint64_t ttsp, uint64_t ns, int slowest) {
    sampler::GcPause gc;
    gc.gc = id;
    gc.young = young;
    gc.time_to_safepoint_ns = ttsp;
    gc.pause_ns = ns;
    gc.slowest_thread = slowest;
    gc.shares_safepoint = id == 2;
    return gc;
  };
  sampler::Collections c;
  for (const sampler::GcPause& gc : {pause(1, true, 300'000, 2'000'000, 1), pause(2, false, 300'000, 1'000'000, 1),
                                     pause(3, true, 100'000, 4'000'000, -1)})
    c.add(gc);
  return c;
}

}  // namespace profile_test
