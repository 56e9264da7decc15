#include "job_controller.h"

#include <charconv>
#include <cstdio>
#include <thread>

#include "cache/compact_workload.h"
#include "jobs/checkpoint_relay.h"
#include "jobs/max_exec_time.h"
#include "jobs/pods_ready.h"
#include "jobs/quota_release.h"
#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/thread_name.h"

namespace rota::controller {
namespace {

using apiclient::Json;
namespace wc = api::workload_condition;

std::string LabelOr(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? "" : it->second;
}

bool IsAdmitted(const api::Workload& wl) {
  if (!wl.status || !wl.status->admission) return false;
  const api::Condition* c = api::FindCondition(wl.status->conditions, wc::kAdmitted);
  return c && c->status == api::ConditionStatus::kTrue;
}

// A Job whose change failed is tried again after 5 ms, doubling up to 5 s: a Job must not wait
// minutes after an apiserver restart or a leader's lost lease only because every try failed
// while it lasted (client-go's default cap is 1000 s).
const apiclient::RateLimit kJobRetries{std::chrono::milliseconds(5), std::chrono::milliseconds(5000), 10, 100};

}  // namespace

Result<JobInfo> JobInfo::Decode(const Json& job) {
  JobInfo j;
  api::ObjectMeta meta;
  if (Status s = api::DecodeValue(job.contains("metadata") ? job["metadata"] : Json::object(), "metadata", meta);
      !s.ok()) {
    return s;
  }
  j.ns = meta.namespace_;
  j.name = meta.name;
  j.uid = meta.uid;
  j.labels = meta.labels;
  j.annotations = meta.annotations;
  const Json& spec = job.contains("spec") ? job["spec"] : Json::object();
  j.suspend = spec.value("suspend", false);
  j.parallelism = spec.value("parallelism", 1);
  if (spec.contains("completions") && spec["completions"].is_number_integer())
    j.completions = spec["completions"].get<int32_t>();
  j.pod_template = spec.contains("template") ? spec["template"] : Json::object();
  const Json& status = job.contains("status") ? job["status"] : Json::object();
  j.started = status.contains("startTime") && !status["startTime"].is_null();
  if (status.contains("succeeded") && status["succeeded"].is_number_integer())
    j.succeeded = status["succeeded"].get<int32_t>();
  for (const char* counted : {"active", "terminating"})
    if (status.contains(counted) && status[counted].is_number_integer()) j.active += status[counted].get<int32_t>();
  if (status.contains("conditions") && status["conditions"].is_array()) {
    for (const auto& c : status["conditions"]) {
      if (c.value("status", "") != "True") continue;
      const std::string type = c.value("type", "");
      if (type == "Suspended") {
        j.suspension_seen = true;
        j.suspended_since = c.value("lastTransitionTime", "");
      }
      if (type == "Complete") j.finished = "Succeeded";
      if (type == "Failed") j.finished = "Failed";
      if (!j.finished.empty()) j.finished_message = c.value("message", "Job finished");
    }
  }
  return j;
}

std::string WorkloadNameForJob(const std::string& job_name, const std::string& job_uid) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : job_name + "/" + job_uid) h = (h ^ c) * 16777619u;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%05x", h & 0xfffff);
  std::string base = "job-" + job_name;
  if (base.size() > 240) base.resize(240);
  return base + "-" + suffix;
}

