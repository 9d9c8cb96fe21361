#include "labeler/commands/explain/explain.h"

#include "labeler/commands/cli_errors.h"

#include "labeler/commands/explain/explain_render.h"
#include "labeler/commands/explain/explain_verdict.h"

namespace cn::labeler::explain {

int explain(std::string_view query, bool as_json, const ExplainSettings& settings,
            nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock, std::ostream& out,
            std::ostream& err) {
  auto alloc_id = resolve_alloc_id(query, settings, cilium, clock);
  if (!alloc_id) {
    // The node's problem first: a missing state file is why a prefix matches nothing.
    for (const auto& problem : node_problems(settings))
      err << cli::failure_message("explain", problem) << "\n";
    return cli::runtime_failure(err, "explain", alloc_id.error().message);
  }
  ExplainFacts facts = gather_facts(*alloc_id, settings, nomad, cilium, clock);
  Verdict verdict = explain_verdict(facts);
  if (as_json) {
    out << render_json(facts, verdict).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << render_text(facts, verdict);
  }
  return verdict.ok() ? 0 : 1;
}

}  // namespace cn::labeler::explain
