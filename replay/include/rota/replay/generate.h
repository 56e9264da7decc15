#pragma once

// `rota replay --generate-cluster`: a starting configuration derived from a trace, as Kueue YAML
// a person can edit and replay again.
// - Philly: one ClusterQueue per virtual cluster with a nominal quota of 8 GPUs per node of the
//   node counts file (philly_vc_nodes_from_HeliosArtifact.csv); teams it does not list get none
//   and only borrow. All share one cohort, so idle quota is lent, and a team reclaims its own.
// - PAI: one ClusterQueue per QoS class, and flavors for whole GPUs, MIG slices and time slices;
//   the GPUs of the node list are split between the flavors, and each flavor between the
//   classes, by the GPU-hours each asks for in the trace.

#include <istream>
#include <string>

#include "rota/admission/status.h"
#include "rota/replay/trace.h"

namespace rota::replay {

// `nodes` is the Philly node counts file (vc,node num) or the PAI node list (sn,...,gpu,model).
Result<std::string> GeneratePhillyCluster(const Trace& trace, std::istream& nodes, const std::string& nodes_file);
Result<std::string> GeneratePaiCluster(const Trace& trace, std::istream& nodes, const std::string& nodes_file);

}  // namespace rota::replay