Result<PodInfo> PodInfo::Decode(const Json& pod) {
  PodInfo p;
  const Json& m = pod.contains("metadata") ? pod["metadata"] : Json::object();
  p.ns = m.value("namespace", "");
  p.name = m.value("name", "");
  if (m.contains("labels") && m["labels"].is_object()) p.job = m["labels"].value("batch.kubernetes.io/job-name", "");
  if (m.contains("annotations") && m["annotations"].is_object()) {
    const Json& a = m["annotations"];
    auto text = [&](std::string_view key) {
      auto it = a.find(std::string(key));
      return it != a.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    p.checkpointed_at = text(api::kCheckpointedAtAnnotation);
    p.checkpoint_requested_at = text(api::kCheckpointRequestedAtAnnotation);
  }
  const Json& st = pod.contains("status") ? pod["status"] : Json::object();
  p.succeeded = st.value("phase", "") == "Succeeded";
  if (st.contains("conditions") && st["conditions"].is_array()) {
    for (const auto& c : st["conditions"])
      if (c.value("type", "") == "Ready" && c.value("status", "") == "True") p.ready = true;
  }
  return p;
}

JobController::JobController(apiclient::Client& client, ClusterCache& cache, Logger log, RunConfig config,
                             apiclient::EventRecorder* events, Metrics* metrics, apiclient::Clock& clock)
    : client_(client),
      cache_(cache),
      log_(std::move(log)),
      config_(std::move(config)),
      events_(events),
      metrics_(metrics),
      clock_(clock),
      queue_(clock, kJobRetries) {
  apiclient::Informer<JobInfo>::Handlers h;
  auto enqueue = [this](const JobInfo& j) { queue_.Add(j.ns + "/" + j.name); };
  h.on_add = enqueue;
  h.on_update = [enqueue](const JobInfo&, const JobInfo& j) { enqueue(j); };
  h.on_delete = enqueue;
  apiclient::InformerOptions options;
  options.on_error = [this](const std::string& m) { log_("warn", m); };
  jobs_ = std::make_unique<apiclient::Informer<JobInfo>>(client_, apiclient::resources::kJobs, "", JobInfo::Decode, h,
                                                         options);
  {
    apiclient::Informer<PodInfo>::Handlers ph;
    auto pod_changed = [this](const PodInfo& p) {
      if (!p.job.empty()) queue_.Add(p.ns + "/" + p.job);
    };
    ph.on_add = pod_changed;
    ph.on_update = [pod_changed](const PodInfo&, const PodInfo& p) { pod_changed(p); };
    ph.on_delete = pod_changed;
    apiclient::InformerOptions po = options;
    po.label_selector = "batch.kubernetes.io/job-name";
    pods_ = std::make_unique<apiclient::Informer<PodInfo>>(client_, apiclient::resources::kPods, "", PodInfo::Decode,
                                                           ph, po);
  }
  cache_.OnWorkloadChange([this](const api::Workload& wl) {
    const std::string owner = OwnerJob(wl);
    if (!owner.empty()) queue_.Add(owner);
  });
}

void JobController::Event(const JobInfo& job, const std::string& reason, const std::string& message) {
  if (events_) events_->Post({"batch/v1", "Job", job.ns, job.name, job.uid}, "Normal", reason, message);
}

JobController::~JobController() {
  queue_.ShutDown();
  jobs_->Stop();
  if (pods_) pods_->Stop();
}

void JobController::Run(const std::atomic<bool>& stop, int workers) {
  jobs_->Start();
  if (pods_) pods_->Start();
  while (!stop && !(jobs_->HasSynced() && cache_.HasSynced() && (!pods_ || pods_->HasSynced()))) {
    clock_.SleepFor(std::chrono::milliseconds(20));
  }
  std::vector<std::thread> pool;
  for (int i = 0; i < workers; ++i) {
    pool.emplace_back([this] {
      apiclient::NameThisThread("job-worker");
      while (auto key = queue_.Get()) {
        if (Reconcile(*key)) {
          queue_.Forget(*key);
        } else {
          queue_.AddRateLimited(*key);
        }
        queue_.Done(*key);
      }
    });
  }
  while (!stop) clock_.SleepFor(std::chrono::milliseconds(100));
  jobs_->RequestStop();
  if (pods_) pods_->RequestStop();
  queue_.ShutDownWithDrain();
  for (auto& t : pool) t.join();
  jobs_->Stop();
  if (pods_) pods_->Stop();
}

bool JobController::Reconcile(const std::string& key) {
  auto job = jobs_->Get(key);
  if (!job) return true;  // deleted: the garbage collector removes its Workload (owner reference)
  std::string queue = LabelOr(job->labels, api::kQueueNameLabel);
  if (queue.empty()) {
    if (!cache_.local_queues().Get(job->ns + "/default")) return true;  // not queued: not ours
    queue = "default";
  }
  const std::string wl_name = WorkloadNameForJob(job->name, job->uid);
  auto wl = cache_.workloads().Get(job->ns + "/" + wl_name);
  if (!job->finished.empty()) return wl ? MarkFinished(*job, *wl) : true;
  if (!wl) {
    if (!job->suspend) {
      // Created without the webhook's default: stop it until it is admitted.
      auto r = client_.Patch(apiclient::resources::kJobs, job->ns, job->name, apiclient::PatchType::kMerge,
                             {{"spec", {{"suspend", true}}}});
      if (!r.ok() && !r.error().IsNotFound()) {
        log_("warn", "suspending Job " + key + ": " + r.error().ToString());
        return false;
      }
      log_("info", "suspended Job " + key + " until it is admitted");
      Event(*job, "Suspended", "Suspended until the Workload is admitted");
    }
    return CreateWorkload(*job, queue);
  }
  // A finished Workload holds no quota and the cache keeps little of it (no admission): its Job
  // is neither started nor stopped any more (as Kueue leaves it).
  if (wl->status) {
    const api::Condition* finished = api::FindCondition(wl->status->conditions, wc::kFinished);
    if (finished && finished->status == api::ConditionStatus::kTrue) return true;
  }
  // (The relay also carries an expected run time set on the Job after its Workload was made.)
  const bool relay = api::Checkpointable(job->annotations) || api::Checkpointable(wl->metadata.annotations) ||
                     !CheckpointSettingsPatch(job->annotations, wl->metadata.annotations).empty();
  if (relay && !RelayCheckpoint(*job, *wl)) {
    return false;
  }
  if (EvictedHoldingQuota(*wl)) return StopThenRelease(*job, *wl);
  if (IsAdmitted(*wl)) {
    if (std::optional<int64_t> left = MaxExecSecondsLeft(*wl, WallSeconds())) {
      if (*left <= 0) return DeactivateForMaxExecTime(*job, *wl);
      queue_.AddAfter(job->ns + "/" + job->name, std::chrono::seconds(*left + 1));
    }
    if (job->suspend) return Start(*job, *wl);
    return config_.wait_for_pods_ready ? CheckPodsReady(*job, *wl) : true;
  }
  return Stop(*job, *wl);
}

bool JobController::CheckPodsReady(const JobInfo& job, const api::Workload& wl) {
  int32_t needed = 0;
  for (const auto& psa : wl.status->admission->pod_set_assignments) {
    needed += psa.count.value_or(wl.spec.pod_sets.empty() ? job.parallelism : wl.spec.pod_sets[0].count);
  }
  int32_t up = 0;
  for (const auto& p : PodsOf(job))
    if (p->ready || p->succeeded) ++up;
  const api::Condition* ready = api::FindCondition(wl.status->conditions, wc::kPodsReady);
  if (up >= needed) {
    if (ready && ready->status == api::ConditionStatus::kTrue) return true;
    Json body = {{"apiVersion", api::kApiVersion},
                 {"kind", "Workload"},
                 {"metadata", {{"name", wl.metadata.name}, {"namespace", wl.metadata.namespace_}}},
                 {"status",
                  {{"conditions", Json::array({{{"type", wc::kPodsReady},
                                                {"status", "True"},
                                                {"reason", "PodsReady"},
                                                {"message", "All pods reached readiness and the workload is running"},
                                                {"lastTransitionTime", WallNow()}}})}}}};
    apiclient::PatchOptions apply{"rota-job", true, "status"};
    auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                           apiclient::PatchType::kApply, body, apply);
    return r.ok() || r.error().IsNotFound();
  }
  if (ready && ready->status == api::ConditionStatus::kTrue)
    return true;  // it was up once: not a start-up gang problem
  const int64_t left = PodsReadySecondsLeft(
      wl, std::chrono::duration_cast<std::chrono::seconds>(config_.pods_ready_timeout), WallSeconds());
  if (left > 0) {
    queue_.AddAfter(job.ns + "/" + job.name, std::chrono::seconds(left + 1));
    return true;
  }
  return EvictForPodsReadyTimeout(job, wl);
}

