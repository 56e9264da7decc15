#include "scheduling/status_apply_sink.h"

#include <unordered_map>

namespace rota::controller {
namespace {

class ApplySink : public StatusWriter::Sink {
 public:
  ApplySink(apiclient::Client& client, const Logger& log) : pipeline_(client.NewPipeline()), log_(log) {}

  void Start(uint64_t id, const StatusWriter::Write& w, bool report) override {
    namespace r = apiclient::resources;
    const apiclient::Resource& resource = w.kind == "clusterqueues" ? r::kClusterQueues
                                          : w.kind == "localqueues" ? r::kLocalQueues
                                                                    : r::kWorkloads;
    apiclient::PatchOptions apply;
    apply.field_manager = kStatusFieldManager;
    apply.force = true;
    apply.subresource = "status";
    // Of the reply only the resourceVersion of a write whose outcome is reported is read (an
    // admission or eviction, which the loop assumes until its cache catches up).
    apply.keep = report ? apiclient::Keep::kMetadata : apiclient::Keep::kNothing;
    writes_[id] = &w;  // (for the warning of a failed write, which names it)
    pipeline_->Patch(id, resource, w.ns, w.name, apiclient::PatchType::kApply, w.body, apply);
  }

  std::vector<std::pair<uint64_t, StatusWriter::Outcome>> Poll(std::chrono::milliseconds timeout) override {
    std::vector<std::pair<uint64_t, StatusWriter::Outcome>> out;
    for (auto& [id, res] : pipeline_->Poll(timeout)) {
      StatusWriter::Outcome o;
      const auto write = writes_.extract(id);
      if (res.ok()) {
        o.ok = true;
        o.resource_version = (*res).value("metadata", apiclient::Json::object()).value("resourceVersion", "");
      } else {
        o.error = res.error().ToString();
        if (!res.error().IsNotFound() && write) Warn(*write.mapped(), o.error);  // (a deleted Workload needs no status)
      }
      out.emplace_back(id, std::move(o));
    }
    return out;
  }

  void Wake() override { pipeline_->Wake(); }

 private:
  void Warn(const StatusWriter::Write& w, const std::string& error) const {
    log_("warn", "status of " + w.body.value("kind", std::string("object")) + " " + (w.ns.empty() ? "" : w.ns + "/") +
                     w.name + ": " + error);
  }

  std::unique_ptr<apiclient::Client::Pipeline> pipeline_;
  const Logger& log_;
  std::unordered_map<uint64_t, const StatusWriter::Write*> writes_;  // in flight (see Sink::Start)
};

}  // namespace

std::unique_ptr<StatusWriter::Sink> NewApplySink(apiclient::Client& client, const Logger& log) {
  return std::make_unique<ApplySink>(client, log);
}

}  // namespace rota::controller
