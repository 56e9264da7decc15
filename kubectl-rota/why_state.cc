#include <map>

#include "rota/kubectl/why.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {

namespace wc = api::workload_condition;

std::pair<std::string, std::string> StateOf(const api::Workload& w) {
  auto said = [&](std::string_view type) {
    const api::Condition* c = ConditionOf(w, type);
    return c ? c->reason + ": " + c->message : std::string();
  };
  const bool holds = w.status && w.status->admission;
  if (!w.spec.active) return {"Inactive", "deactivated (spec.active is false): it is not queued"};
  if (IsFinished(w)) return {"Finished", "finished (" + said(wc::kFinished) + ")"};
  if (IsTrue(w, wc::kCheckpointRequested)) {
    return {"WaitingForCheckpoint",
            "admitted, and asked to checkpoint before it is preempted; it keeps running until it answers or its "
            "deadline passes (" +
                said(wc::kCheckpointRequested) + ")"};
  }
  if (IsTrue(w, wc::kEvicted)) {
    return {"Evicted", holds ? "being evicted (" + said(wc::kEvicted) + "); it holds its quota until its pods are gone"
                             : "evicted (" + said(wc::kEvicted) + "); it waits to be admitted again"};
  }
  if (holds) return {"Admitted", "admitted by ClusterQueue " + w.status->admission->cluster_queue};
  return {"Pending", "waiting to be admitted"};
}

std::string ReasonInWords(const std::string& reason, const std::string& message) {
  static const std::map<std::string, std::string> kWords = {
      {"",
       "none written yet: rota writes the reason of the workload at the head of each ClusterQueue's line, and "
       "this one waits behind it (or rota has not seen it yet)"},
      {"WaitingForQuota", "not enough free quota for it in its ClusterQueue (and what it may borrow) right now"},
      {"NoMatchingFlavor", "no flavor of its ClusterQueue offers what it asks for"},
      {"ExceedsMaxQuota",
       "it asks for more than its ClusterQueue could ever give (nominal quota plus what it may borrow)"},
      {"Inadmissible", "it cannot be queued as it is"},
      {"Stopped", "its ClusterQueue is stopped (spec.stopPolicy)"},
      {"ClusterQueueStopped", "its ClusterQueue is stopped (spec.stopPolicy)"},
      {"LocalQueueStopped", "its LocalQueue is stopped (spec.stopPolicy)"},
      {"Pending", "it waits to be admitted (again)"},
      {"Preempted", "it was preempted, and waits to be admitted again"},
  };
  // (rota's reason while a preemptor waits for its victims to checkpoint is Pending too.)
  if (reason == "Pending" && message.find(" to checkpoint") != std::string::npos) {
    return "it waits for the workloads it preempts to checkpoint and give their quota back";
  }
  auto it = kWords.find(reason);
  return it != kWords.end() ? it->second : "reason " + reason;
}

}  // namespace rota::kubectl
