#include "checkpoint/agent.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "rota/api/snapshot.h"

namespace rota::checkpoint {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const int64_t kT0 = 1793527200;  // 2026-11-01T10:00:00Z

// A trainer channel that records each request; the next `fail` requests fail.
class FakeTrainer : public TrainerChannel {
 public:
  Result<std::string> Request(const std::string& requested_at) override {
    attempts.push_back(requested_at);
    if (fail > 0) {
      --fail;
      return Status(StatusCode::kNotFound, "no process named trainer");
    }
    return std::string("signalled");
  }
  std::vector<std::string> attempts;
  int fail = 0;
};

// A reporter that records each report; the next `fail` reports fail.
class FakeReporter : public CheckpointReporter {
 public:
  Status Report(const std::string& checkpointed_at) override {
    attempts.push_back(checkpointed_at);
    if (fail > 0) {
      --fail;
      return Status(StatusCode::kInternal, "pod ns/p: 503 ServiceUnavailable");
    }
    reported.push_back(checkpointed_at);
    ++made;
    return Status::Ok();
  }
  std::vector<std::string> attempts, reported;
  int fail = 0;
  std::atomic<int> made{0};  // (for a test thread to watch)
};

class AgentTest : public ::testing::Test {
 protected:
  AgentTest() {
    std::string dir = (fs::temp_directory_path() / "rota-agent-XXXXXX").string();
    root_ = ::mkdtemp(dir.data());
    fs::create_directory(root_ / "checkpoints");
    options_.annotations_file = (root_ / "annotations").string();
    options_.checkpoint_dir = (root_ / "checkpoints").string();
    SetAnnotations({});
  }
  ~AgentTest() override { fs::remove_all(root_); }

