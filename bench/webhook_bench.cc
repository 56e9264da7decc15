// The mutating webhook under a burst: creates N Jobs that name a queue and are not suspended,
// from C concurrent clients, through the real apiserver and rota's webhook (bench/run.sh starts
// the control plane and rota and registers the webhooks). Prints the create round trip's
// percentiles (what a user's `kubectl create` waits, webhook included), rota's own answer time
// from its /metrics histogram, and checks that every Job came back suspended.
//
//   rota_bench_webhook KUBECONFIG NAMESPACE METRICS_URL [JOBS=500] [CLIENTS=16]

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rota/apiclient/client.h"
#include "rota/apiclient/config.h"

using namespace rota::apiclient;
using Clock_ = std::chrono::steady_clock;

namespace {

size_t Append(char* p, size_t n, size_t m, void* out) {
  static_cast<std::string*>(out)->append(p, n * m);
  return n * m;
}

std::string Fetch(const std::string& url) {
  std::string body;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_perform(c);
  curl_easy_cleanup(c);
  return body;
}

// The q-quantile of the series of a Prometheus histogram whose labels include `label` (upper bound of the bucket it
// falls in).
double HistogramQuantile(const std::string& metrics, const std::string& series, const std::string& label, double q) {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + "_bucket{", 0) != 0 || line.find(label) == std::string::npos) continue;
    const size_t le = line.find("le=\"");
    if (le == std::string::npos) continue;
    const std::string bound = line.substr(le + 4, line.find('"', le + 4) - le - 4);
    const double b = bound == "+Inf" ? 1e9 : std::stod(bound);
    buckets.emplace_back(b, std::stod(line.substr(line.rfind(' ') + 1)));
  }
  if (buckets.empty() || buckets.back().second == 0) return -1;
  std::sort(buckets.begin(), buckets.end());
  const double want = q * buckets.back().second;
  for (const auto& [b, c] : buckets)
    if (c >= want) return b;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s KUBECONFIG NAMESPACE METRICS_URL [JOBS=500] [CLIENTS=16]\n", argv[0]);
    return 2;
  }
  const std::string ns = argv[2], metrics_url = argv[3];
  const int jobs = argc > 4 ? std::stoi(argv[4]) : 500;
  const int clients = argc > 5 ? std::stoi(argv[5]) : 16;
  auto cfg = LoadKubeconfig(argv[1]);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 1;
  }
  cfg->qps = 5000;
  cfg->burst = 5000;
  auto client = Client::Create(*cfg);
  if (!client.ok()) return 1;
  Client& c = **client;
  (void)c.Create(resources::kNamespaces, "",
                 Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});

  const Json job =
      Json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"labels":{"kueue.x-k8s.io/queue-name":"bench"}},
    "spec":{"suspend":false,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}})");
  std::vector<double> ms(jobs, 0);
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> pool;
  const auto start = Clock_::now();
  for (int t = 0; t < clients; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next++) < jobs;) {
        Json j = job;
        j["metadata"]["name"] = "burst-" + std::to_string(i);
        const auto t0 = Clock_::now();
        auto r = c.Create(resources::kJobs, ns, j);
        ms[i] = std::chrono::duration<double, std::milli>(Clock_::now() - t0).count();
        if (!r.ok()) {
          ++failed;
          std::fprintf(stderr, "create %d: %s\n", i, r.error().ToString().c_str());
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  const double wall = std::chrono::duration<double>(Clock_::now() - start).count();
  auto list = c.ListAll(resources::kJobs, ns);
  int suspended = 0;
  if (list.ok())
    for (const Json& j : list->items) suspended += j["spec"].value("suspend", false) ? 1 : 0;
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) { return ms[std::min<size_t>(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
  std::printf("webhook burst: %d Jobs from %d clients in %.2f s (%.0f creates/s); %d failed; %d of %d suspended\n",
              jobs, clients, wall, jobs / wall, failed.load(), suspended, jobs);
  std::printf("create round trip through the mutating webhook (ms): p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", pct(0.5),
              pct(0.9), pct(0.99), ms.back());
  const std::string metrics = Fetch(metrics_url);
  const std::string kMutate = "webhook=\"/mutate-batch-v1-job\"";
  const double p50 = HistogramQuantile(metrics, "controller_runtime_webhook_latency_seconds", kMutate, 0.5);
  const double p99 = HistogramQuantile(metrics, "controller_runtime_webhook_latency_seconds", kMutate, 0.99);
  std::printf("rota's answer time (its histogram, bucket upper bounds): p50 <= %.4f s  p99 <= %.4f s\n", p50, p99);
  // Clean up: the Jobs are suspended and queued on a LocalQueue that does not exist.
  (void)c.Delete(resources::kNamespaces, "", ns);
  return failed == 0 && suspended == jobs ? 0 : 1;
}
