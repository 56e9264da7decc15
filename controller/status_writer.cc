#include "status_writer.h"

#include "rota/apiclient/thread_name.h"

namespace rota::controller {

StatusWriter::StatusWriter(Sender send, int threads, int summary_threads, std::function<void()> on_failure)
    : send_(std::move(send)), on_failure_(std::move(on_failure)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] {
    apiclient::NameThisThread("status-writer");
    Work(false);
  });
  for (int i = 0; i < summary_threads; ++i) threads_.emplace_back([this] {
    apiclient::NameThisThread("queue-writer");
    Work(true);
  });
}

StatusWriter::~StatusWriter() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  summary_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void StatusWriter::Ready(const std::string& key, const Entry& e) {
  ready_.emplace(e.priority, e.order, key);
  // Every ready write wakes a thread that may take it (a woken thread takes whatever is first
  // for it, so no write is left behind while one of its threads sleeps).
  work_cv_.notify_one();
  if (e.priority >= kQueueStatus) summary_cv_.notify_one();
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

void StatusWriter::Work(bool summaries_only) {
  std::condition_variable& cv = summaries_only ? summary_cv_ : work_cv_;
  for (;;) {
    std::string key;
    Entry e;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv.wait(l, [&] { return stopping_ || NextFor(summaries_only) != ready_.end(); });
      if (stopping_) return;
      auto next = NextFor(summaries_only);
      key = std::get<2>(*next);
      ready_.erase(next);
      auto it = queued_.find(key);
      e = std::move(it->second);
      queued_.erase(it);
      --queued_by_priority_[e.priority];
      in_flight_.insert(key);
    }
    Outcome outcome = send_(e.write, e.report);
    const bool failed = !outcome.ok;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++(outcome.ok ? counts_.sent : counts_.failed);
      if (e.report || failed) done_.push_back({key, e.seq, std::move(outcome)});
    }
    // Told after the outcome is there to take, and before the write counts as finished (Drain).
    if (failed && on_failure_) on_failure_();
    {
      std::lock_guard<std::mutex> l(mu_);
      in_flight_.erase(key);
      // A newer status of the object arrived while this one was being sent: its turn now.
      if (auto next = queued_.find(key); next != queued_.end()) Ready(key, next->second);
      if (queued_.empty() && in_flight_.empty()) idle_cv_.notify_all();
    }
  }
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