bool JobController::EvictForPodsReadyTimeout(const JobInfo& job, const api::Workload& wl) {
  const PodsReadyEviction e = controller::EvictForPodsReadyTimeout(wl, config_, WallSeconds());
  const bool deactivate = e.deactivate;
  const std::string key = wl.metadata.namespace_ + "/" + wl.metadata.name;
  const Json& status = e.status;
  // (On the version it was computed from: a merge patch replaces the whole conditions list.)
  const Json body = {{"metadata", {{"resourceVersion", wl.metadata.resource_version}}}, {"status", status}};
  auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                         apiclient::PatchType::kMerge, body, {"rota-job", false, "status"});
  if (!r.ok()) {
    log_("warn", "evicting Workload " + key + ": " + r.error().ToString());
    return r.error().IsNotFound();
  }
  if (metrics_) {
    metrics_->Add("kueue_evicted_workloads_total", {{"cluster_queue", wl.status->admission->cluster_queue},
                                                    {"reason", deactivate ? "Deactivated" : "PodsReadyTimeout"}});
  }
  if (deactivate) {
    auto a = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                           apiclient::PatchType::kMerge, {{"spec", {{"active", false}}}});
    if (!a.ok()) log_("warn", "deactivating Workload " + key + ": " + a.error().ToString());
  }
  log_("info", std::string(deactivate ? "deactivated " : "evicted ") + key + " (Job " + job.name +
                   "): its pods were not all ready within the timeout");
  return true;
}

