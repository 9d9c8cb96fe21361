#include "labeler/services/lb_state_document.h"

#include "common/util/json_string.h"

namespace cn::labeler {

namespace {

// The document is written straight into one string: with 1,000 services and 10,000 instances it
// is about 5 MB, rewritten on every change, and building a JSON tree first took a large share of a
// pass (docs/benchmarks.md, "Nomad services on the load balancer"). Compact JSON, keys in the
// order below.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  Writer& raw(std::string_view text) {
    out_ += text;
    return *this;
  }
  Writer& str(std::string_view text) {
    append_json_string(out_, text);
    return *this;
  }
  Writer& key(std::string_view name) {
    str(name);
    out_ += ':';
    return *this;
  }
  Writer& num(std::uint64_t value) {
    out_ += std::to_string(value);
    return *this;
  }
  Writer& boolean(bool value) {
    out_ += value ? "true" : "false";
    return *this;
  }

 private:
  std::string& out_;
};

std::string_view family_of(const IpPrefix& address) {
  return address.v6 ? "IPv6" : "IPv4";
}

void write_ports(Writer& w, const std::vector<LbPort>& ports) {
  w.raw("[");
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (i > 0) w.raw(",");
    const auto& p = ports[i];
    w.raw("{").key("name").str(p.name).raw(",").key("protocol").str(to_string(p.protocol));
    w.raw(",").key("port").num(p.port).raw("}");
  }
  w.raw("]");
}

void write_managed_by(Writer& w) {
  w.key(kManagedByLabel).str(kManagedByValue);
}

void write_service(Writer& w, const LbService& s) {
  const std::string vip = ip_text(s.vip);
  w.raw("{").key("metadata").raw("{").key("name").str(s.name).raw(",");
  w.key("namespace").str(s.nomad_namespace).raw(",").key("labels").raw("{");
  write_managed_by(w);
  w.raw("}},").key("spec").raw("{").key("type").str("ClusterIP").raw(",");
  w.key("clusterIP").str(vip).raw(",").key("clusterIPs").raw("[").str(vip).raw("],");
  w.key("ipFamilies").raw("[").str(family_of(s.vip)).raw("],");
  w.key("ipFamilyPolicy").str("SingleStack").raw(",");
  w.key("internalTrafficPolicy").str("Cluster").raw(",");
  w.key("sessionAffinity").str("None").raw(",").key("ports");
  write_ports(w, s.ports);
  w.raw("}}");
}

// One slice per allocation: a slice's ports apply to all of its addresses, and Nomad hands each
// allocation its own (dynamic) ports.
void write_slice(Writer& w, const LbService& s, const LbBackend& b) {
  const bool ready = b.state == BackendState::ready;
  w.raw("{").key("metadata").raw("{").key("name");
  w.str(s.name + "-" + b.alloc_id).raw(",").key("namespace").str(s.nomad_namespace).raw(",");
  w.key("labels").raw("{").key("kubernetes.io/service-name").str(s.name).raw(",");
  write_managed_by(w);
  w.raw("}},").key("addressType").str(family_of(b.address)).raw(",");
  w.key("endpoints").raw("[{").key("addresses").raw("[").str(ip_text(b.address)).raw("],");
  // All three written: 1.18.0-1.18.4 read a missing "serving" as "ready".
  w.key("conditions").raw("{").key("ready").boolean(ready).raw(",").key("serving").boolean(ready);
  w.raw(",").key("terminating").boolean(false).raw("}");
  if (!b.node_name.empty()) w.raw(",").key("nodeName").str(b.node_name);
  w.raw("}],").key("ports");
  write_ports(w, b.ports);
  w.raw("}");
}

}  // namespace

std::string render_lb_state_json(const std::vector<LbService>& services) {
  std::string text;
  std::size_t backends = 0;
  for (const auto& s : services) backends += s.backends.size();
  text.reserve(512 * services.size() + 480 * backends + 64);
  Writer w(text);
  w.raw("{").key("services").raw("[");
  for (std::size_t i = 0; i < services.size(); ++i) {
    if (i > 0) w.raw(",");
    write_service(w, services[i]);
  }
  w.raw("],").key("endpoints").raw("[");
  bool first = true;
  for (const auto& s : services) {
    for (const auto& b : s.backends) {
      if (!first) w.raw(",");
      first = false;
      write_slice(w, s, b);
    }
  }
  w.raw("]}\n");
  return text;
}

}  // namespace cn::labeler
