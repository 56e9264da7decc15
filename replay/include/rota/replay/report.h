#pragma once

// The report of one replay, or of two side by side (`rota replay --compare`): summary.json,
// per-team CSV time series and a self-contained report.html (inline SVG, no scripts).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "rota/replay/result.h"

namespace rota::replay {

// Per team and overall: GPU utilization, queueing delay (mean, p50, p95, p99), job completion
// time, preemptions, lost GPU-hours, hours waited within the guarantee, Jain's fairness index.
nlohmann::json Summarize(const Replay& replay);

// One row per interval and team: interval start (RFC 3339 when the epoch is known, else
// seconds), team, GPUs in use, GPUs waiting.
void WriteSeriesCsv(const Replay& replay, std::ostream& out);

// One row per job: the JobOutcome fields.
void WriteJobsCsv(const Replay& replay, std::ostream& out);

// The HTML report of one or more replays of the same trace (the first is the baseline).
void WriteHtml(const std::vector<const Replay*>& replays, std::ostream& out);

}  // namespace rota::replay
