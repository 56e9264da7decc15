#include "checkpoint/agent.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::checkpoint {
namespace {

namespace fs = std::filesystem;

std::chrono::system_clock::time_point ModifiedTime(const struct stat& st) {
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

// The annotation `key` as Unix seconds, or nullopt when it is missing or not an RFC 3339 time.
std::optional<int64_t> TimeAnnotation(const Annotations& annotations, std::string_view key) {
  auto it = annotations.find(std::string(key));
  if (it == annotations.end() || it->second.empty()) return std::nullopt;
  auto t = api::ParseTime(it->second);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// Whether `path` is `file`: the same name in the same directory (the file itself may have been
// replaced since).
bool IsFile(const fs::path& path, const fs::path& file) {
  if (file.empty() || path.filename() != file.filename()) return false;
  std::error_code ec;
  const fs::path dir = fs::absolute(file, ec).parent_path();
  return !ec && fs::equivalent(path.parent_path(), dir, ec);
}

}  // namespace

Result<std::optional<CheckpointFile>> NewestCheckpoint(const std::string& dir, const std::string& done_file,
                                                       const std::string& except) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec);
  std::optional<CheckpointFile> newest;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name.starts_with('.')) {
      it.disable_recursion_pending();
      continue;
    }
    if ((!done_file.empty() && name != done_file) || IsFile(path, except)) continue;
    struct stat st {};
    // (A file removed since it was listed is no checkpoint; symbolic links are not followed.)
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    CheckpointFile file{path.string(), ModifiedTime(st), static_cast<uintmax_t>(st.st_size)};
    if (!newest || std::tie(file.modified, file.path) > std::tie(newest->modified, newest->path))
      newest = std::move(file);
  }
  if (ec)
    return Status(ec == std::errc::no_such_file_or_directory ? StatusCode::kNotFound : StatusCode::kInternal,
                  "checkpoint directory " + dir + ": " + ec.message());
  return newest;
}

Agent::Agent(AgentOptions options, TrainerChannel& trainer, CheckpointReporter& reporter, apiclient::Clock& clock,
             controller::Logger log)
    : options_(std::move(options)), trainer_(trainer), reporter_(reporter), clock_(clock), log_(std::move(log)) {}

void Agent::Poll() {
  PollRequest();
  PollCheckpoints();
}

void Agent::Run(const std::atomic<bool>& stop) {
  while (!stop) {
    Poll();
    const apiclient::Clock::TimePoint next = clock_.Now() + options_.poll;
    for (auto now = clock_.Now(); !stop && now < next; now = clock_.Now())
      clock_.SleepFor(std::min<apiclient::Clock::Duration>(next - now, options_.stop_check));
  }
}

void Agent::PollRequest() {
  auto annotations = ReadAnnotationsFile(options_.annotations_file);
  if (!annotations.ok()) {
    LogChange(annotations_error_, "error", "annotations: " + annotations.status().message());
    return;
  }
  LogChange(annotations_error_, "", "");
  if (auto shown = TimeAnnotation(*annotations, api::kCheckpointedAtAnnotation);
      shown && (!checkpointed_at_ || *shown > *checkpointed_at_))
    checkpointed_at_ = shown;

  auto it = annotations->find(std::string(api::kCheckpointRequestedAtAnnotation));
  if (it == annotations->end() || it->second.empty() || it->second == requested_) return;
  const std::string& requested = it->second;
  // (After a restart the request may be one the pod has answered already: asking again would
  // cost the trainer a checkpoint rota no longer waits for.)
  if (auto at = TimeAnnotation(*annotations, api::kCheckpointRequestedAtAnnotation);
      at && checkpointed_at_ && *checkpointed_at_ >= *at) {
    log_("info", "the checkpoint request of " + requested + " is answered already: checkpointed at " +
                     api::FormatTime(*checkpointed_at_));
    requested_ = requested;
    return;
  }
  auto done = trainer_.Request(requested);
  if (!done.ok()) {
    LogChange(request_error_, "error",
              "checkpoint request of " + requested +
                  " not passed on (trying again at each poll): " + done.status().message());
    return;
  }
  LogChange(request_error_, "", "");
  requested_ = requested;
  log_("info", "checkpoint requested at " + requested + ": " + *done);
}

void Agent::PollCheckpoints() {
  auto newest = NewestCheckpoint(options_.checkpoint_dir, options_.done_file, options_.own_file);
  if (!newest.ok()) {
    LogChange(directory_error_, "error", newest.status().message());
    return;
  }
  LogChange(directory_error_, "", "");
  if (!*newest) return;
  const CheckpointFile& file = **newest;
  if (candidate_ != file) {
    candidate_ = file;  // reported at the next poll if it has not changed by then
    return;
  }
  const int64_t saved = std::chrono::floor<std::chrono::seconds>(file.modified.time_since_epoch()).count();
  if (checkpointed_at_ && saved <= *checkpointed_at_) return;
  const std::string at = api::FormatTime(saved);
  Status reported = reporter_.Report(at);
  if (!reported.ok()) {
    LogChange(report_error_, "warn",
              "checkpoint " + file.path + " saved at " + at +
                  " not reported (trying again at each poll): " + reported.message());
    return;
  }
  LogChange(report_error_, "", "");
  checkpointed_at_ = saved;
  log_("info", "reported checkpoint " + file.path + " saved at " + at);
}

void Agent::LogChange(std::string& last, const std::string& level, const std::string& message) {
  if (message == last) return;
  last = message;
  if (!message.empty()) log_(level, message);
}

}  // namespace rota::checkpoint
