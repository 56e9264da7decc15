#include <iomanip>

#include "rota/api/snapshot.h"
#include "rota/kubectl/durations.h"
#include "rota/kubectl/output.h"
#include "rota/kubectl/table.h"
#include "rota/kubectl/why.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

void Field(std::ostream& out, const std::string& label, const std::string& value) {
  out << std::left << std::setw(12) << (label + ":") << " " << value << "\n";
}

std::string RequestsText(const Amounts& requests) {
  std::set<std::string> names;
  for (const auto& [r, milli] : requests)
    if (milli > 0) names.insert(r);
  std::string text;
  for (const std::string& r : OrderResources(names))
    text += (text.empty() ? "" : ", ") + r + ": " + FormatAmount(r, requests.at(r));
  return text.empty() ? "nothing" : text;
}

std::string QueueText(const Explanation& e) {
  if (e.local_queue.empty()) return "<none> (spec.queueName is empty)";
  const std::string cq = e.cluster_queue.empty() ? "<unknown: LocalQueue not found>" : e.cluster_queue;
  return "LocalQueue " + e.local_queue + " -> ClusterQueue " + cq + ", cohort " +
         (e.cohort.empty() ? "<none>" : e.cohort);
}

std::string ForecastText(const Position& p, int64_t now) {
  if (p.estimated_start.empty()) {
    if (p.basis.rfind("no estimate", 0) == 0) return p.basis;
    return "no estimate" + (p.basis.empty() ? "" : " (" + p.basis + ")");
  }
  auto at = api::ParseTime(p.estimated_start);
  const std::string in = at.ok() && *at > now ? " (in " + HumanDuration(*at - now) + ")" : "";
  return "starts around " + p.estimated_start + in + (p.basis.empty() ? "" : ": " + p.basis);
}

// A 0-based position (the visibility API's, as Kueue's) in words: "1st (the head)", "3rd (2 ahead)".
std::string PlaceText(int32_t position) {
  const int32_t n = position + 1;
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return std::to_string(n) + suffix + (position == 0 ? " (the head)" : " (" + std::to_string(position) + " ahead)");
}

void RenderHolders(const std::vector<Holder>& holders, const std::string& note, int64_t now, std::ostream& out) {
  out << "Holding the quota it needs" << (note.empty() ? "" : " (" + note + ")") << ":"
      << (holders.empty() ? " nobody\n" : "\n");
  if (holders.empty()) return;
  Table t({"  WORKLOAD", "CLUSTERQUEUE", "PRIORITY", "PREEMPTIBLE", "HOLDS", "ADMITTED"});
  for (const Holder& h : holders) {
    t.AddRow({"  " + h.ns + "/" + h.name, h.cluster_queue, std::to_string(h.priority), h.preemptible ? "yes" : "no",
              h.usage, h.admitted_at.empty() ? "<unknown>" : AgeOf(h.admitted_at, now) + " ago"});
  }
  t.Render(out);
}

Json HoldersJson(const std::vector<Holder>& holders) {
  Json out = Json::array();
  for (const Holder& h : holders) {
    out.push_back({{"namespace", h.ns},
                   {"name", h.name},
                   {"clusterQueue", h.cluster_queue},
                   {"priority", h.priority},
                   {"preemptible", h.preemptible},
                   {"holds", h.usage},
                   {"gpus", h.gpus},
                   {"admittedAt", h.admitted_at},
                   {"sameClusterQueue", h.same_queue}});
  }
  return out;
}

}  // namespace

void RenderExplanation(const Explanation& e, int64_t now, std::ostream& out) {
  Field(out, "Workload", e.ns + "/" + e.name);
  if (!e.job.empty()) Field(out, "Job", e.job);
  Field(out, "State", e.state + ": " + e.summary);
  Field(out, "Queue", QueueText(e));
  Field(out, "Priority", std::to_string(e.priority));
  Field(out, "Requests", RequestsText(e.requests));
  if (!e.waiting) return;
  Field(out, "Reason", e.reason.empty() ? e.reason_words : e.reason + ": " + e.reason_words);
  if (!e.message.empty()) Field(out, "Message", e.message);
  if (e.position.known) {
    Field(out, "Position",
          PlaceText(e.position.in_cluster_queue) + " in ClusterQueue " + e.cluster_queue + ", " +
              PlaceText(e.position.in_local_queue) + " in LocalQueue " + e.local_queue);
    Field(out, "Forecast", ForecastText(e.position, now));
  } else {
    Field(out, "Position", "unknown (" + e.position.unknown_because + ")");
  }
  if (e.would_borrow) {
    Field(out, "Borrowing",
          "its ClusterQueue has less than it asks for free of its nominal quota: it runs only by "
          "borrowing from cohort " +
              e.cohort + ", or by preemption");
  }
  if (e.cluster_queue.empty() || !e.preemption) return;
  RenderHolders(e.holders, e.holders_note, now, out);
  out << "Preemption could help: " << e.preemption->answer << "\n";
}

Json ExplanationDocument(const Explanation& e) {
  Json requests = Json::object();
  for (const auto& [r, milli] : e.requests) requests[r] = FormatAmount(r, milli);
  Json doc = {{"apiVersion", kOutputApiVersion},
              {"kind", "WorkloadExplanation"},
              {"namespace", e.ns},
              {"workload", e.name},
              {"job", e.job},
              {"state", e.state},
              {"summary", e.summary},
              {"localQueue", e.local_queue},
              {"clusterQueue", e.cluster_queue},
              {"cohort", e.cohort},
              {"priority", e.priority},
              {"requests", requests},
              {"gpus", e.gpus}};
  if (!e.waiting) return doc;
  doc["pending"] = {
      {"reason", e.reason}, {"reasonInWords", e.reason_words}, {"message", e.message}, {"wouldBorrow", e.would_borrow}};
  Json position = {{"known", e.position.known}};
  if (e.position.known) {
    position.update({{"positionInClusterQueue", e.position.in_cluster_queue},
                     {"positionInLocalQueue", e.position.in_local_queue},
                     {"estimatedStartTime", e.position.estimated_start},
                     {"estimateBasis", e.position.basis}});
  } else {
    position["unknownBecause"] = e.position.unknown_because;
  }
  doc["position"] = position;
  doc["holders"] = HoldersJson(e.holders);
  if (!e.holders_note.empty()) doc["holdersNote"] = e.holders_note;
  if (e.preemption) {
    doc["preemption"] = {{"couldHelp", e.preemption->could_help},
                         {"answer", e.preemption->answer},
                         {"candidates", e.preemption->candidates}};
  }
  return doc;
}

}  // namespace rota::kubectl
