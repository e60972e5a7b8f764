#include "tests/fuzz/corruptions.h"

#include <cctype>
#include <string_view>
#include <vector>

namespace minigen {

namespace {

struct Token {
  size_t begin, end;
  bool word;  // an identifier or a keyword
};

// Mini's tokens, roughly: words, numbers, string literals, comments skipped, and single
// punctuation characters (a two-character operator is two tokens here, which only makes
// more kinds of deletion).
std::vector<Token> tokens(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') i++;
    } else if (c == '"') {
      size_t b = i++;
      while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
      i = std::min(s.size(), i + 1);
      out.push_back({b, i, false});
    } else if (ident(c)) {
      size_t b = i;
      while (i < s.size() && ident(s[i])) i++;
      out.push_back({b, i, !std::isdigit(static_cast<unsigned char>(c))});
    } else {
      out.push_back({i, i + 1, false});
      i++;
    }
  }
  return out;
}

bool is_keyword(std::string_view w) {
  static const char* kKeywords[] = {"fn",      "var",       "if",       "else",     "while", "for",  "in",   "return",
                                    "break",   "continue",  "true",     "false",    "new",   "int",  "float", "bool",
                                    "class",   "interface", "extends",  "implements", "abstract", "override", "this",
                                    "super",   "null",      "is",       "as",       "string"};
  for (const char* k : kKeywords)
    if (w == k) return true;
  return false;
}

}  // namespace

std::string corrupt(const std::string& source, int kind, Choices& choices) {
  std::vector<Token> all = tokens(source);
  std::vector<Token> places;
  for (const Token& t : all) {
    std::string_view w(source.data() + t.begin, t.end - t.begin);
    bool type = w == "int" || w == "float" || w == "bool" || w == "string";
    if (kind == 0 || (kind == 1 && type) || (kind == 2 && w == "return") || (kind == 3 && t.word && !is_keyword(w)))
      places.push_back(t);
  }
  if (places.empty()) return source;
  const Token& t = places[choices.below(uint32_t(places.size()))];
  std::string out = source;
  switch (kind) {
    case 0: out.erase(t.begin, t.end - t.begin); break;
    case 1: {
      static const char* kTypes[] = {"int", "float", "bool", "string"};
      out.replace(t.begin, t.end - t.begin, kTypes[choices.below(4)]);
      break;
    }
    case 2: {
      size_t semi = out.find(';', t.begin);
      out.erase(t.begin, (semi == std::string::npos ? out.size() : semi + 1) - t.begin);
      break;
    }
    default: {
      size_t at = t.begin + choices.below(uint32_t(t.end - t.begin));
      switch (choices.below(3)) {
        case 0: out.insert(at, "x"); break;
        case 1: out.erase(at, 1); break;
        default: out[at] = out[at] == 'q' ? 'z' : 'q'; break;
      }
      break;
    }
  }
  return out;
}

}  // namespace minigen
