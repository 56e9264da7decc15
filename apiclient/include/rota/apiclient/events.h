#pragma once

// Kubernetes Events (core/v1) for the objects a controller acts on, with client-go's
// de-duplication: the same event for the same object within ten minutes increments the existing
// Event's count instead of creating a new one, and each object gets at most `burst` distinct
// events, refilled one per `refill` — so a busy controller cannot flood the apiserver.
//
// Thread-safe; calls are synchronous (run them off hot paths).

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "rota/apiclient/client.h"

namespace rota::apiclient {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
};

class EventRecorder {
 public:
  EventRecorder(Client& client, std::string component, int burst = 25,
                std::chrono::seconds refill = std::chrono::minutes(5));

  // `type` is "Normal" or "Warning"; `reason` a CamelCase word; `message` a sentence.
  // Returns false when the event was dropped by the spam filter or could not be written.
  bool Record(const ObjectReference& object, const std::string& type, const std::string& reason,
              const std::string& message);

 private:
  struct Seen {
    std::string event_name;
    std::string event_namespace;
    int count = 0;
    Clock::TimePoint last;
  };
  struct Bucket {
    double tokens;
    Clock::TimePoint last;
  };

  Client& client_;
  std::string component_;
  int burst_;
  std::chrono::seconds refill_;
  std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Seen> seen_;
  std::map<std::string, Bucket> buckets_;  // per object uid (or key)
  uint64_t serial_ = 0;
};

}  // namespace rota::apiclient
