#pragma once
// The reconcile with the SAX decoder the byte-skipping reader replaced, for the reconcile bench to
// run beside today's in the same pass: every call goes to the real curl client except the node's
// allocation list, fetched raw from the same server and decoded by the old SAX filter
// (sax_field_filter.h).
#include <string>

#include "common/nomad/client/nomad_api.h"

namespace cn::bench {

class SaxDecodingNomad final : public nomad::NomadApi {
 public:
  // `port`: the loopback port of the server `inner` talks to.
  SaxDecodingNomad(nomad::NomadApi& inner, int port) : inner_(inner), port_(port) {}

  Result<std::string> local_node_id(Deadline deadline) override {
    return inner_.local_node_id(deadline);
  }
  Result<nomad::Allocation> allocation(std::string_view alloc_id, Deadline deadline) override {
    return inner_.allocation(alloc_id, deadline);
  }
  Result<nomad::Job> job(std::string_view nomad_namespace, std::string_view job_id,
                         Deadline deadline) override {
    return inner_.job(nomad_namespace, job_id, deadline);
  }
  Result<nomad::Indexed<nomad::AllocationList>> node_allocations(
      std::string_view node_id, std::uint64_t index, std::chrono::seconds wait, MonoTime deadline,
      std::stop_token stop, const nomad::AllocationSelector& with_job) override;
  Status event_stream(const nomad::EventStreamQuery& query,
                      const std::function<bool(std::string_view line)>& on_line,
                      std::chrono::milliseconds idle_timeout, std::stop_token stop) override {
    return inner_.event_stream(query, on_line, idle_timeout, std::move(stop));
  }
  Result<nomad::Indexed<std::vector<nomad::VariableMeta>>> variables(
      std::string_view nomad_namespace, std::string_view prefix, std::uint64_t index,
      std::chrono::seconds wait, MonoTime deadline, std::stop_token stop) override {
    return inner_.variables(nomad_namespace, prefix, index, wait, deadline, std::move(stop));
  }
  Result<nomad::Variable> variable(std::string_view nomad_namespace, std::string_view path,
                                   Deadline deadline) override {
    return inner_.variable(nomad_namespace, path, deadline);
  }
  Result<std::vector<nomad::NodeStub>> nodes(Deadline deadline) override {
    return inner_.nodes(std::move(deadline));
  }

 private:
  nomad::NomadApi& inner_;
  int port_;
};

}  // namespace cn::bench
