#include "soak/job_stream.h"

#include <cstdio>
#include <functional>
#include <thread>

namespace rota::soak {

using namespace std::chrono_literals;

Json JobObject(const std::string& name, const std::string& ns, const JobShape& shape) {
  Json container = {{"name", "train"},
                    {"image", "registry.example/train:1"},
                    {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(shape.gpus_each)}}}}}};
  Json pod = {
      {"metadata",
       {{"annotations", {{"pod-complete.stage.kwok.x-k8s.io/delay", std::to_string(shape.runtime.count()) + "s"}}}}},
      {"spec", {{"restartPolicy", "Never"}, {"terminationGracePeriodSeconds", 5}, {"containers", {container}}}}};
  Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
  job["metadata"] = {{"name", name}, {"namespace", ns}};
  job["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", shape.queue},
                               {"kueue.x-k8s.io/priority-class", shape.priority_class}};
  if (shape.checkpoint)
    job["metadata"]["annotations"] = {{"rota.dev/checkpoint", "true"}, {"rota.dev/checkpoint-timeout", "5s"}};
  job["spec"] = {{"suspend", true},
                 {"parallelism", shape.pods},
                 {"completions", shape.pods},
                 {"backoffLimit", 6},
                 {"template", pod}};
  return job;
}

JobShape JobStream::Draw() {
  auto pick = [this](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); };
  JobShape s;
  s.queue = setup_.teams[pick(0, static_cast<int>(setup_.teams.size()) - 1)];
  s.priority_class = pick(1, 10) <= 3 ? setup_.high : setup_.low;
  s.pods = pick(1, 3);
  s.gpus_each = pick(1, 2);
  s.runtime = std::chrono::seconds(pick(4, 15));
  return s;
}

void JobStream::Run(const std::atomic<bool>& stop) {
  std::exponential_distribution<double> gap(1.0 / static_cast<double>(mean_gap_.count()));
  for (int n = 1; !stop; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "job-%05d", n);
    JobShape shape = Draw();
    // (By name, not by a draw: a seed's stream of Jobs and faults stays what it was before.)
    shape.checkpoint = std::hash<std::string>{}(name) % 3 == 0;
    const Json job = JobObject(name, setup_.ns, shape);
    while (!stop) {
      auto made = client_.Create(apiclient::resources::kJobs, setup_.ns, job);
      if (made.ok() || made.error().IsAlreadyExists()) {
        std::lock_guard l(mu_);
        submitted_.push_back(name);
        break;
      }
      std::this_thread::sleep_for(200ms);  // the apiserver is restarting
    }
    const auto wait = std::chrono::milliseconds(static_cast<int64_t>(gap(rng_)));
    for (auto until = std::chrono::steady_clock::now() + wait; !stop && std::chrono::steady_clock::now() < until;)
      std::this_thread::sleep_for(50ms);
  }
}

std::vector<std::string> JobStream::submitted() const {
  std::lock_guard l(mu_);
  return submitted_;
}

std::optional<std::chrono::steady_clock::time_point> Probe(apiclient::Client& client, const Setup& setup, int n,
                                                           std::chrono::seconds timeout) {
  const std::string name = "probe-" + std::to_string(n);
  const Json job = JobObject(name, setup.ns, {setup.probe, setup.high, 1, 1, 1s});
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<std::chrono::steady_clock::time_point> admitted;
  bool created = false;
  while (!admitted && std::chrono::steady_clock::now() < deadline) {
    if (!created) {
      auto made = client.Create(apiclient::resources::kJobs, setup.ns, job);
      created = made.ok() || made.error().IsAlreadyExists();
    } else if (auto got = client.Get(apiclient::resources::kJobs, setup.ns, name); got.ok()) {
      if (!(*got)["spec"].value("suspend", true)) admitted = std::chrono::steady_clock::now();
    }
    if (!admitted) std::this_thread::sleep_for(100ms);
  }
  apiclient::DeleteOptions background;
  background.propagation_policy = "Background";
  (void)client.Delete(apiclient::resources::kJobs, setup.ns, name, background);
  return admitted;
}

}  // namespace rota::soak
