#include "status_writer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace rota::controller {
namespace {

using Write = StatusWriter::Write;

// A sender that records what it was asked to write and can be held at the first write, so that
// a test can queue more behind it.
class Recorder {
 public:
  StatusWriter::Sender sender() {
    return [this](const Write& w, bool report) {
      std::unique_lock<std::mutex> l(mu_);
      sent_.push_back(w.name + "=" + w.body.value("v", std::string()));
      if (report) reported_.insert(w.name);
      ++in_send_[w.name];
      max_same_ = std::max(max_same_, in_send_[w.name]);
      entered_.notify_all();
      released_cv_.wait(l, [this] { return released_; });
      --in_send_[w.name];
      StatusWriter::Outcome out;
      out.ok = w.body.value("fail", false) == false;
      out.resource_version = out.ok ? std::to_string(sent_.size()) : "";
      if (!out.ok) out.error = "refused";
      return out;
    };
  }
  void WaitForSends(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    ASSERT_TRUE(entered_.wait_for(l, std::chrono::seconds(10), [&] { return sent_.size() >= n; }));
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    released_cv_.notify_all();
  }
  std::vector<std::string> sent() {
    std::lock_guard<std::mutex> l(mu_);
    return sent_;
  }
  // The writes the sender was told to report (and so to read the reply of).
  std::set<std::string> reported() {
    std::lock_guard<std::mutex> l(mu_);
    return reported_;
  }
  int max_same() {
    std::lock_guard<std::mutex> l(mu_);
    return max_same_;
  }

 private:
  std::mutex mu_;
  std::condition_variable entered_, released_cv_;
  bool released_ = false;
  std::vector<std::string> sent_;
  std::set<std::string> reported_;
  std::map<std::string, int> in_send_;
  int max_same_ = 0;
};

Write W(const std::string& name, const std::string& v, bool fail = false) {
  nlohmann::json body = {{"v", v}};
  if (fail) body["fail"] = true;
  return {"workloads", "ns", name, body};
}

TEST(StatusWriterTest, SendsOnlyTheNewestStatusOfAnObjectAndNeverTwoAtOnce) {
  Recorder rec;
  StatusWriter writer(rec.sender(), 4, 0);
  writer.Enqueue(StatusWriter::kAdmission, W("a", "1"));
  rec.WaitForSends(1);  // "a=1" is being sent
  writer.Enqueue(StatusWriter::kAdmission, W("a", "2"));
  writer.Enqueue(StatusWriter::kAdmission, W("a", "3"));
  EXPECT_TRUE(writer.Busy("workloads/ns/a"));
  rec.Release();
  writer.Drain();
  EXPECT_EQ(rec.sent(), (std::vector<std::string>{"a=1", "a=3"}));
  EXPECT_EQ(rec.max_same(), 1);  // the second write waited for the first
  EXPECT_EQ(writer.counts().sent, 2u);
  EXPECT_EQ(writer.counts().superseded, 1u);
  EXPECT_FALSE(writer.Busy("workloads/ns/a"));
}

TEST(StatusWriterTest, AdmissionsGoBeforeQueueStatusBeforePendingReasons) {
  Recorder rec;
  StatusWriter writer(rec.sender(), 1, 0);
  writer.Enqueue(StatusWriter::kPending, W("first", "x"));
  rec.WaitForSends(1);  // the only thread is busy: everything below waits in the queue
  writer.Enqueue(StatusWriter::kPending, W("p1", "x"));
  writer.Enqueue(StatusWriter::kQueueStatus, W("q1", "x"));
  writer.Enqueue(StatusWriter::kPending, W("p2", "x"));
  writer.Enqueue(StatusWriter::kAdmission, W("a1", "x"));
  writer.Enqueue(StatusWriter::kAdmission, W("a2", "x"));
  // A pending reason replaced by an admission moves up with it, ahead of a2 (it was queued first).
  writer.Enqueue(StatusWriter::kAdmission, W("p1", "admitted"));
  EXPECT_EQ(writer.Queued(StatusWriter::kPending), 1u);
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 3u);
  rec.Release();
  writer.Drain();
  EXPECT_EQ(rec.sent(), (std::vector<std::string>{"first=x", "a1=x", "a2=x", "p1=admitted", "q1=x", "p2=x"}));
}

