#include "rota/kubectl/cluster.h"

#include "rota/kubectl/context.h"

namespace rota::kubectl {
namespace {

using apiclient::Client;
using apiclient::Resource;
namespace res = apiclient::resources;

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

const Resource kVisibilityLocalQueues{"visibility.kueue.x-k8s.io", "v1beta2", "localqueues", true};

// Decodes each item as T; an item that does not decode is left out, with a warning naming it.
template <api::ApiObject T>
std::vector<T> DecodeItems(std::vector<Json>&& items, std::ostream& warnings) {
  std::vector<T> out;
  out.reserve(items.size());
  for (Json& item : items) {
    auto decoded = api::DecodeObject<T>(item);
    if (decoded.ok()) {
      out.push_back(std::move(decoded).value());
    } else {
      warnings << "Warning: left out: " << decoded.status().message() << "\n";
    }
  }
  return out;
}

class ApiClusterReader final : public ClusterReader {
 public:
  ApiClusterReader(Client& client, std::ostream& warnings) : client_(client), warnings_(warnings) {}

  Fetched<std::vector<api::ClusterQueue>> ClusterQueues() override {
    return ListOf<api::ClusterQueue>(res::kClusterQueues, "");
  }
  Fetched<std::vector<api::LocalQueue>> LocalQueues(const std::string& ns) override {
    return ListOf<api::LocalQueue>(res::kLocalQueues, ns);
  }
  Fetched<std::vector<api::Workload>> Workloads(const std::string& ns) override {
    return ListOf<api::Workload>(res::kWorkloads, ns);
  }
  Fetched<std::vector<api::WorkloadPriorityClass>> PriorityClasses() override {
    return ListOf<api::WorkloadPriorityClass>(res::kWorkloadPriorityClasses, "");
  }

  Fetched<api::Workload> GetWorkload(const std::string& ns, const std::string& name) override {
    auto got = client_.Get(res::kWorkloads, ns, name);
    if (!got.ok()) return FailureOf(got.error());
    auto decoded = api::DecodeObject<api::Workload>(*got);
    if (!decoded.ok()) return Failure{"error: " + decoded.status().message()};
    return std::move(decoded).value();
  }

  Fetched<JobRef> GetJob(const std::string& ns, const std::string& name) override {
    auto got = client_.Get(res::kJobs, ns, name);
    if (!got.ok()) return FailureOf(got.error());
    return JobRef{ns, name, got->value("/metadata/uid"_json_pointer, "")};
  }

  Fetched<std::vector<api::Workload>> WorkloadsOfJob(const std::string& ns, const std::string& job_uid) override {
    apiclient::ListOptions options;
    options.label_selector = "kueue.x-k8s.io/job-uid=" + job_uid;
    return ListOf<api::Workload>(res::kWorkloads, ns, options);
  }

  Fetched<std::vector<Json>> WorkloadEvents(const std::string& ns) override {
    apiclient::ListOptions options;
    options.field_selector = "involvedObject.kind=Workload";
    auto list = client_.ListAll(res::kEvents, ns, options);
    if (!list.ok()) return FailureOf(list.error());
    return std::move(list->items);
  }

  Fetched<Json> PendingWorkloads(const std::string& ns, const std::string& local_queue) override {
    auto got = client_.Get(kVisibilityLocalQueues, ns, local_queue, "pendingworkloads");
    if (got.ok()) return std::move(got).value();
    const apiclient::ApiError& e = got.error();
    const std::string why = Trimmed(e.message);
    return Failure{e.code == 0 || e.reason.empty() ? why : e.reason + ": " + why, e.IsNotFound()};
  }

 private:
  template <api::ApiObject T>
  Fetched<std::vector<T>> ListOf(const Resource& r, const std::string& ns, apiclient::ListOptions options = {}) {
    options.keep = apiclient::Keep::kAllButManagedFields;
    auto list = client_.ListAll(r, ns, options);
    if (list.ok()) return DecodeItems<T>(std::move(list->items), warnings_);
    if (list.error().IsNotFound()) {
      // (A list of a kind the apiserver does not serve: its CRD is not installed.)
      return Failure{"error: the server doesn't have a resource type \"" + r.plural + "." + r.group +
                     "\" (are the Kueue CRDs installed?)"};
    }
    return FailureOf(list.error());
  }

  Client& client_;
  std::ostream& warnings_;
};

}  // namespace

std::unique_ptr<ClusterReader> NewApiClusterReader(apiclient::Client& client, std::ostream& warnings) {
  return std::make_unique<ApiClusterReader>(client, warnings);
}

Failure FailureOf(const apiclient::ApiError& error) {
  if (error.code == 0) return {"Unable to connect to the server: " + error.message};
  std::string reason = error.reason;
  if (reason.empty()) reason = error.code == 404 ? "NotFound" : "code " + std::to_string(error.code);
  return {"Error from server (" + reason + "): " + Trimmed(error.message), error.IsNotFound()};
}

int Fail(const Context& ctx, const Failure& failure) {
  ctx.err << failure.message << "\n";
  return 1;
}

}  // namespace rota::kubectl
