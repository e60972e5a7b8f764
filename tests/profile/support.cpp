#include "tests/profile/support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace profile_test {

namespace {

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}
  Json parse() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON error at offset " + std::to_string(i_) + ": " + what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  void literal(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) fail("bad literal");
    i_ += w.size();
  }
  Json value() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    char c = s_[i_];
    if (c == '{') {
      v.type = Json::Object;
      ++i_;
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string();
        expect(':');
        v.keys.push_back(k);
        v.values.push_back(value());
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      v.type = Json::Array;
      ++i_;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::String;
      v.str = string();
    } else if (c == 't') {
      literal("true"), v.type = Json::Bool, v.boolean = true;
    } else if (c == 'f') {
      literal("false"), v.type = Json::Bool;
    } else if (c == 'n') {
      literal("null");
    } else {
      v.type = Json::Number;
      v.number = number();
    }
    return v;
  }
  double number() {
    size_t start = i_;
    auto digits = [&] {
      size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == d) fail("digit expected");
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') ++i_;
    else digits();
    if (i_ < s_.size() && s_[i_] == '.') ++i_, digits();
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    return std::stod(std::string(s_.substr(start, i_ - start)));
  }
  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad hex digit");
    }
    return v;
  }
  static void utf8(std::string& o, unsigned cp) {
    if (cp < 0x80) o += char(cp);
    else if (cp < 0x800) o += char(0xC0 | cp >> 6), o += char(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
      o += char(0xE0 | cp >> 12), o += char(0x80 | ((cp >> 6) & 0x3F)), o += char(0x80 | (cp & 0x3F));
    else
      o += char(0xF0 | cp >> 18), o += char(0x80 | ((cp >> 12) & 0x3F)),
          o += char(0x80 | ((cp >> 6) & 0x3F)), o += char(0x80 | (cp & 0x3F));
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("string expected");
    ++i_;
    std::string o;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return o;
      if (c < 0x20) fail("raw control character in string");
      if (c != '\\') {
        o += char(c);
        continue;
      }
      if (i_ >= s_.size()) fail("bad escape");
      char e = s_[i_++];
      switch (e) {
        case '"': o += '"'; break;
        case '\\': o += '\\'; break;
        case '/': o += '/'; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'n': o += '\n'; break;
        case 'r': o += '\r'; break;
        case 't': o += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(i_, 2) != "\\u") fail("lone high surrogate");
            i_ += 2;
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("lone low surrogate");
          }
          utf8(o, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Json parse_json(std::string_view s) { return JsonParser(s).parse(); }

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
