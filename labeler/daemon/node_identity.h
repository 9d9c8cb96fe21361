#pragma once
// Which Nomad node this labeler runs on, found without more privilege than labeling needs. In
// order (README, "Which node am I on"):
//   1. --node-id (a Nomad job passes ${node.unique.id});
//   2. the Nomad client's own record, <data dir>/client/client-id, which the client writes once
//      and reuses on every restart (hashicorp/nomad client/client.go nodeID: a bare UUID, no
//      newline, read back lowercased; the state dir defaults to <data_dir>/client in
//      command/agent/config.go);
//   3. GET /v1/nodes (node read, which the example ACL policy grants) filtered by this node's
//      name (--node-name, default the hostname, which is also Nomad's default node name):
//      exactly one initializing or ready node, or nothing;
//   4. GET /v1/agent/self, which needs agent read: only for tokens that have it.
// A source that has no answer passes to the next; when none has one, the error names what each
// source said, so that the fix is visible in one line.
#include <functional>
#include <optional>
#include <string>

#include "common/nomad/client/nomad_api.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler {

struct NodeIdentitySources {
  std::string node_id;         // --node-id; empty: discover
  std::string nomad_data_dir;  // --nomad-data-dir; empty: skip the file
  std::string node_name;       // the name to look for in the node list
  // The file reader (tests inject one): the content, or an error whose kind is not_found when
  // the file does not exist.
  std::function<Result<std::string>(const std::string& path)> read_file;
};

struct FoundNodeId {
  std::string id;
  std::string source;        // for the start-up line: flag, client-id file, node list, agent
  bool asked_nomad = false;  // the answer came from a Nomad call
};

// The client-id file of a data directory.
std::string client_id_path(const std::string& nomad_data_dir);
// Reads a whole small file; not_found when it does not exist, io otherwise.
[[nodiscard]] Result<std::string> read_small_file(const std::string& path);

// One pass over the sources. Errors keep the kind of the last remote failure (transport,
// timeout: worth retrying) or permission/not_found/invalid when every source answered and none
// had the ID.
[[nodiscard]] Result<FoundNodeId> find_node_id(const NodeIdentitySources& sources,
                                               nomad::NomadApi& nomad, const Deadline& deadline);

}  // namespace cn::labeler
