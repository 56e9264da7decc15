#pragma once

// One admission webhook request as the HTTPS server hands it over: parse the AdmissionReview,
// run the path's rule against the cluster view, answer with a review. A request rota cannot read
// is a 400 with the reason (and a log line); an unknown path a 404; a rule that cannot tell (the
// apiserver did not answer a lookup) a 503 with the reason, which the apiserver's failurePolicy
// then applies; a rule that throws anything else a 500 (a bug costs one request, not the process). Each request to a
// webhook is counted and timed in controller-runtime's webhook metrics (as controller-runtime does, not those to other
// paths).

#include <string>
#include <string_view>

#include "http_server.h"
#include "logger.h"
#include "metrics.h"
#include "rota/apiclient/clock.h"
#include "webhooks.h"

namespace rota::webhook {

controller::HttpReply ServeWebhook(const std::string& path, std::string_view body, const ClusterView& view,
                                   controller::Metrics& metrics, const controller::Logger& log,
                                   apiclient::Clock& clock = apiclient::RealClock());

}  // namespace rota::webhook
