#pragma once

// `rota checkpoint-agent`: the trainer's side of rota's checkpoint handshake, for trainers that
// only know signals or files. It runs beside the trainer in the pod and
// - follows the pod's annotations (a downward API volume file): when
//   rota.dev/checkpoint-requested-at shows a new time, it asks the trainer to checkpoint, once
//   per time (a signal to the trainer's process, or a request file, behind TrainerChannel);
// - watches the checkpoint directory: when a newer checkpoint is saved there, it annotates the
//   pod rota.dev/checkpointed-at with the checkpoint's modification time (behind
//   CheckpointReporter). That is both the periodic report and the answer to a request: rota
//   evicts the pod once checkpointed-at >= requested-at.
// A step that fails (trainer not found, patch refused) is logged and tried again at the next
// poll, so nothing is lost while the agent runs; after a restart it starts from what the
// annotations show.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/annotations_file.h"
#include "logger.h"
#include "rota/admission/status.h"
#include "rota/apiclient/clock.h"

namespace rota::checkpoint {

// How a request reaches the trainer.
class TrainerChannel {
 public:
  virtual ~TrainerChannel() = default;
  // Asks the trainer to checkpoint: rota requested it at `requested_at` (the annotation's value).
  // Says what was done, for the log.
  virtual Result<std::string> Request(const std::string& requested_at) = 0;
};

// Where a saved checkpoint is reported.
class CheckpointReporter {
 public:
  virtual ~CheckpointReporter() = default;
  // Records rota.dev/checkpointed-at: `checkpointed_at` (RFC 3339, UTC, seconds).
  virtual Status Report(const std::string& checkpointed_at) = 0;
};

struct AgentOptions {
  std::string annotations_file;  // the downward API file of metadata.annotations
  std::string checkpoint_dir;
  // Empty: every regular file under checkpoint_dir is a checkpoint. Else only files of this name
  // (the trainer writes it once a checkpoint is complete).
  std::string done_file;
  // A file the agent writes itself (the request file): never a checkpoint, even when it is in
  // checkpoint_dir.
  std::string own_file;
  std::chrono::milliseconds poll{1000};
  // How often Run looks at its stop flag while it waits for the next poll.
  std::chrono::milliseconds stop_check{100};
};

// A file under the checkpoint directory, as stat showed it.
struct CheckpointFile {
  std::string path;
  std::chrono::system_clock::time_point modified;
  uintmax_t size = 0;
  bool operator==(const CheckpointFile&) const = default;
};

// The most recently modified checkpoint under `dir` (subdirectories included; names starting
// with '.' are skipped, as writers use them for files not yet complete), nullopt when there is
// none. With `done_file`, only files of that name count; `except` (a path) never does. An error
// when `dir` cannot be read.
Result<std::optional<CheckpointFile>> NewestCheckpoint(const std::string& dir, const std::string& done_file,
                                                       const std::string& except = "");

// The handshake's loop. Thread: Poll and Run on one thread; `stop` may be set from any.
class Agent {
 public:
  Agent(AgentOptions options, TrainerChannel& trainer, CheckpointReporter& reporter, apiclient::Clock& clock,
        controller::Logger log);

  // One look at the annotations and at the checkpoint directory, acting on what changed.
  void Poll();
  // Polls every options.poll until `stop`.
  void Run(const std::atomic<bool>& stop);

 private:
  void PollRequest();
  void PollCheckpoints();
  // Logs `message` at `level` unless it is what `last` already said; `last` remembers it.
  void LogChange(std::string& last, const std::string& level, const std::string& message);

  const AgentOptions options_;
  TrainerChannel& trainer_;
  CheckpointReporter& reporter_;
  apiclient::Clock& clock_;
  const controller::Logger log_;

  std::string requested_;  // the last request passed on to the trainer (or found answered)
  // The latest checkpointed-at (Unix seconds) the pod shows or was patched with.
  std::optional<int64_t> checkpointed_at_;
  // A checkpoint is reported once it is unchanged over two polls in a row (a file being written
  // is not), so the newest one seen last poll waits here.
  std::optional<CheckpointFile> candidate_;
  // What was last logged about each step that can keep failing, so a failure is logged when it
  // starts or changes rather than at every poll.
  std::string annotations_error_, request_error_, directory_error_, report_error_;
};

}  // namespace rota::checkpoint
