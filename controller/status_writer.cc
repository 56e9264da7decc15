#include "status_writer.h"

#include <algorithm>

#include "rota/apiclient/thread_name.h"

namespace rota::controller {
namespace {

// After a poll that returned outcomes while other writes are still in flight, a thread waits
// this long before its next poll, so that one poll collects several replies (less client CPU per
// write at the same rate of writes; see docs/performance.md).
constexpr auto kGather = std::chrono::milliseconds(5);

}  // namespace

StatusWriter::StatusWriter(SinkFactory make_sink, int in_flight, int summary_in_flight,
                           std::function<void()> on_failure, apiclient::Clock& clock)
    : clock_(clock), make_sink_(std::move(make_sink)), on_failure_(std::move(on_failure)) {
  workers_[0].room = static_cast<size_t>(std::max(1, in_flight));
  workers_[1].room = static_cast<size_t>(std::max(0, summary_in_flight));
  workers_[1].summaries_only = true;
  threads_.emplace_back([this] {
    apiclient::NameThisThread("status-writer");
    Work(0);
  });
  if (workers_[1].room > 0) {
    threads_.emplace_back([this] {
      apiclient::NameThisThread("queue-writer");
      Work(1);
    });
  }
}

StatusWriter::~StatusWriter() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    for (Worker& w : workers_)
      if (w.sink) w.sink->Wake();
  }
  work_cv_.notify_all();
  summary_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void StatusWriter::Ready(const std::string& key, const Entry& e) {
  ready_.emplace(e.priority, e.order, key);
  // A ready write wakes each thread that may take it and has room for it: from its wait if it
  // has nothing in flight, else from its poll.
  for (Worker& w : workers_) {
    if (w.room == 0 || w.flying >= w.room || (w.summaries_only && e.priority < kQueueStatus)) continue;
    if (w.flying == 0) {
      (w.summaries_only ? summary_cv_ : work_cv_).notify_one();
    } else if (w.sink && !w.woken) {  // (once until the thread next looks for ready writes)
      w.woken = true;
      ++counts_.wakes;
      w.sink->Wake();
    }
  }
}

StatusWriter::ReadySet::const_iterator StatusWriter::NextFor(bool summaries_only) const {
  return summaries_only ? ready_.lower_bound({kQueueStatus, 0, std::string()}) : ready_.begin();
}

uint64_t StatusWriter::Enqueue(Priority priority, Write w, bool report) {
  std::string key = Key(w);
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t seq = next_seq_++;
  auto it = queued_.find(key);
  if (it == queued_.end()) {
    auto pos = queued_.emplace(key, Entry{priority, seq, seq, report, std::move(w)}).first;
    ++queued_by_priority_[priority];
    if (!in_flight_.count(key)) Ready(key, pos->second);
    return seq;
  }
  // The newer status replaces the unsent one. It keeps the older one's place in the queue when
  // that is ahead, so that rewriting a queued object never makes it wait longer.
  Entry& old = it->second;
  ++counts_.superseded;
  --queued_by_priority_[old.priority];
  const bool was_ready = ready_.erase({old.priority, old.order, key}) > 0;
  const Priority p = std::min(old.priority, priority);
  old = Entry{p, p == old.priority ? old.order : seq, seq, report, std::move(w)};
  ++queued_by_priority_[p];
  if (was_ready) Ready(key, old);
  return seq;
}

