#include "tests/fakes/nomad/filter_expr.h"
#include "tests/fakes/http/status_error.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace cn::fakes {

namespace {

using nlohmann::json;

struct Token {
  enum Kind { kWord, kString, kOp, kLParen, kRParen, kEnd } kind;
  std::string text;
};

Result<std::vector<Token>> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '(') {
      out.push_back({Token::kLParen, "("});
      ++i;
    } else if (c == ')') {
      out.push_back({Token::kRParen, ")"});
      ++i;
    } else if (c == '"' || c == '`') {
      std::string v;
      ++i;
      while (i < s.size() && s[i] != c) {
        if (s[i] == '\\' && c == '"' && i + 1 < s.size()) ++i;
        v += s[i++];
      }
      if (i >= s.size()) return http_fail("unterminated string", 400);
      ++i;
      out.push_back({Token::kString, v});
    } else if ((c == '=' || c == '!') && i + 1 < s.size() && s[i + 1] == '=') {
      out.push_back({Token::kOp, s.substr(i, 2)});
      i += 2;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') {
      std::size_t start = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' ||
                              s[i] == '.' || s[i] == '-' || s[i] == '/')) {
        ++i;
      }
      out.push_back({Token::kWord, s.substr(start, i - start)});
    } else {
      return http_fail(std::string("unexpected character '") + c + "'", 400);
    }
  }
  out.push_back({Token::kEnd, ""});
  return out;
}

const json* lookup(const json& doc, const std::string& selector) {
  const json* cur = &doc;
  std::size_t start = 0;
  while (start <= selector.size()) {
    std::size_t dot = selector.find('.', start);
    std::string part =
        selector.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

std::string scalar(const json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

struct Match final : FilterExpr {
  std::string selector, op, value;
  bool matches(const json& doc) const override {
    const json* v = lookup(doc, selector);
    if (op == "==") return scalar(v) == value;
    if (op == "!=") return scalar(v) != value;
    bool empty = !v || v->is_null() || (v->is_string() && v->get<std::string>().empty()) ||
                 ((v->is_array() || v->is_object()) && v->empty());
    if (op == "is empty") return empty;
    if (op == "is not empty") return !empty;
    bool contained = false;
    if (v && v->is_array()) {
      for (const auto& e : *v) contained = contained || scalar(&e) == value;
    } else if (v && v->is_object()) {
      contained = v->contains(value);
    } else if (v && v->is_string()) {
      contained = v->get<std::string>().find(value) != std::string::npos;
    }
    return op == "not in" || op == "not contains" ? !contained : contained;
  }
};

struct Not final : FilterExpr {
  std::shared_ptr<const FilterExpr> inner;
  bool matches(const json& doc) const override { return !inner->matches(doc); }
};

struct Binary final : FilterExpr {
  bool is_and = true;
  std::shared_ptr<const FilterExpr> lhs, rhs;
  bool matches(const json& doc) const override {
    return is_and ? lhs->matches(doc) && rhs->matches(doc) : lhs->matches(doc) || rhs->matches(doc);
  }
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<std::shared_ptr<const FilterExpr>> parse() {
    auto e = or_expr();
    if (!e) return e;
    if (peek().kind != Token::kEnd) return http_fail("unexpected '" + peek().text + "'", 400);
    return e;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const {
    return t_[std::min(pos_ + ahead, t_.size() - 1)];
  }
  bool word(const char* w, std::size_t ahead = 0) const {
    return peek(ahead).kind == Token::kWord && peek(ahead).text == w;
  }

  Result<std::shared_ptr<const FilterExpr>> or_expr() {
    auto lhs = and_expr();
    while (lhs && word("or")) {
      ++pos_;
      auto rhs = and_expr();
      if (!rhs) return rhs;
      auto b = std::make_shared<Binary>();
      b->is_and = false;
      b->lhs = *lhs;
      b->rhs = *rhs;
      lhs = b;
    }
    return lhs;
  }

  Result<std::shared_ptr<const FilterExpr>> and_expr() {
    auto lhs = unary();
    while (lhs && word("and")) {
      ++pos_;
      auto rhs = unary();
      if (!rhs) return rhs;
      auto b = std::make_shared<Binary>();
      b->lhs = *lhs;
      b->rhs = *rhs;
      lhs = b;
    }
    return lhs;
  }

  Result<std::shared_ptr<const FilterExpr>> unary() {
    if (word("not")) {
      ++pos_;
      auto inner = unary();
      if (!inner) return inner;
      auto n = std::make_shared<Not>();
      n->inner = *inner;
      return n;
    }
    if (peek().kind == Token::kLParen) {
      ++pos_;
      auto e = or_expr();
      if (!e) return e;
      if (peek().kind != Token::kRParen) return http_fail("missing ')'", 400);
      ++pos_;
      return e;
    }
    return match();
  }

  Result<std::shared_ptr<const FilterExpr>> match() {
    auto m = std::make_shared<Match>();
    const Token& first = peek();
    if (first.kind != Token::kWord && first.kind != Token::kString) {
      return http_fail("expected a selector or value", 400);
    }
    // `"value" in Selector` / `"value" not in Selector`
    if (word("in", 1) || (word("not", 1) && word("in", 2))) {
      m->value = first.text;
      m->op = word("in", 1) ? "in" : "not in";
      pos_ += word("in", 1) ? 2 : 3;
      if (peek().kind != Token::kWord) return http_fail("expected a selector after 'in'", 400);
      m->selector = peek().text;
      ++pos_;
      return m;
    }
    if (first.kind != Token::kWord) return http_fail("expected a selector", 400);
    m->selector = first.text;
    ++pos_;
    if (word("is") && word("empty", 1)) {
      m->op = "is empty";
      pos_ += 2;
      return m;
    }
    if (word("is") && word("not", 1) && word("empty", 2)) {
      m->op = "is not empty";
      pos_ += 3;
      return m;
    }
    if (peek().kind == Token::kOp) {
      m->op = peek().text;
    } else if (word("contains")) {
      m->op = "contains";
    } else if (word("not") && word("contains", 1)) {
      m->op = "not contains";
      ++pos_;
    } else {
      return http_fail("expected an operator after '" + m->selector + "'", 400);
    }
    ++pos_;
    if (peek().kind != Token::kString && peek().kind != Token::kWord) {
      return http_fail("expected a value", 400);
    }
    m->value = peek().text;
    ++pos_;
    return m;
  }

  std::vector<Token> t_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<std::shared_ptr<const FilterExpr>> parse_filter(const std::string& text) {
  auto tokens = tokenize(text);
  if (!tokens) return http_fail("failed to read filter expression: " + tokens.error().message, 400);
  auto expr = Parser(std::move(*tokens)).parse();
  if (!expr) return http_fail("failed to read filter expression: " + expr.error().message, 400);
  return expr;
}

}  // namespace cn::fakes
