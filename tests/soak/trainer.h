#pragma once

// The trainers of the soak's checkpointable Jobs (docs/checkpoint.md): a pod asked to checkpoint
// (annotation rota.dev/checkpoint-requested-at) answers with rota.dev/checkpointed-at a moment
// later, as a trainer that saved would; the pods of every other Job never answer, so their
// requests run to the deadline. Which Jobs answer is fixed by name, so a seed replays it.

#include <atomic>
#include <string>

#include "rota/apiclient/client.h"
#include "soak/soak_setup.h"

namespace rota::soak {

// Whether the pods of Job `job` answer checkpoint requests.
bool Answers(const std::string& job);

class Trainers {
 public:
  Trainers(apiclient::Client& client, const Setup& setup) : client_(client), setup_(setup) {}
  // Looks at the namespace's pods twice a second until `stop`, answering open requests.
  void Run(const std::atomic<bool>& stop);
  int answered() const { return answered_.load(); }

 private:
  void AnswerOpenRequests();
  apiclient::Client& client_;
  const Setup& setup_;
  std::atomic<int> answered_{0};
};

}  // namespace rota::soak