bool JobController::DeactivateForMaxExecTime(const JobInfo& job, const api::Workload& wl) {
  const MaxExecDeactivation d = controller::DeactivateForMaxExecTime(wl, WallSeconds());
  const std::string key = wl.metadata.namespace_ + "/" + wl.metadata.name;
  // Inactive first: a workload whose conditions were written but not this would be admitted
  // again, with its limit started afresh.
  if (wl.spec.active) {
    auto a = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                           apiclient::PatchType::kMerge, {{"spec", {{"active", false}}}});
    if (!a.ok()) {
      log_("warn", "deactivating Workload " + key + " for its maximum execution time: " + a.error().ToString());
      return a.error().IsNotFound();
    }
  }
  // The conditions; the next sync stops the Job and then gives its quota back (StopThenRelease).
  auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                         apiclient::PatchType::kMerge, d.patch, {"rota-job", false, "status"});
  if (!r.ok()) {
    log_("warn", "evicting Workload " + key + " for its maximum execution time: " + r.error().ToString());
    return r.error().IsNotFound();
  }
  if (metrics_) {
    metrics_->Add("kueue_evicted_workloads_total",
                  {{"cluster_queue", wl.status->admission->cluster_queue}, {"reason", "Deactivated"}});
  }
  Event(job, "MaximumExecutionTimeExceeded", d.message);
  log_("info", "deactivated " + key + " (Job " + job.name + "): " + d.message);
  return true;
}

std::vector<std::shared_ptr<const PodInfo>> JobController::PodsOf(const JobInfo& job) const {
  std::vector<std::shared_ptr<const PodInfo>> out;
  for (auto& p : pods_->List())
    if (p->ns == job.ns && p->job == job.name) out.push_back(std::move(p));
  return out;
}

