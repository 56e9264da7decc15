#include "status_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rota::controller {
namespace {

using Write = StatusWriter::Write;

// Sinks that record what they were asked to write. A write finishes at the sink's next Poll,
// except one that `held` picks, which finishes only once Release is called: so that a test can
// queue more behind it.
class Recorder {
 public:
  explicit Recorder(std::function<bool(const Write&)> held = [](const Write&) { return true; })
      : held_(std::move(held)) {}

  StatusWriter::SinkFactory sinks() {
    return [this] { return std::make_unique<Sink>(*this); };
  }
  void WaitForSends(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    ASSERT_TRUE(cv_.wait_for(l, std::chrono::seconds(10), [&] { return sent_.size() >= n; }));
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // From now on a poll waits, whatever its timeout, until a write finishes or the writer wakes
  // it: a write that becomes ready while others are in flight goes out only if it is woken for.
  void PollWithoutTimeout() {
    std::lock_guard<std::mutex> l(mu_);
    patient_ = true;
  }
  std::vector<std::string> sent() {
    std::lock_guard<std::mutex> l(mu_);
    return sent_;
  }
  // The writes the sink was told to report (and so to read the reply of).
  std::set<std::string> reported() {
    std::lock_guard<std::mutex> l(mu_);
    return reported_;
  }
  // The most writes of one object in flight at once, and of all objects.
  int max_same() {
    std::lock_guard<std::mutex> l(mu_);
    return max_same_;
  }
  int max_in_flight() {
    std::lock_guard<std::mutex> l(mu_);
    return max_in_flight_;
  }

 private:
  class Sink : public StatusWriter::Sink {
   public:
    explicit Sink(Recorder& r) : r_(r) {}
    void Start(uint64_t id, const Write& w, bool report) override {
      std::lock_guard<std::mutex> l(r_.mu_);
      r_.sent_.push_back(w.name + "=" + w.body.value("v", std::string()));
      if (report) r_.reported_.insert(w.name);
      r_.max_same_ = std::max(r_.max_same_, ++r_.in_send_[w.name]);
      r_.max_in_flight_ = std::max(r_.max_in_flight_, ++r_.in_flight_);
      StatusWriter::Outcome out;
      out.ok = w.body.value("fail", false) == false;
      out.resource_version = out.ok ? std::to_string(r_.sent_.size()) : "";
      if (!out.ok) out.error = "refused";
      flying_.push_back({id, w.name, r_.held_(w), std::move(out)});
      r_.cv_.notify_all();
    }
    std::vector<std::pair<uint64_t, StatusWriter::Outcome>> Poll(std::chrono::milliseconds timeout) override {
      std::unique_lock<std::mutex> l(r_.mu_);
      auto finishing = [&](const Flying& f) { return !f.held || r_.released_; };
      auto done = [&] { return woken_ || std::any_of(flying_.begin(), flying_.end(), finishing); };
      if (r_.patient_)
        r_.cv_.wait(l, done);
      else
        r_.cv_.wait_for(l, timeout, done);
      woken_ = false;
      std::vector<std::pair<uint64_t, StatusWriter::Outcome>> out;
      for (auto it = flying_.begin(); it != flying_.end();) {
        if (!finishing(*it)) {
          ++it;
          continue;
        }
        --r_.in_send_[it->name];
        --r_.in_flight_;
        out.emplace_back(it->id, std::move(it->outcome));
        it = flying_.erase(it);
      }
      return out;
    }
    void Wake() override {
      std::lock_guard<std::mutex> l(r_.mu_);
      woken_ = true;
      r_.cv_.notify_all();
    }

   private:
    struct Flying {
      uint64_t id;
      std::string name;
      bool held;
      StatusWriter::Outcome outcome;
    };
    Recorder& r_;
    std::vector<Flying> flying_;
    bool woken_ = false;
  };

  std::function<bool(const Write&)> held_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  bool patient_ = false;
  std::vector<std::string> sent_;
  std::set<std::string> reported_;
  std::map<std::string, int> in_send_;
  int in_flight_ = 0;
  int max_same_ = 0;
  int max_in_flight_ = 0;
};

// Releases a Recorder's held writes when it goes, before the writer (declared before it) joins
// its threads, on every way out of a test.
struct Releaser {
  Recorder& r;
  ~Releaser() { r.Release(); }
};

Write W(const std::string& name, const std::string& v, bool fail = false) {
  nlohmann::json body = {{"v", v}};
  if (fail) body["fail"] = true;
  return {"workloads", "ns", name, body};
}

TEST(StatusWriterTest, SendsOnlyTheNewestStatusOfAnObjectAndNeverTwoAtOnce) {
  Recorder rec;
  StatusWriter writer(rec.sinks(), 4, 0);
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

TEST(StatusWriterTest, AWriteNotYetStartedCanBeWithdrawnButNotOneBeingSent) {
  Recorder rec;
  StatusWriter writer(rec.sinks(), 1, 0);
  const uint64_t first = writer.Enqueue(StatusWriter::kAdmission, W("a", "1"));
  rec.WaitForSends(1);  // "a=1" is being sent: too late
  EXPECT_FALSE(writer.Withdraw("workloads/ns/a", first));
  const uint64_t queued = writer.Enqueue(StatusWriter::kAdmission, W("b", "1"));
  const uint64_t replaced = writer.Enqueue(StatusWriter::kAdmission, W("c", "1"));
  writer.Enqueue(StatusWriter::kAdmission, W("c", "2"));
  EXPECT_FALSE(writer.Withdraw("workloads/ns/c", replaced)) << "a newer write took its place";
  EXPECT_TRUE(writer.Withdraw("workloads/ns/b", queued));
  EXPECT_FALSE(writer.Withdraw("workloads/ns/b", queued)) << "only once";
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 1u);
  rec.Release();
  writer.Drain();
  EXPECT_EQ(rec.sent(), (std::vector<std::string>{"a=1", "c=2"}));
}

TEST(StatusWriterTest, AdmissionsGoBeforeQueueStatusBeforePendingReasons) {
  Recorder rec;
  StatusWriter writer(rec.sinks(), 1, 0);
  writer.Enqueue(StatusWriter::kPending, W("first", "x"));
  rec.WaitForSends(1);  // the only place in flight is taken: everything below waits in the queue
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
  StatusWriter writer(rec.sinks(), 2, 0, [&] {
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

TEST(StatusWriterTest, SummaryThreadSendsQueueStatusWhileAdmissionsHoldTheOthers) {
  // One place in flight for anything, one for summaries. The first is taken by an admission
  // that does not finish; more admissions wait behind it, and the queue status and pending
  // reason still go out on the summary thread, in their order.
  Recorder rec([](const Write& w) { return w.name.rfind("a", 0) == 0; });
  StatusWriter writer(rec.sinks(), 1, 1);
  Releaser releaser{rec};
  writer.Enqueue(StatusWriter::kAdmission, W("a1", "x"));
  writer.Enqueue(StatusWriter::kAdmission, W("a2", "x"));
  writer.Enqueue(StatusWriter::kQueueStatus, W("q1", "x"));
  writer.Enqueue(StatusWriter::kPending, W("p1", "x"));
  rec.WaitForSends(3);
  std::vector<std::string> summaries;
  for (const auto& s : rec.sent())
    if (s != "a1=x") summaries.push_back(s);
  EXPECT_EQ(summaries, (std::vector<std::string>{"q1=x", "p1=x"}));  // a2 waits for the held place
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 1u);
  rec.Release();
  writer.Drain();
  ASSERT_EQ(rec.sent().size(), 4u);
  EXPECT_EQ(rec.sent().back(), "a2=x");
}

TEST(StatusWriterTest, OneThreadKeepsUpToItsRoomInFlight) {
  // Four places: four writes go out at once from the one thread, the other two wait for them.
  Recorder rec;
  StatusWriter writer(rec.sinks(), 4, 0);
  for (const char* name : {"w1", "w2", "w3", "w4", "w5", "w6"}) writer.Enqueue(StatusWriter::kAdmission, W(name, "x"));
  rec.WaitForSends(4);
  EXPECT_EQ(rec.sent().size(), 4u);
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 2u);
  rec.Release();
  writer.Drain();
  EXPECT_EQ(rec.sent().size(), 6u);
  EXPECT_EQ(rec.max_in_flight(), 4);
  EXPECT_EQ(writer.counts().sent, 6u);
}

TEST(StatusWriterTest, AWriteQueuedWhileOthersAreInFlightGoesOutWithoutWaitingForThem) {
  // Every write is held in flight, and the sink polls until a write finishes or it is woken: so
  // each write below goes out only because the writer woke the poll for it. (The writer wakes a
  // polling thread once until it next looks for ready writes; a wake-up lost there would leave
  // the rest queued.)
  Recorder rec;
  rec.PollWithoutTimeout();
  StatusWriter writer(rec.sinks(), 8, 0);
  Releaser releaser{rec};
  for (int i = 1; i <= 7; ++i) {
    writer.Enqueue(StatusWriter::kAdmission, W("w" + std::to_string(i), "x"));
    rec.WaitForSends(i);
  }
  // Two at once into the last place: one goes, one waits for a place.
  writer.Enqueue(StatusWriter::kAdmission, W("w8", "x"));
  writer.Enqueue(StatusWriter::kAdmission, W("w9", "x"));
  rec.WaitForSends(8);
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 1u);
  rec.Release();
  writer.Drain();
  EXPECT_EQ(rec.sent().size(), 9u);
  EXPECT_EQ(rec.max_in_flight(), 8);
}

TEST(StatusWriterTest, WaitingForRoomEndsWhenTheWritesAreTakenOrAtTheDeadline) {
  // One place in flight, held: of three admissions two stay queued until it is released.
  Recorder rec([](const Write& w) { return w.name == "a1"; });
  StatusWriter writer(rec.sinks(), 1, 0);
  Releaser releaser{rec};
  for (const char* name : {"a1", "a2", "a3"}) writer.Enqueue(StatusWriter::kAdmission, W(name, "x"));
  rec.WaitForSends(1);
  const auto soon = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  EXPECT_FALSE(writer.WaitQueuedAtMost(StatusWriter::kAdmission, 1, soon));
  EXPECT_GE(std::chrono::steady_clock::now(), soon);                        // it waited for the deadline
  EXPECT_TRUE(writer.WaitQueuedAtMost(StatusWriter::kAdmission, 2, soon));  // two are queued
  EXPECT_TRUE(writer.WaitQueuedAtMost(StatusWriter::kQueueStatus, 0, soon));
  // Released, the writer takes the others, and the wait ends then rather than at its deadline.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rec.Release();
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(writer.WaitQueuedAtMost(StatusWriter::kAdmission, 0, started + std::chrono::seconds(30)));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));  // not a lost wake-up
  release.join();
  EXPECT_EQ(writer.Queued(StatusWriter::kAdmission), 0u);
  writer.Drain();
  EXPECT_EQ(rec.sent().size(), 3u);
}

TEST(StatusWriterTest, StopsWithWritesStillQueued) {
  Recorder rec;
  auto writer = std::make_unique<StatusWriter>(rec.sinks(), 1, 0);
  writer->Enqueue(StatusWriter::kAdmission, W("a", "1"));
  rec.WaitForSends(1);
  writer->Enqueue(StatusWriter::kAdmission, W("b", "1"));
  rec.Release();
  writer.reset();  // joins after the write in progress; "b" may or may not have been sent
  EXPECT_GE(rec.sent().size(), 1u);
}

}  // namespace
}  // namespace rota::controller
