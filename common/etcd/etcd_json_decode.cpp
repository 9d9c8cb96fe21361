#include <nlohmann/json.hpp>

#include "common/etcd/base64.h"
#include "common/etcd/etcd_json.h"
#include "common/util/json_read.h"

namespace cn::etcd {
namespace {

using Json = nlohmann::json;

// JsonReader plus the gateway's bytes encoding (base64) and "etcd answer: " on its errors.
class AnswerReader {
 public:
  AnswerReader(const Json& value, cn::json::JsonWhere where) : reader_(value, std::move(where)) {}

  void integer(std::string_view key, std::int64_t& out) { reader_.read_int_text(key, out); }
  void bytes(std::string_view key, std::string& out) {
    std::string text;
    reader_.read(key, text);
    auto decoded = base64_decode(text);
    if (!decoded) return reader_.fail_at(key, "not base64");
    out = std::move(*decoded);
  }
  void flag(std::string_view key, bool& out) { reader_.read(key, out); }
  void text(std::string_view key, std::string& out) { reader_.read(key, out); }
  const Json* object(std::string_view key) { return reader_.object(key); }
  const Json* array(std::string_view key) { return reader_.array(key); }
  void fail(std::string message) { reader_.fail(std::move(message)); }
  cn::json::JsonWhere at(std::string_view key) const { return reader_.at(key); }
  cn::json::JsonWhere at(std::string_view key, std::size_t i) const { return reader_.at(key, i); }

  bool ok() const { return reader_.ok(); }
  // The first error without the "etcd answer: " prefix, for an enclosing reader to take over.
  const std::string& first_error() const { return reader_.error(); }

  Status done() const {
    if (reader_.ok()) return {};
    return cn::fail(ErrorKind::bad_answer, "etcd answer: " + reader_.error());
  }

