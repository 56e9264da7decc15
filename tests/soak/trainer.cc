#include "soak/trainer.h"

#include <chrono>
#include <ctime>
#include <functional>
#include <thread>

namespace rota::soak {
namespace {

std::string RfcNow() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Annotation(const Json& pod, const char* key) {
  const Json& a = pod["metadata"].value("annotations", Json::object());
  auto it = a.find(key);
  return it != a.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool Answers(const std::string& job) { return std::hash<std::string>{}(job) % 2 == 0; }

void Trainers::Run(const std::atomic<bool>& stop) {
  while (!stop) {
    AnswerOpenRequests();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void Trainers::AnswerOpenRequests() {
  auto pods = client_.ListAll(apiclient::resources::kPods, setup_.ns);
  if (!pods.ok()) return;  // (the apiserver may be restarting: the next look answers)
  for (const Json& pod : pods->items) {
    const std::string requested = Annotation(pod, "rota.dev/checkpoint-requested-at");
    const std::string job = pod["metadata"].value("labels", Json::object()).value("batch.kubernetes.io/job-name", "");
    // (RFC 3339 times in UTC of the same form order as text.)
    if (requested.empty() || !Answers(job) || Annotation(pod, "rota.dev/checkpointed-at") >= requested) continue;
    const Json patch = {{"metadata", {{"annotations", {{"rota.dev/checkpointed-at", RfcNow()}}}}}};
    auto r = client_.Patch(apiclient::resources::kPods, setup_.ns, pod["metadata"].value("name", ""),
                           apiclient::PatchType::kMerge, patch);
    if (r.ok()) ++answered_;
  }
}

}  // namespace rota::soak
