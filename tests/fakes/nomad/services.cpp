#include "tests/fakes/nomad/services.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace cn::fakes {

bool ServiceRegistration::same_content(const ServiceRegistration& o) const {
  return id == o.id && service_name == o.service_name && namespace_ == o.namespace_ &&
         node_id == o.node_id && datacenter == o.datacenter && job_id == o.job_id &&
         alloc_id == o.alloc_id && address == o.address && port == o.port &&
         std::set<std::string>(tags.begin(), tags.end()) ==
             std::set<std::string>(o.tags.begin(), o.tags.end());
}

std::string service_registration_id(const std::string& alloc_id, const std::string& task,
                                    const std::string& group, const std::string& service_name,
                                    const std::string& port_label) {
  std::string workload = task.empty() ? "group-" + group : task;
  return "_nomad-task-" + alloc_id + "-" + workload + "-" + service_name + "-" + port_label;
}

nlohmann::json encode_service_registration(const ServiceRegistration& r) {
  return {
      {"Address", r.address},
      {"AllocID", r.alloc_id},
      {"CreateIndex", r.create_index},
      {"Datacenter", r.datacenter},
      {"ID", r.id},
      {"JobID", r.job_id},
      {"ModifyIndex", r.modify_index},
      {"Namespace", r.namespace_},
      {"NodeID", r.node_id},
      {"Port", r.port},
      {"ServiceName", r.service_name},
      {"Tags", nlohmann::json(r.tags.empty() ? nlohmann::json::array() : nlohmann::json(r.tags))}};
}

bool ServiceTable::upsert(ServiceRegistration reg, std::uint64_t index) {
  Key key{reg.namespace_, reg.id};
  auto it = rows_.find(key);
  if (it != rows_.end()) {
    if (it->second.same_content(reg)) return false;
    reg.create_index = it->second.create_index;
  } else {
    reg.create_index = index;
  }
  reg.modify_index = index;
  index_ = index;
  touch(reg);
  rows_[key] = std::move(reg);
  return true;
}

std::optional<ServiceRegistration> ServiceTable::remove(const std::string& ns,
                                                        const std::string& id,
                                                        std::uint64_t index) {
  auto it = rows_.find(Key{ns, id});
  if (it == rows_.end()) return std::nullopt;
  ServiceRegistration gone = std::move(it->second);
  rows_.erase(it);
  index_ = index;
  touch(gone);
  return gone;
}

std::vector<ServiceRegistration> ServiceTable::of_alloc(const std::string& alloc_id) const {
  std::vector<ServiceRegistration> out;
  for (const auto& [key, r] : rows_) {
    if (r.alloc_id == alloc_id) out.push_back(r);
  }
  return out;
}

std::uint64_t ServiceTable::version(const std::string& watch_key) const {
  auto it = versions_.find(watch_key);
  return it == versions_.end() ? 0 : it->second;
}

std::string ServiceTable::watch_name(const std::string& ns, const std::string& name) {
  return "name\n" + ns + "\n" + name;
}

std::string ServiceTable::watch_namespace(const std::string& ns) {
  return "namespace\n" + ns;
}

std::string ServiceTable::watch_alloc(const std::string& alloc_id) {
  return "alloc\n" + alloc_id;
}

std::string ServiceTable::watch_job(const std::string& ns, const std::string& job_id) {
  return "job\n" + ns + "\n" + job_id;
}

void ServiceTable::touch(const ServiceRegistration& r) {
  for (const auto& key :
       {watch_name(r.namespace_, r.service_name), watch_namespace(r.namespace_),
        watch_alloc(r.alloc_id), watch_job(r.namespace_, r.job_id), std::string()}) {
    ++versions_[key];
  }
}

void ServiceTable::clamp(std::uint64_t index) {
  index_ = std::min(index_, index);
  for (auto& [key, r] : rows_) {
    r.create_index = std::min(r.create_index, index);
    r.modify_index = std::min(r.modify_index, index);
  }
  for (auto& [key, v] : versions_) ++v;
}

namespace {

std::string hex_digest(const std::string& data, bool sha256) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, sha256 ? EVP_sha256() : EVP_md5(), nullptr);
  std::string out;
  char hex[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

}  // namespace

std::string choose_hash(const ServiceRegistration& r, const std::string& key, bool sha256) {
  std::string data;
  const auto port = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.port));
  for (int shift = 56; shift >= 0; shift -= 8) {
    data += static_cast<char>((port >> shift) & 0xff);
  }
  data += r.alloc_id + r.id + r.namespace_ + r.address + r.service_name;
  for (const auto& tag : r.tags) data += tag;
  data += key;
  return hex_digest(data, sha256);
}

std::string check_id(const std::string& alloc_id, const std::string& group,
                     const std::string& service, const std::string& check, bool sha256) {
  return hex_digest(alloc_id + "\n" + group + "\n" + service + "\n" + check, sha256);
}

nlohmann::json encode_check_result(const CheckResult& c) {
  nlohmann::json j = {{"Check", c.check},   {"Group", c.group},        {"ID", c.id},
                      {"Mode", c.mode},     {"Output", c.output},      {"Service", c.service},
                      {"Status", c.status}, {"Timestamp", c.timestamp}};
  // json omitempty on these two (client/structs CheckQueryResult), which the encoder honours.
  if (!c.task.empty()) j["Task"] = c.task;
  if (c.status_code != 0) j["StatusCode"] = c.status_code;
  return j;
}

bool version_at_least(const std::string& version, int major, int minor, int patch) {
  int v[3] = {0, 0, 0};
  std::size_t part = 0;
  for (char ch : version) {
    if (ch == '.') {
      if (++part == 3) break;
    } else if (ch >= '0' && ch <= '9') {
      v[part] = v[part] * 10 + (ch - '0');
    } else {
      break;
    }
  }
  int want[3] = {major, minor, patch};
  return std::lexicographical_compare(want, want + 3, v, v + 3) || std::equal(want, want + 3, v);
}

}  // namespace cn::fakes
