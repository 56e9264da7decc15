#include "rota/replay/settings.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rota/api/checkpoint.h"
#include "yaml_json.h"

namespace rota::replay {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Sets `out` from a duration string; an error names the key.
Status Seconds(const json& v, const std::string& key, int64_t& out) {
  if (!v.is_string()) return InvalidArgument(key + ": must be a duration such as 30m");
  Result<int64_t> ms = api::ParseGoDuration(v.get<std::string>());
  if (!ms.ok()) return InvalidArgument(key + ": " + ms.status().message());
  out = *ms / 1000;
  return Status::Ok();
}

Status Flag(const json& v, const std::string& key, bool& out) {
  if (!v.is_boolean()) return InvalidArgument(key + ": must be true or false");
  out = v.get<bool>();
  return Status::Ok();
}

Status Apply(const json& doc, const fs::path& dir, DirectorySettings& s) {
  for (const auto& [key, v] : doc.items()) {
    Status st;
    if (key == "queues") {
      if (!v.is_string() || v.get<std::string>().empty()) return InvalidArgument("queues: must be a directory");
      s.queues_dir = (dir / v.get<std::string>()).lexically_normal().string();
    } else if (key == "victims") {
      if (v != "lost-work" && v != "kueue") return InvalidArgument("victims: must be lost-work or kueue");
      s.simulator.lost_work_order = v == "lost-work";
    } else if (key == "checkpointEvery") {
      st = Seconds(v, key, s.simulator.checkpoint_every);
    } else if (key == "checkpointWrite") {
      st = Seconds(v, key, s.simulator.checkpoint_write);
    } else if (key == "checkpointAll") {
      st = Flag(v, key, s.simulator.checkpoint_all);
    } else if (key == "fairSharing") {
      st = Flag(v, key, s.fair_sharing);
    } else {
      return InvalidArgument(key +
                             ": unknown (queues, victims, checkpointEvery, checkpointAll, checkpointWrite, "
                             "fairSharing)");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

Result<DirectorySettings> ReadSettings(const std::string& dir, const DirectorySettings& defaults) {
  DirectorySettings s = defaults;
  s.queues_dir = dir;
  const fs::path file = fs::path(dir) / kSettingsFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) return s;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  auto docs = yaml::ParseDocuments(text.str());
  if (!docs.ok()) return InvalidArgument(file.string() + ": " + docs.status().message());
  for (const json& doc : *docs) {
    if (doc.is_null()) continue;
    if (!doc.is_object()) return InvalidArgument(file.string() + ": must be a map of settings");
    if (Status st = Apply(doc, fs::path(dir), s); !st.ok()) return InvalidArgument(file.string() + ": " + st.message());
  }
  return s;
}

}  // namespace rota::replay