  // Rewrites the annotations file as the kubelet would (the values need no quoting here).
  void SetAnnotations(const std::map<std::string, std::string>& annotations) {
    std::string text;
    for (const auto& [k, v] : annotations) text += (text.empty() ? "" : "\n") + k + "=\"" + v + "\"";
    std::ofstream(root_ / "annotations", std::ios::trunc) << text;
  }
  void Request(int64_t at) { SetAnnotations({{"rota.dev/checkpoint-requested-at", api::FormatTime(at)}}); }
  // Writes `content` to checkpoints/`name` and sets its modification time to `at` + `nanos`.
  void SaveCheckpoint(const std::string& name, int64_t at, long nanos = 0, const std::string& content = "weights") {
    const fs::path path = root_ / "checkpoints" / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::trunc) << content;
    const timespec times[2] = {{at, nanos}, {at, nanos}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  Agent& agent() {
    if (!agent_)
      agent_.emplace(options_, trainer_, reporter_, clock_,
                     [this](const std::string& level, const std::string& m) { logs_.push_back(level + ": " + m); });
    return *agent_;
  }
  void Poll(int times = 1) {
    for (int i = 0; i < times; ++i) agent().Poll();
  }
  int Logged(const std::string& level) const {
    int n = 0;
    for (const auto& l : logs_) n += l.rfind(level + ":", 0) == 0;
    return n;
  }

  fs::path root_;
  AgentOptions options_;
  FakeTrainer trainer_;
  FakeReporter reporter_;
  apiclient::FakeClock clock_;
  std::vector<std::string> logs_;
  std::optional<Agent> agent_;
};

TEST_F(AgentTest, ARequestIsPassedOnOncePerRequestedTime) {
  Poll(2);
  EXPECT_TRUE(trainer_.attempts.empty());
  Request(kT0);
  Poll(3);
  EXPECT_EQ(trainer_.attempts, std::vector<std::string>{"2026-11-01T10:00:00Z"});
  Request(kT0 + 60);
  Poll(3);
  EXPECT_EQ(trainer_.attempts, (std::vector<std::string>{"2026-11-01T10:00:00Z", "2026-11-01T10:01:00Z"}));
  SetAnnotations({});  // withdrawn, then asked again for the same time: nothing new
  Poll();
  Request(kT0 + 60);
  Poll();
  EXPECT_EQ(trainer_.attempts.size(), 2u);
  EXPECT_EQ(Logged("error"), 0);
}

TEST_F(AgentTest, ARequestThatCannotBePassedOnIsTriedAgainAtTheNextPoll) {
  trainer_.fail = 2;
  Request(kT0);
  Poll(2);
  EXPECT_EQ(trainer_.attempts.size(), 2u);
  EXPECT_EQ(Logged("error"), 1) << "a failure that goes on is logged once";
  Poll(3);
  EXPECT_EQ(trainer_.attempts.size(), 3u) << "passed on at the third attempt, and then no more";
  EXPECT_EQ(trainer_.attempts.back(), "2026-11-01T10:00:00Z");
}

TEST_F(AgentTest, ARequestThePodHasAnsweredIsNotPassedOn) {
  // (As after a restart: the pod shows a checkpoint at least as late as the request.)
  SetAnnotations({{"rota.dev/checkpoint-requested-at", api::FormatTime(kT0)},
                  {"rota.dev/checkpointed-at", api::FormatTime(kT0 + 5)}});
  Poll(2);
  EXPECT_TRUE(trainer_.attempts.empty());
  SetAnnotations({{"rota.dev/checkpoint-requested-at", api::FormatTime(kT0 + 10)},
                  {"rota.dev/checkpointed-at", api::FormatTime(kT0 + 5)}});
  Poll();
  EXPECT_EQ(trainer_.attempts, std::vector<std::string>{api::FormatTime(kT0 + 10)});
}

TEST_F(AgentTest, AMissingAnnotationsFileIsLoggedOnceAndCheckpointsAreStillReported) {
  fs::remove(root_ / "annotations");
  SaveCheckpoint("step-100.pt", kT0);
  Poll(3);
  EXPECT_EQ(Logged("error"), 1);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:00Z"});
  Request(kT0 + 60);  // the file appears
  Poll();
  EXPECT_EQ(trainer_.attempts.size(), 1u);
}

TEST_F(AgentTest, ANewCheckpointIsReportedOnceWithItsTimeInSeconds) {
  Poll();
  SaveCheckpoint("step-100.pt", kT0, 700'000'000);
  Poll();
  EXPECT_TRUE(reporter_.attempts.empty()) << "reported once it has not changed for a poll";
  Poll(3);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:00Z"});
  SaveCheckpoint("step-200.pt", kT0 + 300);
  Poll(3);
  SaveCheckpoint("step-100.pt", kT0 + 600);  // a file rewritten in place counts too
  Poll(3);
  EXPECT_EQ(reporter_.reported,
            (std::vector<std::string>{"2026-11-01T10:00:00Z", "2026-11-01T10:05:00Z", "2026-11-01T10:10:00Z"}));
}

TEST_F(AgentTest, OnlyTheNewestCheckpointPresentAtStartIsReported) {
  SaveCheckpoint("step-100.pt", kT0);
  SaveCheckpoint("step-300/model.pt", kT0 + 120);  // subdirectories count
  SaveCheckpoint("step-200.pt", kT0 + 60);
  Poll(4);
  EXPECT_EQ(reporter_.attempts, std::vector<std::string>{"2026-11-01T10:02:00Z"});
}

TEST_F(AgentTest, AFileBeingWrittenIsReportedOnceItStopsChanging) {
  SaveCheckpoint("step-100.pt", kT0, 0, "part");
  Poll();
  SaveCheckpoint("step-100.pt", kT0 + 1, 0, "part two");
  Poll();
  SaveCheckpoint("step-100.pt", kT0 + 2, 0, "part two, done");
  Poll();
  EXPECT_TRUE(reporter_.attempts.empty());
  Poll();
  EXPECT_EQ(reporter_.attempts, std::vector<std::string>{"2026-11-01T10:00:02Z"});
}

TEST_F(AgentTest, HiddenFilesAndOlderFilesAreNotReported) {
  SaveCheckpoint("step-100.pt", kT0);
  SaveCheckpoint(".step-200.pt.tmp", kT0 + 60);  // a file not yet complete, by convention
  SaveCheckpoint(".partial/model.pt", kT0 + 60);
  Poll(2);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:00Z"});
  SaveCheckpoint("copied-from-elsewhere.pt", kT0 - 3600);
  Poll(3);
  EXPECT_EQ(reporter_.attempts.size(), 1u);
}

TEST_F(AgentTest, ACheckpointThePodShowsIsNotReportedAgain) {
  SetAnnotations({{"rota.dev/checkpointed-at", api::FormatTime(kT0)}});
  SaveCheckpoint("step-100.pt", kT0, 300'000'000);
  Poll(3);
  EXPECT_TRUE(reporter_.attempts.empty());
  SaveCheckpoint("step-200.pt", kT0 + 1);
  Poll(2);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:01Z"});
}

TEST_F(AgentTest, AReportThatFailsIsMadeAgainAtTheNextPollUntilItIsMade) {
  reporter_.fail = 2;
  SaveCheckpoint("step-100.pt", kT0);
  Poll(2);
  EXPECT_EQ(reporter_.attempts.size(), 1u);
  EXPECT_TRUE(reporter_.reported.empty());
  Poll();
  EXPECT_EQ(Logged("warn"), 1) << "a failure that goes on is logged once";
  Poll(3);
  EXPECT_EQ(reporter_.attempts,
            (std::vector<std::string>{"2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z"}));
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:00Z"});
}

TEST_F(AgentTest, ANewerCheckpointSavedWhileReportsFailIsTheOneReported) {
  reporter_.fail = 2;
  SaveCheckpoint("step-100.pt", kT0);
  Poll(3);
  SaveCheckpoint("step-200.pt", kT0 + 60);
  Poll(3);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:01:00Z"});
}

TEST_F(AgentTest, WithADoneFileOnlyThatFileCounts) {
  options_.done_file = "DONE";
  SaveCheckpoint("step-100/model.pt", kT0);
  SaveCheckpoint("step-100/optimizer.pt", kT0 + 10);
  Poll(3);
  EXPECT_TRUE(reporter_.attempts.empty());
  SaveCheckpoint("step-100/DONE", kT0 + 20, 0, "");
  SaveCheckpoint("step-200/model.pt", kT0 + 30);  // the next one, not yet complete
  Poll(2);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:20Z"});
  SaveCheckpoint("DONE", kT0 + 40, 0, "");  // beside the files, touched again for each
  Poll(2);
  SaveCheckpoint("DONE", kT0 + 50, 0, "");
  Poll(2);
  EXPECT_EQ(reporter_.reported,
            (std::vector<std::string>{"2026-11-01T10:00:20Z", "2026-11-01T10:00:40Z", "2026-11-01T10:00:50Z"}));
}

TEST_F(AgentTest, TheRequestFileIsNoCheckpointEvenInTheDirectory) {
  options_.own_file = (root_ / "checkpoints" / "REQUEST").string();
  SaveCheckpoint("step-100.pt", kT0);
  SaveCheckpoint("REQUEST", kT0 + 60, 0, "2026-11-01T10:01:00Z\n");  // (as the agent writes it)
  SaveCheckpoint("step-100/REQUEST", kT0 + 30, 0, "");               // another file of that name counts
  Poll(3);
  EXPECT_EQ(reporter_.reported, std::vector<std::string>{"2026-11-01T10:00:30Z"});
}

TEST_F(AgentTest, AMissingCheckpointDirectoryIsLoggedOnce) {
  fs::remove_all(root_ / "checkpoints");
  Poll(3);
  EXPECT_EQ(Logged("error"), 1);
  SaveCheckpoint("step-100.pt", kT0);  // (creates the directory)
  Poll(2);
  EXPECT_EQ(reporter_.reported.size(), 1u);
}

TEST_F(AgentTest, RunPollsEveryIntervalUntilStopped) {
  options_.poll = milliseconds(1000);
  SaveCheckpoint("step-100.pt", kT0);
  std::atomic<bool> stop{false};
  std::thread runner([&] { agent().Run(stop); });
  // Waits (a bounded while, so that a broken loop fails rather than hangs) for `done`.
  auto await = [](const std::function<bool()>& done) {
    for (int i = 0; i < 10'000'000 && !done(); ++i) std::this_thread::yield();
    return done();
  };
  // Until the runner sleeps on the clock, having polled.
  auto asleep = [&] { ASSERT_TRUE(await([&] { return clock_.Waiters() > 0; })); };
  asleep();
  EXPECT_EQ(reporter_.made, 0) << "one poll: the file is seen, not yet reported";
  for (int i = 0; i < 9; ++i) {  // 900 ms, in the agent's stop-check steps
    clock_.Advance(milliseconds(100));
    asleep();
  }
  EXPECT_EQ(reporter_.made, 0);
  clock_.Advance(milliseconds(100));  // the second poll, at 1 s
  EXPECT_TRUE(await([&] { return reporter_.made > 0; }));
  asleep();
  stop = true;
  clock_.Advance(milliseconds(100));
  runner.join();
  EXPECT_EQ(reporter_.attempts.size(), 1u);
}

}  // namespace
}  // namespace rota::checkpoint
