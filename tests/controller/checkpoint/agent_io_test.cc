#include "checkpoint/agent_io.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace rota::checkpoint {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string dir = (fs::temp_directory_path() / "rota-agent-io-XXXXXX").string();
    path_ = ::mkdtemp(dir.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string Read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A /proc of made-up processes: comm, cmdline (arguments separated by NULs) and the parent.
void AddProcess(const fs::path& proc, int pid, const std::string& comm, const std::string& cmdline, int parent) {
  const fs::path dir = proc / std::to_string(pid);
  fs::create_directories(dir);
  std::ofstream(dir / "comm") << comm << "\n";
  std::ofstream(dir / "cmdline", std::ios::binary) << cmdline;
  std::ofstream(dir / "status") << "Name:\t" << comm << "\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t" << pid
                                << "\nNgid:\t0\nPid:\t" << pid << "\nPPid:\t" << parent << "\n";
}

TEST(ParseSignalTest, ReadsNamesAndNumbers) {
  EXPECT_EQ(*ParseSignal("SIGUSR1"), SIGUSR1);
  EXPECT_EQ(*ParseSignal("usr2"), SIGUSR2);
  EXPECT_EQ(*ParseSignal("SigTerm"), SIGTERM);
  EXPECT_EQ(*ParseSignal("10"), 10);
  for (const char* bad : {"", "SIGFOO", "0", "1000", "-1", "USR1 "}) EXPECT_FALSE(ParseSignal(bad).ok()) << bad;
}

TEST(ProcessesNamedTest, FindsTheTrainerByCommOrFirstArgumentButNotItsWorkers) {
  TempDir proc;
  using namespace std::string_literals;
  AddProcess(proc.path(), 1, "pause", "/pause\0"s, 0);
  AddProcess(proc.path(), 7, "rota", "rota\0checkpoint-agent\0"s, 0);
  AddProcess(proc.path(), 12, "python3", "python3\0trainer.py\0"s, 0);
  AddProcess(proc.path(), 40, "python3", "python3\0trainer.py\0"s, 12);  // a DataLoader worker
  AddProcess(proc.path(), 41, "pt_main_thread", "/usr/bin/torchrun\0--nproc=8\0"s, 0);
  AddProcess(proc.path(), 50, "bash", "bash\0-c\0python3 trainer.py\0"s, 0);
  fs::create_directories(proc.path() / "self");
  fs::create_directories(proc.path() / "sys");

  EXPECT_EQ(ProcessesNamed(proc.path().string(), "python3", 7), std::vector<int>{12});
  EXPECT_EQ(ProcessesNamed(proc.path().string(), "torchrun", 7), std::vector<int>{41});
  EXPECT_EQ(ProcessesNamed(proc.path().string(), "/usr/bin/torchrun", 7), std::vector<int>{41});
  EXPECT_EQ(ProcessesNamed(proc.path().string(), "pt_main_thread", 7), std::vector<int>{41});
  EXPECT_TRUE(ProcessesNamed(proc.path().string(), "trainer.py", 7).empty()) << "only the first argument names it";
  EXPECT_TRUE(ProcessesNamed(proc.path().string(), "rota", 7).empty()) << "the agent itself is left out";
  EXPECT_TRUE(ProcessesNamed((proc.path() / "missing").string(), "python3", 7).empty());
}

TEST(SignalChannelTest, SignalsTheProcessOfThatName) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();  // until a signal ends it (SIGUSR1's default action)
  }
  TempDir proc;
  AddProcess(proc.path(), child, "trainer", std::string("trainer\0", 8), 1);
  SignalChannel channel("trainer", SIGUSR1, proc.path().string());
  Result<std::string> sent = channel.Request("2026-11-01T10:00:00Z");
  if (!sent.ok()) ::kill(child, SIGKILL);
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  EXPECT_EQ(*sent, "sent SIGUSR1 to trainer (process " + std::to_string(child) + ")");
  // (Waited for a bounded while: a child that was not signalled is killed, and the test fails.)
  int status = 0;
  pid_t waited = 0;
  for (int i = 0; i < 10'000'000 && waited == 0; ++i) {
    waited = ::waitpid(child, &status, WNOHANG);
    if (waited == 0) std::this_thread::yield();
  }
  if (waited == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "the trainer was not signalled";
  }
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
}