bool JobController::RelayCheckpoint(const JobInfo& job, const api::Workload& wl) {
  const auto pods = PodsOf(job);
  const std::string key = wl.metadata.namespace_ + "/" + wl.metadata.name;
  // The Job's settings (set or changed after its Workload was made) and its latest report.
  Json annotations = CheckpointSettingsPatch(job.annotations, wl.metadata.annotations);
  const int64_t latest = LatestCheckpoint(job, pods);
  if (latest > WorkloadCheckpoint(wl))
    annotations[std::string(api::kCheckpointedAtAnnotation)] = api::FormatTime(latest);
  if (!annotations.empty()) {
    const Json patch = {{"metadata", {{"annotations", annotations}}}};
    auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                           apiclient::PatchType::kMerge, patch);
    if (!r.ok() && !r.error().IsNotFound()) {
      log_("warn",
           "reporting the checkpoint of Job " + job.ns + "/" + job.name + " to " + key + ": " + r.error().ToString());
      return false;
    }
  }
  const std::optional<std::string> requested = RequestedAtForPods(wl);
  if (!requested) return true;
  size_t told = 0;
  for (const auto& pod : pods) {
    if (pod->checkpoint_requested_at == *requested) continue;
    const Json value = requested->empty() ? Json(nullptr) : Json(*requested);
    auto r =
        client_.Patch(apiclient::resources::kPods, pod->ns, pod->name, apiclient::PatchType::kMerge,
                      {{"metadata", {{"annotations", {{std::string(api::kCheckpointRequestedAtAnnotation), value}}}}}});
    if (!r.ok() && !r.error().IsNotFound()) {
      log_("warn", "asking pod " + pod->ns + "/" + pod->name + " to checkpoint: " + r.error().ToString());
      return false;
    }
    ++told;
  }
  if (told > 0 && !requested->empty()) {
    log_("info", "asked the " + std::to_string(told) + " pod(s) of Job " + job.ns + "/" + job.name +
                     " to checkpoint (requested at " + *requested + ")");
    Event(job, "CheckpointRequested", "Asked its pods to checkpoint: rota.dev/checkpoint-requested-at=" + *requested);
  }
  return true;
}

std::optional<int32_t> JobController::MaxExecutionTime(const JobInfo& job) const {
  const std::string text = LabelOr(job.labels, api::kMaxExecTimeLabel);
  if (text.empty()) return std::nullopt;
  int32_t seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec == std::errc() && end == text.data() + text.size() && seconds > 0) return seconds;
  log_("warn", "Job " + job.ns + "/" + job.name + ": label " + std::string(api::kMaxExecTimeLabel) + "=\"" + text +
                   "\" is not a positive number of seconds; ignored");
  return std::nullopt;
}

