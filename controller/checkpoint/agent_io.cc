#include "checkpoint/agent_io.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include "rota/api/checkpoint.h"

namespace rota::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

// The first field of `file` up to `delimiter` (the whole of a one-line file without its newline).
std::string FirstField(const fs::path& file, char delimiter) {
  std::ifstream in(file, std::ios::binary);
  std::string field;
  std::getline(in, field, delimiter);
  return field;
}

bool HasName(const fs::path& process, const std::string& name) {
  if (FirstField(process / "comm", '\n') == name) return true;
  const std::string arg0 = FirstField(process / "cmdline", '\0');
  return !arg0.empty() && (arg0 == name || fs::path(arg0).filename() == name);
}

// The parent's process id from /proc/<pid>/status, or 0.
int ParentOf(const fs::path& process) {
  std::ifstream in(process / "status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("PPid:", 0) == 0) return std::atoi(line.c_str() + 5);
  }
  return 0;
}

}  // namespace

Result<int> ParseSignal(std::string_view text) {
  int number = 0;
  if (auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), number);
      err == std::errc() && end == text.data() + text.size()) {
    if (number > 0 && number < NSIG) return number;
    return InvalidArgument("signal " + std::string(text) + " is out of range");
  }
  std::string name;
  for (char c : text) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  for (int s = 1; s < NSIG; ++s) {
    const char* abbrev = sigabbrev_np(s);
    if (abbrev && name == abbrev) return s;
  }
  return InvalidArgument("\"" + std::string(text) + "\" is not a signal such as SIGUSR1");
}

std::vector<int> ProcessesNamed(const std::string& proc_root, const std::string& name, int self) {
  std::map<int, int> matches;  // process -> its parent
  std::error_code ec;
  for (fs::directory_iterator it(proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    int pid = 0;
    auto [last, err] = std::from_chars(entry.data(), entry.data() + entry.size(), pid);
    if (err != std::errc() || last != entry.data() + entry.size() || pid == self) continue;
    if (HasName(it->path(), name)) matches[pid] = ParentOf(it->path());
  }
  std::vector<int> out;
  for (const auto& [pid, parent] : matches) {
    if (!matches.contains(parent)) out.push_back(pid);
  }
  return out;
}

SignalChannel::SignalChannel(std::string process, int signal, std::string proc_root)
    : process_(std::move(process)), signal_(signal), proc_root_(std::move(proc_root)) {}

Result<std::string> SignalChannel::Request(const std::string&) {
  const std::vector<int> pids = ProcessesNamed(proc_root_, process_, ::getpid());
  if (pids.empty()) {
    return Status(StatusCode::kNotFound, "no process named " + process_ + " in " + proc_root_ +
                                             " (the trainer has not started, or the pod lacks "
                                             "shareProcessNamespace: true)");
  }
  std::string sent, failed;
  for (int pid : pids) {
    if (::kill(pid, signal_) == 0) {
      sent += (sent.empty() ? "" : ", ") + std::to_string(pid);
      continue;
    }
    const int err = errno;
    failed += (failed.empty() ? "" : "; ") + std::to_string(pid) + ": " + std::strerror(err) +
              (err == EPERM ? " (run the agent as the trainer's user, or with CAP_KILL)" : "");
  }
  const std::string what = SignalName(signal_) + " to " + process_;
  if (sent.empty()) return Status(StatusCode::kInternal, "cannot send " + what + ": " + failed);
  return "sent " + what + " (process " + sent + (failed.empty() ? ")" : "; not to " + failed + ")");
}

Result<std::string> RequestFileChannel::Request(const std::string& requested_at) {
  const fs::path target(path_);
  const fs::path temporary = target.parent_path() / ("." + target.filename().string() + ".tmp");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << requested_at << "\n";
    out.close();
    if (!out) return Status(StatusCode::kInternal, temporary.string() + ": cannot be written: " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(temporary, target, ec);
  if (ec) return Status(StatusCode::kInternal, path_ + ": cannot be replaced: " + ec.message());
  return "wrote " + path_;
}

apiclient::Json CheckpointedAtPatch(const std::string& checkpointed_at) {
  return {{"metadata", {{"annotations", {{std::string(api::kCheckpointedAtAnnotation), checkpointed_at}}}}}};
}

Status PodAnnotationReporter::Report(const std::string& checkpointed_at) {
  apiclient::PatchOptions options;
  options.field_manager = "rota-checkpoint-agent";
  options.keep = apiclient::Keep::kNothing;
  auto patched = client_.Patch(apiclient::resources::kPods, namespace_, pod_, apiclient::PatchType::kMerge,
                               CheckpointedAtPatch(checkpointed_at), options);
  if (patched.ok()) return Status::Ok();
  return Status(patched.error().IsNotFound() ? StatusCode::kNotFound : StatusCode::kInternal,
                "pod " + namespace_ + "/" + pod_ + ": " + patched.error().ToString());
}

Result<PodName> ResolvePodName(const std::string& pod, const std::string& pod_namespace,
                               const std::function<const char*(const char*)>& getenv,
                               const std::string& namespace_file) {
  auto env = [&](const char* key) {
    const char* value = getenv(key);
    return std::string(value ? value : "");
  };
  PodName out{pod_namespace, pod};
  if (out.name.empty()) out.name = env("POD_NAME");
  if (out.name.empty()) out.name = env("HOSTNAME");
  if (out.name.empty())
    return InvalidArgument("the pod's name is unknown: give --pod or set POD_NAME (fieldRef metadata.name)");
  if (out.pod_namespace.empty()) out.pod_namespace = env("POD_NAMESPACE");
  if (out.pod_namespace.empty()) out.pod_namespace = FirstField(namespace_file, '\n');
  if (out.pod_namespace.empty()) {
    return InvalidArgument(
        "the pod's namespace is unknown: give --namespace, set POD_NAMESPACE (fieldRef metadata.namespace), or "
        "mount the service account's token (" +
        namespace_file + ")");
  }
  return out;
}

}  // namespace rota::checkpoint
