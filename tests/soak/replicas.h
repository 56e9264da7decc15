#pragma once

// The rota replicas of the soak, as a Deployment would keep them: each runs `rota run` with the
// same config; one that exits (a leader steps down by exiting) or is killed is started again.

#include <sys/types.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace rota::soak {

class Replicas {
 public:
  // `count` processes of `binary` with --kubeconfig and --config; logs go to
  // out_dir/replica-<i>-<start>.log.
  Replicas(std::string binary, std::string kubeconfig, std::string config, std::filesystem::path out_dir, int count);
  ~Replicas();  // SIGTERM to every replica, then SIGKILL to any left after 10 s

  // Starts a replica in every slot whose process has exited (a killed one, or one that stepped
  // down); returns how many it started.
  int Supervise();
  // The replica's pid whose identity (host_pid) is `holder`, or 0.
  pid_t PidOf(const std::string& holder) const;
  int starts() const;
  // Writes every live replica's thread stacks (gdb, when the machine has it) to `file`, so that a
  // replica that stops making progress shows where each of its threads waits.
  void DumpStacks(const std::filesystem::path& file) const;

 private:
  void Start(size_t slot);
  std::string binary_, kubeconfig_, config_;
  std::filesystem::path out_dir_;
  mutable std::mutex mu_;
  std::vector<pid_t> pids_;
  int starts_ = 0;
};

}  // namespace rota::soak
