#pragma once

// The checkpoint agent's side effects (agent.h): signalling the trainer's process, writing the
// request file, patching the pod, and finding out which pod it is in.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/agent.h"
#include "rota/admission/status.h"
#include "rota/apiclient/client.h"

namespace rota::checkpoint {

// A signal by its name ("SIGUSR1", "USR1", case ignored) or number.
Result<int> ParseSignal(std::string_view text);

// The processes named `name` under `proc_root` (/proc): those whose comm is `name`, or whose first
// argument, or its base name, is. A match whose parent is a match too is left out: it is a worker
// forked by the trainer, which has the trainer's name but not its handlers. `self` is left out.
std::vector<int> ProcessesNamed(const std::string& proc_root, const std::string& name, int self);

// Sends a signal to the trainer's processes (ProcessesNamed). With shareProcessNamespace: true the
// agent sees the trainer container's processes; it may signal them when it runs as the same user
// (or has CAP_KILL).
class SignalChannel : public TrainerChannel {
 public:
  SignalChannel(std::string process, int signal, std::string proc_root = "/proc");
  Result<std::string> Request(const std::string& requested_at) override;

 private:
  const std::string process_;
  const int signal_;
  const std::string proc_root_;
};

// Writes the request's time (and a newline) to a file the trainer watches: to a temporary file
// beside it, then renamed over it, so the trainer never reads it half written.
class RequestFileChannel : public TrainerChannel {
 public:
  explicit RequestFileChannel(std::string path) : path_(std::move(path)) {}
  Result<std::string> Request(const std::string& requested_at) override;

 private:
  const std::string path_;
};

// The merge patch that annotates rota.dev/checkpointed-at: `checkpointed_at`.
apiclient::Json CheckpointedAtPatch(const std::string& checkpointed_at);

// Reports by patching the agent's own pod (RBAC: patch on pods in its namespace).
class PodAnnotationReporter : public CheckpointReporter {
 public:
  PodAnnotationReporter(apiclient::Client& client, std::string pod_namespace, std::string pod)
      : client_(client), namespace_(std::move(pod_namespace)), pod_(std::move(pod)) {}
  Status Report(const std::string& checkpointed_at) override;

 private:
  apiclient::Client& client_;
  const std::string namespace_, pod_;
};

struct PodName {
  std::string pod_namespace, name;
};

// The pod the agent runs in: `pod` and `pod_namespace` when given, else the environment's
// POD_NAME and POD_NAMESPACE (the downward API's metadata.name and metadata.namespace), else
// HOSTNAME (the pod's name unless its spec sets hostname, as an Indexed Job's does) and the
// service account's `namespace_file`. An error says which one could not be found.
Result<PodName> ResolvePodName(const std::string& pod, const std::string& pod_namespace,
                               const std::function<const char*(const char*)>& getenv,
                               const std::string& namespace_file);

}  // namespace rota::checkpoint
