#include "sample_page.h"

namespace rota::statuspage::testing {
namespace {

std::vector<QueueRow> SampleQueues() {
  return {
      {"team-vision",
       "research",
       {{"a100-80gb", "nvidia.com/gpu", "", 8, 4.0, 4}, {"a100-80gb", "memory", "Gi", 640, std::nullopt, 256}},
       2,
       3,
       true,
       ""},
      {"team-nlp",
       "research",
       {{"a100-80gb", "nvidia.com/gpu", "", 8, 8.0, 12}, {"a100-80gb", "memory", "Gi", 640, std::nullopt, 720}},
       1,
       4,
       true,
       ""},
      {"team-inference",
       "research",
       {{"a100-mig", "nvidia.com/mig-1g.10gb", "", 14, std::nullopt, 6},
        {"a100-mig", "nvidia.com/mig-3g.40gb", "", 4, 0.0, 2}},
       2,
       7,
       true,
       ""},
  };
}

std::vector<PendingRow> SamplePending() {
  return {
      {"ml-vision", "resnet-finetune", "team-vision", "vision", 1000, 1, 1, "Pending",
       "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
       "a100-80gb, 4 more needed",
       "2024-05-14T10:42:00Z", "after team-nlp returns 4 borrowed GPUs (preemption in cohort)"},
      {"ml-vision", "detr-sweep-7", "team-vision", "vision", 100, 2, 2, "Pending",
       "waiting behind ml-vision/resnet-finetune", "2024-05-14T11:30:00Z",
       "running workloads' expected ends (median runtime of the queue)"},
      {"ml-nlp", "llama-sft-13b", "team-nlp", "nlp", 500, 1, 1, "Pending",
       "request 16 nvidia.com/gpu > nominal 8 + borrowing limit 8 of team-nlp", "",
       "no estimate: the request exceeds what the queue can ever get"},
      {"inference", "whisper-batch", "team-inference", "batch", 0, 1, 1, "Pending",
       "insufficient unused quota for nvidia.com/mig-3g.40gb in flavor a100-mig, 2 more needed", "2024-05-14T10:15:30Z",
       "checkpoint of inference/embed-nightly requested"},
      {"inference", "embed-backfill", "team-inference", "batch", 0, 2, 2, "Pending",
       "waiting behind inference/whisper-batch", "", ""},
  };
}

std::vector<ActivityRow> SampleRecent() {
  return {
      {"2024-05-14T10:04:12Z", "CheckpointRequested", "inference/embed-nightly", "team-inference",
       "checkpoint requested for inference/whisper-batch, deadline 2024-05-14T10:14:12Z"},
      {"2024-05-14T10:03:55Z", "Preempted", "ml-nlp/gpt-eval-3", "team-nlp",
       "preempted by ml-vision/resnet-ft: InCohortReclamation"},
      {"2024-05-14T10:03:55Z", "Admitted", "ml-vision/resnet-ft", "team-vision",
       "a100-80gb: 4 nvidia.com/gpu, 256Gi memory"},
      {"2024-05-14T10:01:20Z", "Evicted", "ml-nlp/tokenize-wiki", "team-nlp", "PodsReadyTimeout"},
      {"2024-05-14T09:58:02Z", "Admitted", "ml-nlp/llama-pretrain", "team-nlp",
       "a100-80gb: 8 nvidia.com/gpu (4 borrowed from cohort research)"},
  };
}

}  // namespace

StatusPage SamplePage() {
  StatusPage page;
  page.generated_at = "2024-05-14T10:05:00Z";
  page.refresh_seconds = 5;
  page.is_leader = true;
  page.queues = SampleQueues();
  page.pending = SamplePending();
  page.pending_total = page.pending.size();
  page.recent = SampleRecent();
  return page;
}

}  // namespace rota::statuspage::testing
