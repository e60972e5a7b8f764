#include "vm/lexer.h"

#include <charconv>
#include <cstdint>

#include <fmt/format.h>

namespace vm {

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// A character as it should appear in a message: printable ASCII as is, else as hex.
std::string show_char(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  return fmt::format("\\x{:02x}", uint8_t(c));
}

struct Keyword {
  std::string_view text;
  Tok kind;
};
constexpr Keyword kKeywords[] = {
    {"fn", Tok::KwFn},         {"var", Tok::KwVar},       {"if", Tok::KwIf},
    {"else", Tok::KwElse},     {"while", Tok::KwWhile},   {"for", Tok::KwFor},
    {"in", Tok::KwIn},         {"return", Tok::KwReturn}, {"break", Tok::KwBreak},
    {"continue", Tok::KwContinue}, {"true", Tok::KwTrue}, {"false", Tok::KwFalse},
    {"new", Tok::KwNew},       {"int", Tok::KwInt},       {"float", Tok::KwFloat},
    {"bool", Tok::KwBool},     {"string", Tok::KwString}, {"null", Tok::KwNull},
    {"class", Tok::KwClass},   {"interface", Tok::KwInterface}, {"extends", Tok::KwExtends},
    {"implements", Tok::KwImplements}, {"abstract", Tok::KwAbstract}, {"override", Tok::KwOverride},
    {"this", Tok::KwThis},     {"super", Tok::KwSuper},   {"is", Tok::KwIs},
    {"as", Tok::KwAs},
};

// Operators and punctuation, longest first so that the first match is the longest.
struct Punct {
  std::string_view text;
  Tok kind;
};
constexpr Punct kPuncts[] = {
    {">>>=", Tok::UshrAssign}, {">>>", Tok::Ushr}, {">>=", Tok::ShrAssign}, {"<<=", Tok::ShlAssign},
    {">>", Tok::Shr}, {"<<", Tok::Shl}, {">=", Tok::Ge}, {"<=", Tok::Le}, {"==", Tok::EqEq},
    {"!=", Tok::Ne}, {"&&", Tok::AndAnd}, {"||", Tok::OrOr}, {"+=", Tok::PlusAssign},
    {"-=", Tok::MinusAssign}, {"*=", Tok::StarAssign}, {"/=", Tok::SlashAssign},
    {"%=", Tok::PercentAssign}, {"&=", Tok::AmpAssign}, {"|=", Tok::PipeAssign},
    {"^=", Tok::CaretAssign}, {"..", Tok::DotDot},
    {">", Tok::Gt}, {"<", Tok::Lt}, {"=", Tok::Assign}, {"!", Tok::Bang}, {"&", Tok::Amp},
    {"|", Tok::Pipe}, {"^", Tok::Caret}, {"+", Tok::Plus}, {"-", Tok::Minus}, {"*", Tok::Star},
    {"/", Tok::Slash}, {"%", Tok::Percent}, {"~", Tok::Tilde}, {"(", Tok::LParen},
    {")", Tok::RParen}, {"{", Tok::LBrace}, {"}", Tok::RBrace}, {"[", Tok::LBracket},
    {"]", Tok::RBracket}, {",", Tok::Comma}, {";", Tok::Semi}, {":", Tok::Colon}, {".", Tok::Dot},
};

}  // namespace

std::string_view tok_spelling(Tok t) {
  switch (t) {
    case Tok::End: return "end of file";
    case Tok::Ident: return "identifier";
    case Tok::IntLit: return "integer literal";
    case Tok::FloatLit: return "float literal";
    case Tok::StringLit: return "string literal";
    case Tok::Annotation: return "annotation";
    default: break;
  }
  for (auto& k : kKeywords)
    if (k.kind == t) return k.text;
  for (auto& p : kPuncts)
    if (p.kind == t) return p.text;
  return "?";
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < src_.size(); i++, pos_++) {
    if (src_[pos_] == '\n') {
      line_++;
      col_ = 1;
    } else {
      col_++;
    }
  }
}

void Lexer::fail(SourcePos at, std::string message) const { throw FrontendError{at, std::move(message)}; }

void Lexer::skip_space_and_comments() {
  for (;;) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < src_.size() && peek() != '\n') advance();
    } else if (c == '/' && peek(1) == '*') {
      SourcePos start = here();
      advance(2);
      for (;;) {
        if (pos_ >= src_.size()) fail(start, "unterminated block comment");
        if (peek() == '*' && peek(1) == '/') {
          advance(2);
          break;
        }
        advance();
      }
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skip_space_and_comments();
  SourcePos start = here();
  size_t begin = pos_;
  Token t;
  t.pos = start;
  if (pos_ >= src_.size()) {
    t.kind = Tok::End;
    return t;
  }
  char c = peek();
  if (is_ident_start(c)) {
    while (is_ident_char(peek())) advance();
    t.text = src_.substr(begin, pos_ - begin);
    t.kind = Tok::Ident;
    for (auto& k : kKeywords)
      if (k.text == t.text) t.kind = k.kind;
    return t;
  }
  if (is_digit(c)) return number(start);
  if (c == '"') return string(start);
  if (c == '@') {
    advance();
    if (!is_ident_start(peek())) fail(start, "expected an annotation name after '@'");
    size_t name_begin = pos_;
    while (is_ident_char(peek())) advance();
    t.kind = Tok::Annotation;
    t.str_value = std::string(src_.substr(name_begin, pos_ - name_begin));
    t.text = src_.substr(begin, pos_ - begin);
    return t;
  }
  for (auto& p : kPuncts) {
    if (src_.substr(pos_, p.text.size()) == p.text) {
      advance(p.text.size());
      t.kind = p.kind;
      t.text = src_.substr(begin, pos_ - begin);
      return t;
    }
  }
  fail(start, fmt::format("unexpected character '{}'", show_char(c)));
}

