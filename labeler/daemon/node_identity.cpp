#include "labeler/daemon/node_identity.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/util/alloc_id.h"

namespace cn::labeler {

namespace {

std::string trimmed_lower(std::string text) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), space));
  text.erase(std::find_if_not(text.rbegin(), text.rend(), space).base(), text.end());
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool live(const nomad::NodeStub& node) {
  // A node that registers but has not yet reported healthy is "initializing"; down and
  // disconnected nodes are other, older registrations of the same host name.
  return node.status == "ready" || node.status == "initializing";
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

bool worth_retrying(ErrorKind kind) {
  return kind != ErrorKind::permission && kind != ErrorKind::not_found &&
         kind != ErrorKind::invalid;
}

}  // namespace

std::string client_id_path(const std::string& nomad_data_dir) {
  std::string dir = nomad_data_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/client/client-id";
}

Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    Error e{err == ENOENT ? ErrorKind::not_found : ErrorKind::io, errno_text(err), 0, err};
    return std::unexpected(e);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Result<FoundNodeId> find_node_id(const NodeIdentitySources& sources, nomad::NomadApi& nomad,
                                 const Deadline& deadline) {
  if (!sources.node_id.empty()) return FoundNodeId{sources.node_id, "--node-id"};
  std::vector<std::string> notes;
  std::optional<ErrorKind> retry_kind;

  if (!sources.nomad_data_dir.empty()) {
    const std::string path = client_id_path(sources.nomad_data_dir);
    auto text = sources.read_file ? sources.read_file(path) : read_small_file(path);
    if (text) {
      std::string id = trimmed_lower(*text);
      if (is_valid_alloc_id(id)) return FoundNodeId{id, "client-id file " + path};
      notes.push_back(path + " holds no node ID");
    } else {
      notes.push_back(path + ": " +
                      (text.error().kind == ErrorKind::not_found
                           ? "missing (not a Nomad client's data directory?)"
                           : text.error().message));
    }
  }

  if (!sources.node_name.empty()) {
    auto nodes = nomad.nodes(deadline);
    if (nodes) {
      std::vector<std::string> same_name;
      std::vector<std::string> candidates;
      std::string only;
      for (const auto& n : *nodes) {
        if (n.name != sources.node_name) continue;
        same_name.push_back(n.id + " (" + n.status + ")");
        if (live(n)) {
          candidates.push_back(n.id + " (" + n.status + ")");
          only = n.id;
        }
      }
      if (candidates.size() == 1) {
        return FoundNodeId{only, "node list, name " + sources.node_name, true};
      }
      if (candidates.empty()) {
        notes.push_back("GET /v1/nodes: no initializing or ready node named \"" +
                        sources.node_name + "\"" +
                        (same_name.empty() ? "" : " (only " + join(same_name, ", ") + ")"));
      } else {
        notes.push_back("GET /v1/nodes: " + std::to_string(candidates.size()) +
                        " live nodes named \"" + sources.node_name +
                        "\": " + join(candidates, ", "));
      }
    } else {
      notes.push_back("GET /v1/nodes: " + nodes.error().message);
      if (worth_retrying(nodes.error().kind)) retry_kind = nodes.error().kind;
    }
  }

  auto self = nomad.local_node_id(deadline);
  if (self) return FoundNodeId{*self, "GET /v1/agent/self", true};
  notes.push_back("GET /v1/agent/self: " + self.error().message +
                  (self.error().kind == ErrorKind::permission ? " (needs agent read)" : ""));
  if (worth_retrying(self.error().kind)) retry_kind = self.error().kind;
  return fail(retry_kind.value_or(self.error().kind),
              "this node's Nomad ID is unknown: " + join(notes, "; "));
}

}  // namespace cn::labeler