void StatusWriter::Work(int worker) {
  std::unique_ptr<Sink> sink = make_sink_();
  Worker& me = workers_[worker];
  const bool summaries_only = me.summaries_only;
  std::condition_variable& cv = summaries_only ? summary_cv_ : work_cv_;
  {
    std::lock_guard<std::mutex> l(mu_);
    me.sink = sink.get();
  }
  std::map<uint64_t, std::pair<std::string, Entry>> flying;  // by the write's seq
  for (;;) {
    std::vector<uint64_t> started;
    {
      std::unique_lock<std::mutex> l(mu_);
      // (Between here and the poll's outcomes the count may run high: that only spares a wake-up
      // of this thread, which is awake; it is exact whenever the thread waits or polls.)
      me.flying = flying.size();
      me.woken = false;
      if (flying.empty()) cv.wait(l, [&] { return stopping_ || NextFor(summaries_only) != ready_.end(); });
      if (stopping_) break;
      // As many ready writes as there is room for, first first.
      for (auto next = NextFor(summaries_only); next != ready_.end() && flying.size() < me.room;
           next = NextFor(summaries_only)) {
        std::string key = std::get<2>(*next);
        ready_.erase(next);
        auto it = queued_.find(key);
        Entry e = std::move(it->second);
        queued_.erase(it);
        --queued_by_priority_[e.priority];
        in_flight_.insert(key);
        const uint64_t seq = e.seq;
        started.push_back(seq);
        flying.emplace(seq, std::make_pair(std::move(key), std::move(e)));
      }
      me.flying = flying.size();
    }
    if (!started.empty()) taken_cv_.notify_all();
    for (uint64_t seq : started) {
      const Entry& e = flying.at(seq).second;
      sink->Start(seq, e.write, e.report);
    }
    if (flying.empty()) continue;
    auto outcomes = sink->Poll(std::chrono::seconds(1));
    for (auto& [seq, outcome] : outcomes) {
      auto it = flying.find(seq);
      if (it == flying.end()) continue;
      auto [key, e] = std::move(it->second);
      flying.erase(it);
      Finish(key, e, std::move(outcome));
    }
    // Replies due soon are left to gather for the next poll, rather than a poll each: a poll
    // and what follows it go over every write in flight (see Sink). The pause is short beside the
    // apiserver's time for a write; it holds a thread to `room` writes per pause (1,600 a second
    // at rota's 8), above the client's default rate limit of 500 a second.
    if (!outcomes.empty() && !flying.empty()) clock_.SleepFor(kGather);
  }
  std::lock_guard<std::mutex> l(mu_);
  me.sink = nullptr;  // (the sink goes when this returns; a write in flight is abandoned)
}

void StatusWriter::Finish(const std::string& key, const Entry& e, Outcome outcome) {
  const bool failed = !outcome.ok;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++(outcome.ok ? counts_.sent : counts_.failed);
    if (e.report || failed) done_.push_back({key, e.seq, std::move(outcome)});
  }
  // Told after the outcome is there to take, and before the write counts as finished (Drain).
  if (failed && on_failure_) on_failure_();
  std::lock_guard<std::mutex> l(mu_);
  in_flight_.erase(key);
  // A newer status of the object arrived while this one was being sent: its turn now.
  if (auto next = queued_.find(key); next != queued_.end()) Ready(key, next->second);
  if (queued_.empty() && in_flight_.empty()) idle_cv_.notify_all();
}

std::vector<StatusWriter::Done> StatusWriter::TakeDone() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<Done> out;
  out.swap(done_);
  return out;
}

size_t StatusWriter::Queued(Priority priority) const {
  std::lock_guard<std::mutex> l(mu_);
  return queued_by_priority_[priority];
}

bool StatusWriter::WaitQueuedAtMost(Priority priority, size_t n, apiclient::Clock::TimePoint until) const {
  std::unique_lock<std::mutex> l(mu_);
  while (queued_by_priority_[priority] > n) {
    if (clock_.Now() >= until) return false;
    clock_.WaitUntil(taken_cv_, l, until);
  }
  return true;
}

bool StatusWriter::Withdraw(const std::string& key, uint64_t seq) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = queued_.find(key);
  if (it == queued_.end() || it->second.seq != seq) return false;
  ready_.erase({it->second.priority, it->second.order, key});
  --queued_by_priority_[it->second.priority];
  queued_.erase(it);
  taken_cv_.notify_all();
  idle_cv_.notify_all();
  return true;
}

bool StatusWriter::Busy(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  return queued_.count(key) > 0 || in_flight_.count(key) > 0;
}

void StatusWriter::Drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [this] { return stopping_ || (queued_.empty() && in_flight_.empty()); });
}

StatusWriter::Counts StatusWriter::counts() const {
  std::lock_guard<std::mutex> l(mu_);
  return counts_;
}

}  // namespace rota::controller