TEST(StatusWriterTest, ReportsOutcomesOfFailedAndReportingWrites) {
  Recorder rec;
  rec.Release();
  int failures = 0;
  std::mutex mu;
  StatusWriter writer(rec.sender(), 2, 0, [&] {
    std::lock_guard<std::mutex> l(mu);
    ++failures;
  });
  const uint64_t quiet = writer.Enqueue(StatusWriter::kQueueStatus, W("quiet", "x"));
  const uint64_t told = writer.Enqueue(StatusWriter::kAdmission, W("told", "x"), /*report=*/true);
  const uint64_t bad = writer.Enqueue(StatusWriter::kPending, W("bad", "x", /*fail=*/true));
  writer.Drain();
  auto done = writer.TakeDone();
  ASSERT_EQ(done.size(), 2u);
  std::map<uint64_t, StatusWriter::Done> by_seq;
  for (auto& d : done) by_seq[d.seq] = d;
  EXPECT_FALSE(by_seq.count(quiet));
  ASSERT_TRUE(by_seq.count(told));
  EXPECT_TRUE(by_seq[told].outcome.ok);
  EXPECT_FALSE(by_seq[told].outcome.resource_version.empty());
  EXPECT_EQ(by_seq[told].key, "workloads/ns/told");
  ASSERT_TRUE(by_seq.count(bad));
  EXPECT_FALSE(by_seq[bad].outcome.ok);
  EXPECT_EQ(by_seq[bad].outcome.error, "refused");
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(writer.counts().failed, 1u);
  EXPECT_TRUE(writer.TakeDone().empty());  // taken once
  // Only the reporting write's reply is worth reading.
  EXPECT_EQ(rec.reported(), (std::set<std::string>{"told"}));
}

TEST(StatusWriterTest, SummaryThreadsSendQueueStatusWhileAdmissionsHoldTheOthers) {
  // One thread for anything, one for summaries. The first thread is held by an admission that
  // does not return; more admissions wait behind it, and the queue status and pending reason
  // still go out on the summary thread, in their order.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::string> sent;
  StatusWriter writer(
      [&](const Write& w, bool) {
        std::unique_lock<std::mutex> l(mu);
        sent.push_back(w.name);
        cv.notify_all();
        if (w.name.rfind("a", 0) == 0) cv.wait(l, [&] { return release; });
        return StatusWriter::Outcome{true, "1", ""};
      },
      1, 1);
  auto release_all = [&] {
    std::lock_guard<std::mutex> l(mu);
    release = true;
    cv.notify_all();
  };
  struct Releaser {  // before the writer joins its threads, on every way out of the test
    std::function<void()> f;
    ~Releaser() { f(); }
  } releaser{release_all};
  writer.Enqueue(StatusWriter::kAdmission, W("a1", "x"));
  writer.Enqueue(StatusWriter::kAdmission, W("a2", "x"));
  writer.Enqueue(StatusWriter::kQueueStatus, W("q1", "x"));
  writer.Enqueue(StatusWriter::kPending, W("p1", "x"));
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10), [&] { return sent.size() >= 3; }));
    std::vector<std::string> summaries;
    for (const auto& name : sent)
      if (name != "a1") summaries.push_back(name);
    EXPECT_EQ(summaries, (std::vector<std::string>{"q1", "p1"}));  // a2 waits for the held thread
  }
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 1u);
  release_all();
  writer.Drain();
  EXPECT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent.back(), "a2");
}

TEST(StatusWriterTest, StopsWithWritesStillQueued) {
  Recorder rec;
  auto writer = std::make_unique<StatusWriter>(rec.sender(), 1, 0);
  writer->Enqueue(StatusWriter::kAdmission, W("a", "1"));
  rec.WaitForSends(1);
  writer->Enqueue(StatusWriter::kAdmission, W("b", "1"));
  rec.Release();
  writer.reset();  // joins after the write in progress; "b" may or may not have been sent
  EXPECT_GE(rec.sent().size(), 1u);
}

}  // namespace
}  // namespace rota::controller