bool JobController::CreateWorkload(const JobInfo& job, const std::string& queue) {
  int32_t count = job.parallelism;
  if (job.completions) count = std::min(count, *job.completions);
  Json pod_set = {{"name", "main"}, {"count", count}, {"template", job.pod_template}};
  const std::string min = LabelOr(job.annotations, api::kJobMinParallelismAnnotation);
  if (!min.empty()) {
    try {
      const int m = std::stoi(min);
      if (m >= 1 && m <= count)
        pod_set["minCount"] = m;
      else
        log_("warn", "Job " + job.ns + "/" + job.name + ": annotation " +
                         std::string(api::kJobMinParallelismAnnotation) + "=" + min +
                         " must be between 1 and the Job's parallelism (" + std::to_string(count) + "); ignored");
    } catch (...) {
      log_("warn", "Job " + job.ns + "/" + job.name + ": annotation " + std::string(api::kJobMinParallelismAnnotation) +
                       "=\"" + min + "\" is not a number; ignored");
    }
  }
  Json spec = {{"queueName", queue}, {"podSets", Json::array({pod_set})}};
  const std::string cls = LabelOr(job.labels, api::kPriorityClassLabel);
  if (!cls.empty()) {
    auto wpc = cache_.priority_classes().Get(cls);
    spec["priorityClassRef"] = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", cls}};
    spec["priority"] = wpc ? wpc->value : 0;
  }
  if (auto max_exec = MaxExecutionTime(job)) spec["maximumExecutionTimeSeconds"] = *max_exec;
  // The checkpoint handshake's annotations go with it (the scheduler reads only Workloads), and
  // the expected run time that start-time forecasts use.
  Json annotations = Json::object();
  for (std::string_view key : {api::kCheckpointAnnotation, api::kCheckpointTimeoutAnnotation,
                               api::kCheckpointedAtAnnotation, api::kExpectedRuntimeAnnotation}) {
    const std::string value = api::AnnotationOr(job.annotations, key);
    if (!value.empty()) annotations[std::string(key)] = value;
  }
  Json wl = {{"apiVersion", api::kApiVersion},
             {"kind", "Workload"},
             {"metadata",
              {{"name", WorkloadNameForJob(job.name, job.uid)},
               {"namespace", job.ns},
               {"labels", {{"kueue.x-k8s.io/job-uid", job.uid}}},
               {"annotations", annotations},
               {"ownerReferences", Json::array({{{"apiVersion", "batch/v1"},
                                                 {"kind", "Job"},
                                                 {"name", job.name},
                                                 {"uid", job.uid},
                                                 {"controller", true},
                                                 {"blockOwnerDeletion", true}}})}}},
             {"spec", spec}};
  auto r = client_.Create(apiclient::resources::kWorkloads, job.ns, wl);
  if (!r.ok() && !r.error().IsAlreadyExists()) {
    log_("warn", "creating the Workload of Job " + job.ns + "/" + job.name + ": " + r.error().ToString());
    return r.error().retry == apiclient::Retry::kNo;  // a rejected Workload will not fix itself
  }
  if (r.ok()) {
    log_("info",
         "created Workload " + job.ns + "/" + wl["metadata"]["name"].get<std::string>() + " for Job " + job.name);
    Event(job, "CreatedWorkload", "Created Workload: " + job.ns + "/" + wl["metadata"]["name"].get<std::string>());
  }
  return true;
}

int64_t JobController::WallSeconds() const { return std::chrono::system_clock::to_time_t(clock_.WallNow()); }

std::string JobController::WallNow() const { return api::FormatTime(WallSeconds()); }

bool JobController::Start(const JobInfo& job, const api::Workload& wl) {
  // The Workload's pod template is the Job's original one: start from it, add the flavors'.
  const Json& original = wl.spec.pod_sets.empty() ? job.pod_template : wl.spec.pod_sets[0].template_.get();
  const Json& pod_spec = original.contains("spec") ? original["spec"] : Json::object();
  Json node_selector = pod_spec.contains("nodeSelector") ? pod_spec["nodeSelector"] : Json::object();
  Json tolerations = pod_spec.contains("tolerations") ? pod_spec["tolerations"] : Json::array();
  int32_t count = wl.spec.pod_sets.empty() ? job.parallelism : wl.spec.pod_sets[0].count;
  for (const auto& psa : wl.status->admission->pod_set_assignments) {
    if (psa.count) count = *psa.count;
    for (const auto& [resource, flavor_name] : psa.flavors) {
      auto flavor = cache_.flavors().Get(flavor_name);
      if (!flavor) continue;
      for (const auto& [k, v] : flavor->spec.node_labels) node_selector[k] = v;
      for (const auto& t : flavor->spec.tolerations) {
        Json tj = api::EncodeValue(t);
        if (std::find(tolerations.begin(), tolerations.end(), tj) == tolerations.end()) tolerations.push_back(tj);
      }
    }
  }
  Json patch = {{"spec",
                 {{"suspend", false},
                  {"parallelism", count},
                  {"template", {{"spec", {{"nodeSelector", node_selector}, {"tolerations", tolerations}}}}}}}};
  auto r = client_.Patch(apiclient::resources::kJobs, job.ns, job.name, apiclient::PatchType::kMerge, patch);
  if (!r.ok()) {
    log_("warn", "starting Job " + job.ns + "/" + job.name + ": " + r.error().ToString());
    return r.error().IsNotFound();
  }
  log_("info", "started Job " + job.ns + "/" + job.name + " (" + std::to_string(count) + " pods) in ClusterQueue " +
                   wl.status->admission->cluster_queue);
  Event(job, "Started", "Admitted by ClusterQueue " + wl.status->admission->cluster_queue + ", wait for pods to start");
  return true;
}

