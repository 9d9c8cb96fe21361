// Every log call in labeler/ and common/ follows the convention that --log-format json parses
// (labeler/daemon/log_line.h), and every key it uses is documented in docs/logging.md. A call site
// that adds free text after its fields, a key the JSON envelope owns, or an undocumented key fails
// here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "labeler/daemon/log_line.h"
#include "tests/support/process.h"

namespace cn::labeler {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CallSite {
  std::string where;   // file:offset
  std::string format;  // the format string, C escapes resolved
};

// The adjacent string literals starting at `pos` (after blanks), escapes resolved; nullopt when
// the argument is not a literal.
std::optional<std::string> literal_at(const std::string& src, std::size_t pos) {
  std::string out;
  bool any = false;
  while (true) {
    while (pos < src.size() && std::isspace(static_cast<unsigned char>(src[pos]))) ++pos;
    if (pos >= src.size() || src[pos] != '"') break;
    any = true;
    for (++pos; pos < src.size() && src[pos] != '"'; ++pos) {
      if (src[pos] == '\\' && pos + 1 < src.size()) {
        ++pos;
        out += src[pos] == 'n' ? '\n' : src[pos];
      } else {
        out += src[pos];
      }
    }
    ++pos;
  }
  if (!any) return std::nullopt;
  return out;
}

std::vector<CallSite> call_sites(std::vector<std::string>& not_literal) {
  static const std::regex kCall(
      R"((?:log_->|log\.|spdlog::|logger\.)(trace|debug|info|warn|error|critical|log)\()");
  std::vector<CallSite> out;
  for (const char* dir : {"labeler", "common"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(fs::path(testing::source_dir()) / dir)) {
      const auto ext = entry.path().extension();
      if (ext != ".cpp" && ext != ".h") continue;
      const std::string src = read_file(entry.path());
      for (auto it = std::sregex_iterator(src.begin(), src.end(), kCall);
           it != std::sregex_iterator(); ++it) {
        std::size_t pos = static_cast<std::size_t>(it->position() + it->length());
        if ((*it)[1] == "log") pos = src.find(',', pos) + 1;  // log(level, "...")
        const std::string where =
            entry.path().lexically_relative(testing::source_dir()).string() + ":" +
            std::to_string(std::count(src.begin(), src.begin() + it->position(), '\n') + 1);
        auto format = literal_at(src, pos);
        if (!format) {
          // A declaration or a call with a runtime format: only declarations may appear here.
          if (src.compare(pos, 1, ")") != 0 && src.compare(pos, 5, "const") != 0) {
            not_literal.push_back(where);
          }
          continue;
        }
        out.push_back({where, *format});
      }
    }
  }
  return out;
}

// The format as a line: `{}` (any spec) becomes the word VALUE. A `{}` right after a value is
// the optional " fix=\"...\"" suffix (labeler/watch/watcher.h) and adds nothing here.
std::string sample_line(std::string format) {
  if (format.ends_with("{}{}") || format.ends_with("\"{}")) format.resize(format.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < format.size();) {
    if (format.compare(i, 6, "{{{}}}") == 0) {  // key={...}: a described group
      out += "{k=v}";
      i += 6;
    } else if (format.compare(i, 2, "{{") == 0 || format.compare(i, 2, "}}") == 0) {
      out += format[i];
      i += 2;
    } else if (format[i] == '{') {
      const std::size_t close = format.find('}', i);
      out += "VALUE";
      i = close + 1;
    } else {
      out += format[i++];
    }
  }
  return out;
}

std::string documented_keys_text() {
  return read_file(fs::path(testing::source_dir()) / "docs" / "logging.md");
}

TEST(LogCallSites, EveryFormatFollowsTheConvention) {
  std::vector<std::string> not_literal;
  const auto sites = call_sites(not_literal);
  // The scan must see the labeler's call sites, or it checks nothing.
  EXPECT_GT(sites.size(), 80u);
  EXPECT_TRUE(not_literal.empty()) << "log call without a literal format: " << not_literal.front();
  const std::string docs = documented_keys_text();
  std::set<std::string> keys;
  for (const auto& site : sites) {
    const std::string line = sample_line(site.format);
    auto parsed = parse_log_line(line);
    ASSERT_TRUE(parsed) << site.where << ": \"" << site.format
                        << "\" is not `message: key=value ...`";
    EXPECT_EQ(parsed->message.find('='), std::string::npos) << site.where;
    EXPECT_EQ(parsed->message.find(": VALUE"), std::string::npos)
        << site.where << ": a value packed into the message; give it a key";
    std::set<std::string> seen;
    for (const auto& f : parsed->fields) {
      EXPECT_TRUE(seen.insert(f.key).second) << site.where << ": key twice: " << f.key;
      if (!f.quoted) {
        EXPECT_EQ(f.value.find(' '), std::string::npos)
            << site.where << ": text after the fields, or an unquoted value with spaces: " << f.key;
      }
      for (const char* envelope : {"ts", "level", "logger", "msg"}) {
        EXPECT_NE(f.key, envelope) << site.where << ": the JSON envelope owns this key";
      }
      keys.insert(f.key);
    }
    // The JSON of the sample line must carry every field: nothing fell back to msg.
    if (!parsed->fields.empty()) {
      EXPECT_EQ(log_line_json_members(line).find("\"msg\":\"" + line + "\""), std::string::npos)
          << site.where;
    }
  }
  keys.insert("fix");  // the optional suffix
  for (const auto& key : keys) {
    EXPECT_NE(docs.find("| `" + key + "` |"), std::string::npos)
        << "key `" << key << "` is not in the table of docs/logging.md";
  }
}

// The JSON type the formatter gives a key is the one docs/logging.md promises.
TEST(LogCallSites, DocumentedTypesAreTheFormattersTypes) {
  static const std::regex kRow(R"(\| `([a-z_]+)` \| (number|boolean|string|object) \|)");
  const std::string docs = documented_keys_text();
  int rows = 0;
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), kRow); it != std::sregex_iterator();
       ++it, ++rows) {
    const std::string key = (*it)[1];
    const std::string type = (*it)[2];
    const auto got = log_field_type(key);
    if (type == "number") {
      EXPECT_EQ(got, LogFieldType::number) << key;
    } else if (type == "boolean") {
      EXPECT_EQ(got, LogFieldType::boolean) << key;
    } else {
      EXPECT_EQ(got, LogFieldType::string) << key;
    }
  }
  EXPECT_GT(rows, 60);
}

TEST(LogCallSites, SampleLineOfAConventionBreakerFailsToParse) {
  // The check above can fail: free text after the fields is caught.
  auto parsed = parse_log_line(sample_line("orphan endpoint: endpoint={} (no live allocation)"));
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(parsed->fields.back().quoted);
  EXPECT_NE(parsed->fields.back().value.find(' '), std::string::npos);
  EXPECT_FALSE(parse_log_line(sample_line(R"(x: reason="{})")));
}

// Tokens and secrets: no log call names a key that would carry one, and the Nomad settings the
// start line shows say only whether a token is set.
TEST(LogCallSites, NoKeyCarriesASecret) {
  std::vector<std::string> not_literal;
  for (const auto& site : call_sites(not_literal)) {
    auto parsed = parse_log_line(sample_line(site.format));
    if (!parsed) continue;
    for (const auto& f : parsed->fields) {
      for (const char* secret : {"token", "secret", "password"}) {
        EXPECT_EQ(f.key.find(secret), std::string::npos) << site.where << ": " << f.key;
      }
    }
  }
}

}  // namespace
}  // namespace cn::labeler
