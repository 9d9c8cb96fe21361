#include "common/nomad/model/event_frame.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

constexpr std::string_view kAllocationTopic = "Allocation";
constexpr std::string_view kServiceTopic = "Service";

void read_service_payload(JsonReader& r, const nlohmann::json& payload, Event& event) {
  auto it = payload.find("Service");
  if (it == payload.end() || it->is_null()) {
    event.payload_error =
        Error{ErrorKind::bad_answer, r.at("Payload").key("Service").error("missing"), 0, 0};
    return;
  }
  auto service = read_service_registration(*it, r.at("Payload").key("Service"));
  if (service) {
    event.service = std::move(*service);
  } else {
    event.payload_error = std::move(service.error());
  }
}

void read_payload(JsonReader& r, Event& event) {
  const auto* payload = r.object("Payload");
  if (payload == nullptr) return;
  if (event.topic == kServiceTopic) return read_service_payload(r, *payload, event);
  if (event.topic != kAllocationTopic) return;
  auto it = payload->find("Allocation");
  if (it == payload->end() || it->is_null()) {
    event.payload_error =
        Error{ErrorKind::bad_answer, r.at("Payload").key("Allocation").error("missing"), 0, 0};
    return;
  }
  auto alloc = parse_allocation(*it, r.at("Payload").key("Allocation"));
  if (alloc) {
    event.allocation = std::move(*alloc);
  } else {
    event.payload_error = std::move(alloc.error());
  }
}

Result<Event> parse_event(const nlohmann::json& value, const json::JsonWhere& where) {
  JsonReader r(value, where);
  Event event;
  r.read("Topic", event.topic);
  r.read("Type", event.type);
  r.read("Key", event.key);
  r.read("Namespace", event.nomad_namespace);
  r.read("Index", event.index);
  r.read("FilterKeys", event.filter_keys);
  if (r.ok()) read_payload(r, event);
  if (!r.ok()) return fail(r.error());
  return event;
}

}  // namespace

Result<StreamMessage> parse_event_frame(std::string_view line) {
  auto doc = json::parse_json_text(line, "event stream line");
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_object() && doc->empty()) return StreamMessage{Heartbeat{}};

  JsonReader r(*doc, "Frame");
  EventFrame frame;
  r.read("Index", frame.index);
  if (const auto* events = r.array("Events")) {
    frame.events.reserve(events->size());
    for (std::size_t i = 0; i < events->size(); ++i) {
      auto event = parse_event((*events)[i], r.at("Events", i));
      if (!event) return std::unexpected(event.error());
      frame.events.push_back(std::move(*event));
    }
  }
  if (!r.ok()) return fail(r.error());
  return StreamMessage{std::move(frame)};
}

}  // namespace cn::nomad
