#pragma once
// Nomad names the children of a periodic job `<parent>/periodic-<unix seconds>` and those of a
// parameterized job `<parent>/dispatch-<unix seconds>-<8 hex>`. Every child is a new job ID, so
// labelling by the child ID would mint a fresh identity per launch; the parent is the stable name.
#include <string>
#include <string_view>

namespace cn::labels {

// The parent of a child job ID by the patterns above (one level, split at the LAST '/', since a
// parent ID may itself contain '/'); any other ID is returned unchanged. Only for when the real
// `Job.ParentID` is unknown (the CNI plugin with Nomad unreachable): the pattern is a guess a job
// could imitate by its name, ParentID is authoritative.
std::string parent_job_of(std::string_view job_id);

}  // namespace cn::labels
