#include "visibility/leader_label.h"

#include <cstdlib>

namespace rota::visibility {

void LabelOwnPod(apiclient::Client& client, bool leader, const controller::Logger& log) {
  const char* pod = std::getenv("POD_NAME");
  const char* ns = std::getenv("POD_NAMESPACE");
  if (!pod || !*pod || !ns || !*ns) return;
  const apiclient::Json value = leader ? apiclient::Json("true") : apiclient::Json(nullptr);
  const apiclient::Json patch = {{"metadata", {{"labels", {{kLeaderLabel, value}}}}}};
  auto r = client.Patch(apiclient::resources::kPods, ns, pod, apiclient::PatchType::kMerge, patch);
  if (!r.ok()) {
    log("warn", std::string(leader ? "labelling" : "unlabelling") + " pod " + ns + "/" + pod + " " + kLeaderLabel +
                    ": " + r.error().ToString());
    return;
  }
  log("info", std::string("pod ") + ns + "/" + pod + (leader ? " labelled " : " unlabelled ") + kLeaderLabel);
}

}  // namespace rota::visibility