 private:
  cn::json::JsonReader reader_;
};

Result<Json> parse(std::string_view body, std::string_view what) {
  auto doc = cn::json::parse_json_text(body, what);
  // Text the gateway sent that is not JSON is its fault, not bad input of ours.
  if (!doc && doc.error().kind == ErrorKind::invalid) doc.error().kind = ErrorKind::bad_answer;
  return doc;
}

Revision header_revision(AnswerReader& reader) {
  Revision revision = 0;
  if (const auto* header = reader.object("header")) {
    AnswerReader h(*header, reader.at("header"));
    h.integer("revision", revision);
    if (!h.ok()) reader.fail(h.first_error());
  }
  return revision;
}

// Reads one RangeResponse object (top level or inside a txn) into `page`; errors go to `reader`.
void read_range(AnswerReader& reader, RangePage& page) {
  page.revision = header_revision(reader);
  reader.flag("more", page.more);
  reader.integer("count", page.count);
  const auto* kvs = reader.array("kvs");
  if (kvs == nullptr) return;
  for (std::size_t i = 0; i < kvs->size(); ++i) {
    AnswerReader r((*kvs)[i], reader.at("kvs", i));
    KeyValue kv;
    r.bytes("key", kv.key);
    r.bytes("value", kv.value);
    for (auto [key, field] : {std::pair{"create_revision", &kv.create_revision},
                              {"mod_revision", &kv.mod_revision},
                              {"version", &kv.version},
                              {"lease", &kv.lease}}) {
      r.integer(key, *field);
    }
    if (!r.ok()) return reader.fail(r.first_error());
    page.kvs.push_back(std::move(kv));
  }
}

Status read_txn_response(const Json& item, const cn::json::JsonWhere& where, TxnResult& result) {
  AnswerReader r(item, where);
  RangePage page;
  std::int64_t deleted = 0;
  int found = 0;
  if (const auto* range = r.object("response_range")) {
    AnswerReader rr(*range, r.at("response_range"));
    read_range(rr, page);
    if (auto ok = rr.done(); !ok) return ok;
    ++found;
  }
  if (const auto* del = r.object("response_delete_range")) {
    AnswerReader rd(*del, r.at("response_delete_range"));
    rd.integer("deleted", deleted);
    if (auto ok = rd.done(); !ok) return ok;
    ++found;
  }
  if (r.object("response_put") != nullptr) ++found;
  if (r.object("response_txn") != nullptr) ++found;
  if (auto ok = r.done(); !ok) return ok;
  if (found != 1) {
    return fail(ErrorKind::bad_answer,
                "etcd answer: " + where.error("expected exactly one response"));
  }
  result.ranges.push_back(std::move(page));
  result.deleted.push_back(deleted);
  return {};
}

}  // namespace

Result<RangePage> decode_range(std::string_view body) {
  auto doc = parse(body, "etcd range answer");
  if (!doc) return std::unexpected(doc.error());
  AnswerReader reader(*doc, "range");
  RangePage page;
  read_range(reader, page);
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  return page;
}

Result<TxnResult> decode_txn(std::string_view body) {
  auto doc = parse(body, "etcd txn answer");
  if (!doc) return std::unexpected(doc.error());
  AnswerReader reader(*doc, "txn");
  TxnResult result;
  result.revision = header_revision(reader);
  reader.flag("succeeded", result.succeeded);
  const auto* responses = reader.array("responses");
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  if (responses != nullptr) {
    for (std::size_t i = 0; i < responses->size(); ++i) {
      auto ok = read_txn_response((*responses)[i], reader.at("responses", i), result);
      if (!ok) return std::unexpected(ok.error());
    }
  }
  return result;
}

Result<Revision> decode_put(std::string_view body) {
  auto doc = parse(body, "etcd put answer");
  if (!doc) return std::unexpected(doc.error());
  AnswerReader reader(*doc, "put");
  const Revision revision = header_revision(reader);
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  return revision;
}

Result<Lease> decode_lease_grant(std::string_view body) {
  auto doc = parse(body, "etcd lease grant answer");
  if (!doc) return std::unexpected(doc.error());
  AnswerReader reader(*doc, "lease grant");
  Lease lease;
  std::int64_t ttl = 0;
  std::string error;
  reader.integer("ID", lease.id);
  reader.integer("TTL", ttl);
  reader.text("error", error);
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  // LeaseGrantResponse carries an error string of its own besides the gateway's error bodies.
  if (!error.empty()) return fail(ErrorKind::http, "etcd lease grant: " + error);
  if (lease.id == 0 || ttl <= 0) {
    return fail(ErrorKind::bad_answer, "etcd answer: lease grant without an ID or TTL");
  }
  lease.ttl = std::chrono::seconds{ttl};
  return lease;
}

Result<std::chrono::seconds> decode_keep_alive(std::string_view body) {
  auto doc = parse(body, "etcd lease keep-alive answer");
  if (!doc) return std::unexpected(doc.error());
  // The keep-alive is a gRPC stream: the gateway wraps each message in "result" (or "error").
  AnswerReader reader(*doc, "keepalive");
  const auto* result = reader.object("result");
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  if (result == nullptr) {
    return fail(ErrorKind::bad_answer, "etcd answer: lease keep-alive without a result");
  }
  AnswerReader r(*result, reader.at("result"));
  std::int64_t ttl = 0;
  r.integer("TTL", ttl);
  if (auto ok = r.done(); !ok) return std::unexpected(ok.error());
  return std::chrono::seconds{ttl < 0 ? 0 : ttl};
}

Result<std::string> decode_authenticate(std::string_view body) {
  auto doc = parse(body, "etcd authenticate answer");
  if (!doc) return std::unexpected(doc.error());
  AnswerReader reader(*doc, "authenticate");
  std::string token;
  reader.text("token", token);
  if (auto ok = reader.done(); !ok) return std::unexpected(ok.error());
  if (token.empty())
    return fail(ErrorKind::bad_answer, "etcd answer: authenticate without a token");
  return token;
}

}  // namespace cn::etcd
