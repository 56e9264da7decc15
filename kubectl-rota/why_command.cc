#include "rota/kubectl/context.h"
#include "rota/kubectl/output.h"
#include "rota/kubectl/why.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

// Reads what Explain needs about `resolved`: its queues, every admitted workload, the priority
// classes, and (while it waits) the visibility API's list of its LocalQueue, which may be absent.
Fetched<WhyInputs> Gather(const Context& ctx, Resolved resolved) {
  WhyInputs in;
  in.workload = std::move(resolved.workload);
  in.job = resolved.job;
  const std::string ns = in.workload.metadata.namespace_;
  auto lqs = ctx.cluster.LocalQueues(ns);
  if (!lqs.ok()) return lqs.error();
  in.local_queues = std::move(lqs).value();
  auto cqs = ctx.cluster.ClusterQueues();
  if (!cqs.ok()) return cqs.error();
  in.cluster_queues = std::move(cqs).value();
  auto workloads = ctx.cluster.Workloads("");
  if (!workloads.ok()) {
    // (A user allowed to read Workloads in their namespace only still learns who holds quota there.)
    auto own = ctx.cluster.Workloads(ns);
    if (!own.ok()) return workloads.error();
    in.holders_note = "of namespace " + ns + " only: " + workloads.error().message;
    workloads = std::move(own);
  }
  in.workloads = std::move(workloads).value();
  auto classes = ctx.cluster.PriorityClasses();
  if (!classes.ok()) return classes.error();
  in.priority_classes = std::move(classes).value();
  const bool waiting = !HoldsQuota(in.workload) && !IsFinished(in.workload);
  if (waiting && !in.workload.spec.queue_name.empty()) {
    auto pending = ctx.cluster.PendingWorkloads(ns, in.workload.spec.queue_name);
    if (pending.ok()) {
      in.pending = std::move(pending).value();
    } else {
      in.visibility_error = pending.error().message;
    }
  }
  return in;
}

}  // namespace

int RunWhy(const Context& ctx) {
  auto target = ParseTarget(ctx.inv.target);
  if (!target.ok()) {  // (the command line checked it)
    ctx.err << "error: " << target.status().message() << "\n";
    return kUsageError;
  }
  auto resolved = ResolveTarget(ctx.cluster, ctx.ns, *target);
  if (!resolved.ok()) return Fail(ctx, resolved.error());
  auto in = Gather(ctx, std::move(resolved).value());
  if (!in.ok()) return Fail(ctx, in.error());
  const Explanation e = Explain(*in);
  if (Structured(ctx.inv.output)) {
    WriteDocument(ExplanationDocument(e), ctx.inv.output, ctx.out);
  } else {
    RenderExplanation(e, ctx.now, ctx.out);
  }
  return 0;
}

}  // namespace rota::kubectl
