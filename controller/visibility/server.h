#pragma once

// What `rota run` serves of the visibility work: Kueue's visibility API over HTTPS (behind the
// apiserver's front proxy), and the parts it shares with the status page: the history of run
// times (fed by the cache), the board and the pass observer. Construct before the cache starts.

#include <memory>

#include "cache/cluster_cache.h"
#include "https_server.h"
#include "logger.h"
#include "queue_controller.h"
#include "run_config.h"
#include "serving/request_auth.h"
#include "visibility/board.h"
#include "visibility/publisher.h"
#include "visibility/run_times.h"
#include "visibility/visibility_api.h"

namespace rota::visibility {

class Visibility {
 public:
  Visibility(controller::ClusterCache& cache, controller::QueueController& controller, controller::Logger log);
  ~Visibility();

  // The API on config.visibility_address (none for "0"); false (after saying why on stderr) when
  // it cannot start.
  bool StartApi(const controller::RunConfig& config, apiclient::Client& client);

  VisibilityBoard& board() { return *board_; }
  const ViewPublisher& publisher() const { return *publisher_; }

 private:
  controller::ClusterCache& cache_;
  controller::Logger log_;
  RunTimeHistory history_;
  std::unique_ptr<VisibilityBoard> board_;
  std::unique_ptr<ViewPublisher> publisher_;
  std::unique_ptr<serving::Reviewer> reviewer_;
  std::unique_ptr<VisibilityApi> api_;
  std::unique_ptr<controller::HttpsServer> server_;  // (last: stops first)
};

}  // namespace rota::visibility