namespace {

// Whether the Job controller has acted on a suspension made since this admission: its Suspended
// condition is True and no older than the admission. A Suspended=True from before the Job was
// started is stale: the Job controller may still be making the pods of that start. It is
// trusted once the admission is kStaleSuspension old (the Job controller then never saw the
// start, or its pods would exist by now), so that such a Job cannot keep its quota for good.
constexpr int64_t kStaleSuspension = 5;
bool SuspendedSinceAdmission(const JobInfo& job, const api::Workload& wl, int64_t now) {
  const api::Condition* admitted =
      wl.status ? api::FindCondition(wl.status->conditions, api::workload_condition::kQuotaReserved) : nullptr;
  if (!admitted) return true;
  auto since = api::ParseTime(job.suspended_since), at = api::ParseTime(admitted->last_transition_time);
  return !since.ok() || !at.ok() || *since >= *at || now - *at >= kStaleSuspension;
}

}  // namespace

bool JobController::StopThenRelease(const JobInfo& job, const api::Workload& wl) {
  // Pods that have all succeeded need no stopping: the Job completes, and its finish releases the
  // quota. (Suspended at that moment, the Job would never complete, nor say that it saw the
  // suspension: its quota is released once no pod is active.)
  const bool done = job.succeeded >= job.completions.value_or(job.parallelism);
  if (done && !job.suspend) return true;
  if (!done && !Stop(job, wl)) return false;
  // The Job controller has seen the suspension (Suspended=True, written with the counts that
  // follow from it): before that, active may be 0 only because the pods just made are not
  // counted yet. Its next update, once the pods are gone, comes back here.
  if (!job.suspend || !(job.suspension_seen || done) || job.active > 0) return true;
  if (!done && !SuspendedSinceAdmission(job, wl, WallSeconds())) {
    queue_.AddAfter(job.ns + "/" + job.name, std::chrono::seconds(1));  // its pods may be on their way
    return true;
  }
  // The Job's counts lag behind the pods it has just made, and its Suspended condition may be
  // an earlier suspension's: the pods as the apiserver has them now decide.
  apiclient::ListOptions by_job;
  by_job.label_selector = "batch.kubernetes.io/controller-uid=" + job.uid;
  auto pods = client_.ListAll(apiclient::resources::kPods, job.ns, by_job);
  if (!pods.ok()) return false;
  for (const Json& pod : pods->items) {
    const std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
    if (phase == "Succeeded" || phase == "Failed") continue;
    queue_.AddAfter(job.ns + "/" + job.name, std::chrono::seconds(1));  // still running or terminating
    return true;
  }
  const std::string key = wl.metadata.namespace_ + "/" + wl.metadata.name;
  auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                         apiclient::PatchType::kMerge, QuotaReleasePatch(wl, WallNow()), {"rota-job", false, "status"});
  if (!r.ok()) {
    if (r.error().IsNotFound()) return true;
    // (409: the cache had an older Workload; its update brings the Job back here.)
    if (!r.error().IsConflict()) log_("warn", "releasing the quota of Workload " + key + ": " + r.error().ToString());
    return r.error().IsConflict();
  }
  log_("info", "released the quota of " + key + ": the pods of Job " + job.name + " have stopped");
  return true;
}

