#pragma once
// `cilium-nomad-labeler explain`: the whole path of one allocation on this node, from read-only
// calls to the agent and Nomad and from the files. It never writes, and needs no running daemon.
#include <ostream>
#include <string>

#include "labeler/commands/explain/explain_facts.h"

namespace cn::labeler::explain {

// Exit codes: 0 when nothing needs fixing, 1 when the verdict names a problem or the query
// cannot be resolved.
int explain(std::string_view query, bool as_json, const ExplainSettings& settings,
            nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock, std::ostream& out,
            std::ostream& err);

}  // namespace cn::labeler::explain