// Integer (decimal or 0x hex) or float literal. '_' may appear only between digits.
Token Lexer::number(SourcePos start) {
  size_t begin = pos_;
  Token t;
  t.pos = start;
  std::string digits;  // the literal without underscores
  // Scans a run of digits (of the given class) with '_' only between two digits.
  auto scan_digits = [&](bool (*is_d)(char)) {
    while (is_d(peek()) || peek() == '_') {
      if (peek() == '_') {
        size_t k = 0;
        while (peek(k) == '_') k++;
        if (!is_d(peek(k)))
          fail(here(), "'_' in a number must be between digits");
        advance(k);
        continue;
      }
      digits += peek();
      advance();
    }
  };
  auto reject_trailing = [&] {
    if (is_ident_char(peek()))
      fail(here(), fmt::format("invalid character '{}' in number", show_char(peek())));
  };
  constexpr uint64_t kMinMagnitude = uint64_t(1) << 63;  // |INT64_MIN|

  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
    advance(2);
    if (!is_hex_digit(peek())) fail(start, "hex literal needs at least one digit after '0x'");
    scan_digits(is_hex_digit);
    reject_trailing();
    uint64_t v = 0;
    for (char d : digits) {
      if (v > (kMinMagnitude >> 4)) fail(start, fmt::format("integer literal {} does not fit in int", src_.substr(begin, pos_ - begin)));
      v = v * 16 + uint64_t(hex_value(d));
    }
    if (v > kMinMagnitude) fail(start, fmt::format("integer literal {} does not fit in int", src_.substr(begin, pos_ - begin)));
    t.kind = Tok::IntLit;
    t.int_value = int64_t(v);  // 2^63 wraps to INT64_MIN, flagged below
    t.int_is_min_magnitude = v == kMinMagnitude;
    t.text = src_.substr(begin, pos_ - begin);
    return t;
  }

  scan_digits(is_digit);
  bool is_float = false;
  if (peek() == '.' && is_digit(peek(1))) {  // "0..n" is a range, not a float
    is_float = true;
    digits += '.';
    advance();
    scan_digits(is_digit);
  } else if (peek() == '.' && peek(1) != '.') {  // no number has members: "1." is a float without digits
    SourcePos at = here();
    fail(at, "a float literal needs digits after '.', e.g. 1.0");
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
    is_float = true;
    digits += 'e';
    advance();
    if (peek() == '+' || peek() == '-') {
      digits += peek();
      advance();
    }
    scan_digits(is_digit);
  }
  reject_trailing();
  t.text = src_.substr(begin, pos_ - begin);

  if (is_float) {
    double v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);  // locale independent
    if (r.ec == std::errc::result_out_of_range) fail(start, fmt::format("float literal {} is out of range", t.text));
    if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
      fail(start, fmt::format("malformed float literal {}", t.text));
    t.kind = Tok::FloatLit;
    t.float_value = v;
    return t;
  }
  uint64_t v = 0;
  for (char d : digits) {
    uint64_t dv = uint64_t(d - '0');
    if (v > (kMinMagnitude - dv) / 10) fail(start, fmt::format("integer literal {} does not fit in int", t.text));
    v = v * 10 + dv;
  }
  t.kind = Tok::IntLit;
  t.int_value = int64_t(v);
  t.int_is_min_magnitude = v == kMinMagnitude;
  return t;
}

Token Lexer::string(SourcePos start) {
  size_t begin = pos_;
  Token t;
  t.pos = start;
  t.kind = Tok::StringLit;
  advance();  // opening quote
  for (;;) {
    char c = peek();
    if (pos_ >= src_.size() || c == '\n') fail(start, "unterminated string literal");
    if (c == '"') {
      advance();
      break;
    }
    if (c == '\\') {
      SourcePos at = here();
      char e = peek(1);
      switch (e) {
        case 'n': t.str_value += '\n'; break;
        case 't': t.str_value += '\t'; break;
        case '"': t.str_value += '"'; break;
        case '\\': t.str_value += '\\'; break;
        default:
          if (pos_ + 1 >= src_.size() || e == '\n') fail(start, "unterminated string literal");
          fail(at, fmt::format("invalid escape '\\{}' in string literal (use \\n, \\t, \\\" or \\\\)", show_char(e)));
      }
      advance(2);
      continue;
    }
    t.str_value += c;
    advance();
  }
  t.text = src_.substr(begin, pos_ - begin);
  return t;
}

std::vector<Token> tokenize(std::string_view source) {
  Lexer lx(source);
  std::vector<Token> out;
  for (;;) {
    out.push_back(lx.next());
    if (out.back().kind == Tok::End) return out;
  }
}

}  // namespace vm
