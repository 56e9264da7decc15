#pragma once

// A configuration directory's own replay settings, DIR/replay.yaml, so that --compare can put two
// policies side by side on the same queues:
//
//   queues: ../philly-tight   # the queue YAML of another directory (relative to this one)
//   victims: kueue            # lost-work or kueue
//   checkpointEvery: 30m
//   checkpointAll: true
//   checkpointWrite: 1m
//   fairSharing: true
//
// Every key is optional; a key set here wins over the flag of the same name for this directory.
// replay.yaml itself is not read as queue YAML.

#include <string>

#include "rota/admission/status.h"
#include "rota/replay/simulator.h"

namespace rota::replay {

inline constexpr const char* kSettingsFile = "replay.yaml";

struct DirectorySettings {
  std::string queues_dir;  // where the queue YAML is: the directory itself unless `queues` says
  SimulatorOptions simulator;
  bool fair_sharing = false;
};

// Reads DIR/replay.yaml, if there is one, over `defaults`. Errors name the file and the key.
Result<DirectorySettings> ReadSettings(const std::string& dir, const DirectorySettings& defaults);

}  // namespace rota::replay
