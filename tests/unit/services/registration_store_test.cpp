// Registrations kept current from a listing and the Service event topic, with Nomad's own
// event shapes (nomad/state/events.go, nomad/structs/event.go in hashicorp/nomad).
#include "labeler/services/registration_store.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

nomad::ServiceRegistration stored(const char* alloc, const char* name, std::uint64_t modify_index,
                                  const char* address = "10.200.3.17") {
  return testing::registration(alloc, address, 8080, name, "http", modify_index);
}

// One line of the stream as Nomad writes it, parsed by the one frame parser.
nomad::EventFrame frame(std::uint64_t index, const char* type,
                        const nomad::ServiceRegistration& r) {
  nlohmann::json service = {{"Address", r.address},
                            {"AllocID", r.alloc_id},
                            {"CreateIndex", r.create_index},
                            {"Datacenter", "dc1"},
                            {"ID", r.id},
                            {"JobID", "web"},
                            {"ModifyIndex", r.modify_index},
                            {"Namespace", r.nomad_namespace},
                            {"NodeID", "n1"},
                            {"Port", r.port},
                            {"ServiceName", r.service_name},
                            {"Tags", nlohmann::json::array()}};
  nlohmann::json line = {{"Index", index},
                         {"Events",
                          {{{"Topic", "Service"},
                            {"Type", type},
                            {"Key", r.id},
                            {"Namespace", r.nomad_namespace},
                            {"Index", index},
                            {"FilterKeys", {"web", r.service_name}},
                            {"Payload", {{"Service", service}}}}}}};
  auto parsed = nomad::parse_event_frame(line.dump());
  EXPECT_TRUE(parsed) << parsed.error().message;
  return std::get<nomad::EventFrame>(*parsed);
}

TEST(RegistrationStore, UpsertsAndEveryOtherTypeIsADeletion) {
  RegistrationStore store;
  store.replace({stored("a1", "web", 10)}, 10);
  EXPECT_TRUE(store.apply(frame(11, "ServiceRegistration", stored("a2", "web", 11))));
  EXPECT_EQ(store.size(), 2u);
  // Deletions come under the Type of whatever removed them.
  for (const char* type :
       {"ServiceDeregistration", "AllocationUpdated", "PlanResult", "NodeStreamEvent"}) {
    RegistrationStore s;
    s.replace({stored("a1", "web", 10)}, 10);
    EXPECT_TRUE(s.apply(frame(12, type, stored("a1", "web", 10)))) << type;
    EXPECT_EQ(s.size(), 0u) << type;
  }
  EXPECT_EQ(store.index(), 11u);
}

TEST(RegistrationStore, WhatTheListingAlreadyHoldsIsSkipped) {
  RegistrationStore store;
  store.replace({stored("a1", "web", 10)}, 20);
  EXPECT_FALSE(store.apply(frame(15, "ServiceDeregistration", stored("a1", "web", 10))));
  EXPECT_EQ(store.size(), 1u);
  // An upsert older than what is held changes nothing either, nor does the same content again.
  auto newer = stored("a1", "web", 25, "10.200.9.9");
  EXPECT_TRUE(store.apply(frame(25, "ServiceRegistration", newer)));
  EXPECT_FALSE(store.apply(frame(26, "ServiceRegistration", stored("a1", "web", 22))));
  EXPECT_FALSE(store.apply(frame(27, "ServiceRegistration", newer)));
  EXPECT_EQ(store.all()[0].address, "10.200.9.9");
}

TEST(RegistrationStore, AListingReplacesEverythingSoGarbageCollectedOnesGo) {
  // Allocation garbage collection deletes registrations without an event.
  RegistrationStore store;
  store.replace({stored("a1", "web", 10), stored("a2", "db", 11)}, 11);
  store.replace({stored("a2", "db", 11)}, 40);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(service_ids(store.all()), (std::set<ServiceId>{{"default", "db"}}));
  EXPECT_EQ(store.index(), 40u);
}

TEST(RegistrationStore, ABadPayloadCostsOnlyItsEvent) {
  auto line = R"({"Index":30,"Events":[
    {"Topic":"Service","Type":"ServiceRegistration","Key":"x","Namespace":"default","Index":30,
     "Payload":{"Service":{"ID":"x","Port":"80"}}},
    {"Topic":"Service","Type":"ServiceRegistration","Key":"y","Namespace":"default","Index":30,
     "Payload":{"Service":{"ID":"y","ServiceName":"web","Namespace":"default","AllocID":"a9",
                           "Address":"10.200.0.9","Port":80}}}]})";
  auto parsed = nomad::parse_event_frame(line);
  ASSERT_TRUE(parsed) << parsed.error().message;
  const auto& f = std::get<nomad::EventFrame>(*parsed);
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_TRUE(f.events[0].payload_error);
  EXPECT_FALSE(f.events[0].service);
  RegistrationStore store;
  EXPECT_TRUE(store.apply(f));
  ASSERT_EQ(store.size(), 1u);
  EXPECT_EQ(store.all()[0].id, "y");
}

}  // namespace
}  // namespace cn::labeler
