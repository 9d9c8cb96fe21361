#pragma once
// A NomadApi whose every call fails: the base of test doubles that model one or two calls and
// must show any other. `refused(call)` says what a call that was not modelled does; by default it
// only fails, a test that must never reach Nomad overrides it to ADD_FAILURE as well.
#include <string>
#include <string_view>

#include "common/nomad/client/nomad_api.h"

namespace cn::testing {

class RefusingNomad : public nomad::NomadApi {
 public:
  Result<std::string> local_node_id(Deadline) override { return refuse("local_node_id"); }
  Result<nomad::Allocation> allocation(std::string_view, Deadline) override {
    return refuse("allocation");
  }
  Result<nomad::Job> job(std::string_view, std::string_view, Deadline) override {
    return refuse("job");
  }
  Result<nomad::Indexed<nomad::AllocationList>> node_allocations(
      std::string_view, std::uint64_t, std::chrono::seconds, MonoTime, std::stop_token,
      const nomad::AllocationSelector&) override {
    return refuse("node_allocations");
  }
  Status event_stream(const nomad::EventStreamQuery&, const std::function<bool(std::string_view)>&,
                      std::chrono::milliseconds, std::stop_token) override {
    return refuse("event_stream");
  }
  Result<nomad::Indexed<std::vector<nomad::VariableMeta>>> variables(std::string_view,
                                                                     std::string_view,
                                                                     std::uint64_t,
                                                                     std::chrono::seconds, MonoTime,
                                                                     std::stop_token) override {
    return refuse("variables");
  }
  Result<std::vector<nomad::NodeStub>> nodes(Deadline) override { return refuse("nodes"); }
  Result<nomad::Variable> variable(std::string_view, std::string_view, Deadline) override {
    return refuse("variable");
  }

 protected:
  virtual void refused(std::string_view /*call*/) {}

 private:
  std::unexpected<Error> refuse(std::string_view call) {
    refused(call);
    return std::unexpected(Error{ErrorKind::invalid, std::string(call) + ": not modelled here"});
  }
};

}  // namespace cn::testing