TEST(SignalChannelTest, ATrainerNotRunningIsNotFound) {
  TempDir proc;
  SignalChannel channel("trainer", SIGUSR1, proc.path().string());
  Result<std::string> sent = channel.Request("2026-11-01T10:00:00Z");
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), StatusCode::kNotFound);
  EXPECT_NE(sent.status().message().find("shareProcessNamespace"), std::string::npos);
}

TEST(RequestFileChannelTest, WritesTheRequestedTimeWhole) {
  TempDir dir;
  RequestFileChannel channel((dir.path() / "checkpoint-request").string());
  ASSERT_TRUE(channel.Request("2026-11-01T10:00:00Z").ok());
  EXPECT_EQ(Read(dir.path() / "checkpoint-request"), "2026-11-01T10:00:00Z\n");
  ASSERT_TRUE(channel.Request("2026-11-01T10:05:00Z").ok());
  EXPECT_EQ(Read(dir.path() / "checkpoint-request"), "2026-11-01T10:05:00Z\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1)
      << "no temporary file is left behind";
}

TEST(RequestFileChannelTest, ADirectoryThatIsNotThereIsAnError) {
  TempDir dir;
  RequestFileChannel channel((dir.path() / "missing" / "checkpoint-request").string());
  Result<std::string> written = channel.Request("2026-11-01T10:00:00Z");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find("missing"), std::string::npos) << written.status().message();
}

TEST(CheckpointedAtPatchTest, IsAMergePatchOfOneAnnotation) {
  EXPECT_EQ(
      CheckpointedAtPatch("2026-11-01T10:00:00Z"),
      apiclient::Json::parse(R"({"metadata":{"annotations":{"rota.dev/checkpointed-at":"2026-11-01T10:00:00Z"}}})"));
}

TEST(ResolvePodNameTest, FlagsThenTheDownwardApiThenHostnameAndServiceAccount) {
  TempDir sa;
  std::ofstream(sa.path() / "namespace") << "ml-team";
  const std::string ns_file = (sa.path() / "namespace").string();
  std::map<std::string, std::string> env;
  auto getenv = [&env](const char* key) -> const char* {
    auto it = env.find(key);
    return it == env.end() ? nullptr : it->second.c_str();
  };

  EXPECT_FALSE(ResolvePodName("", "", getenv, ns_file).ok()) << "no name anywhere";
  env["HOSTNAME"] = "train-abc12";
  Result<PodName> fallback = ResolvePodName("", "", getenv, ns_file);
  ASSERT_TRUE(fallback.ok()) << fallback.status().message();
  EXPECT_EQ(fallback->name, "train-abc12");
  EXPECT_EQ(fallback->pod_namespace, "ml-team");

  env["POD_NAME"] = "train-0-xyz";
  env["POD_NAMESPACE"] = "research";
  Result<PodName> downward = ResolvePodName("", "", getenv, ns_file);
  ASSERT_TRUE(downward.ok());
  EXPECT_EQ(downward->name, "train-0-xyz");
  EXPECT_EQ(downward->pod_namespace, "research");

  Result<PodName> flags = ResolvePodName("p", "ns", getenv, ns_file);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->name, "p");
  EXPECT_EQ(flags->pod_namespace, "ns");

  env.erase("POD_NAMESPACE");
  Result<PodName> no_namespace = ResolvePodName("", "", getenv, (sa.path() / "missing").string());
  ASSERT_FALSE(no_namespace.ok());
  EXPECT_NE(no_namespace.status().message().find("--namespace"), std::string::npos);
}

}  // namespace
}  // namespace rota::checkpoint