bool JobController::Stop(const JobInfo& job, const api::Workload& wl) {
  const std::string key = job.ns + "/" + job.name;
  const Json& original = wl.spec.pod_sets.empty() ? job.pod_template : wl.spec.pod_sets[0].template_.get();
  const Json no_spec = Json::object();
  const Json& pod_spec = original.contains("spec") ? original["spec"] : no_spec;
  const Json& job_spec = job.pod_template.contains("spec") ? job.pod_template["spec"] : no_spec;
  const int32_t original_count = wl.spec.pod_sets.empty() ? job.parallelism : wl.spec.pod_sets[0].count;
  auto field = [](const Json& spec, const char* name) { return spec.contains(name) ? spec[name] : Json(nullptr); };
  const bool restored = field(job_spec, "nodeSelector") == field(pod_spec, "nodeSelector") &&
                        field(job_spec, "tolerations") == field(pod_spec, "tolerations") &&
                        job.parallelism == original_count;
  if (job.suspend && restored) return true;
  if (!job.suspend) {
    // 1. Suspend: the Job controller deletes the pods with their termination grace period, the
    //    window a checkpointing trainer uses.
    auto r = client_.Patch(apiclient::resources::kJobs, job.ns, job.name, apiclient::PatchType::kMerge,
                           {{"spec", {{"suspend", true}}}});
    if (!r.ok()) {
      log_("warn", "suspending Job " + key + ": " + r.error().ToString());
      return r.error().IsNotFound();
    }
    log_("info", "suspended Job " + key + ": its Workload was evicted or is not admitted");
    Event(job, "Stopped", "Suspended: the Workload was evicted or is not admitted; pods get their grace period");
  }
  // 2. The template may change only while the Job is suspended and has no start time; the Job
  //    controller clears it after suspending, and so do we, in case it has not yet.
  if (job.started) {
    auto s = client_.Patch(apiclient::resources::kJobs, job.ns, job.name, apiclient::PatchType::kMerge,
                           {{"status", {{"startTime", nullptr}}}}, {"rota", false, "status"});
    if (!s.ok() && !s.error().IsNotFound())
      log_("debug", "clearing the start time of Job " + key + ": " + s.error().ToString());
  }
  // 3. Put back the original template and parallelism; until that succeeds, try again.
  Json restore = {
      {"spec",
       {{"parallelism", original_count},
        {"template",
         {{"spec",
           {{"nodeSelector", field(pod_spec, "nodeSelector")}, {"tolerations", field(pod_spec, "tolerations")}}}}}}}};
  auto t = client_.Patch(apiclient::resources::kJobs, job.ns, job.name, apiclient::PatchType::kMerge, restore);
  if (!t.ok()) {
    log_("debug", "restoring the template of Job " + key + " (will retry): " + t.error().ToString());
    return t.error().IsNotFound();
  }
  return true;
}

bool JobController::MarkFinished(const JobInfo& job, const api::Workload& wl) {
  if (wl.status) {
    const api::Condition* c = api::FindCondition(wl.status->conditions, wc::kFinished);
    if (c && c->status == api::ConditionStatus::kTrue) return true;
  }
  Json body = {
      {"apiVersion", api::kApiVersion},
      {"kind", "Workload"},
      {"metadata", {{"name", wl.metadata.name}, {"namespace", wl.metadata.namespace_}}},
      {"status",
       {{"conditions", Json::array({{{"type", wc::kFinished},
                                     {"status", "True"},
                                     {"reason", job.finished},
                                     {"message", job.finished_message.empty() ? "Job finished" : job.finished_message},
                                     {"lastTransitionTime", WallNow()}}})}}}};
  apiclient::PatchOptions apply;
  apply.field_manager = "rota-job";
  apply.force = true;
  apply.subresource = "status";
  auto r = client_.Patch(apiclient::resources::kWorkloads, wl.metadata.namespace_, wl.metadata.name,
                         apiclient::PatchType::kApply, body, apply);
  if (!r.ok()) {
    log_("warn",
         "marking Workload " + wl.metadata.namespace_ + "/" + wl.metadata.name + " finished: " + r.error().ToString());
    return r.error().IsNotFound();
  }
  log_("info", "Job " + job.ns + "/" + job.name + " finished (" + job.finished + "): its quota is released");
  return true;
}

}  // namespace rota::controller
