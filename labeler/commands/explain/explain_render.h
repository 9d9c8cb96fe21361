#pragma once
// `explain` output: one screen of text for a person, or the same facts as one JSON object.
#include <string>

#include <nlohmann/json.hpp>

#include "labeler/commands/explain/explain_facts.h"
#include "labeler/commands/explain/explain_verdict.h"

namespace cn::labeler::explain {

std::string render_text(const ExplainFacts& facts, const Verdict& verdict);
nlohmann::json render_json(const ExplainFacts& facts, const Verdict& verdict);

}  // namespace cn::labeler::explain
