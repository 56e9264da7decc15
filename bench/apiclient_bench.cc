// End-to-end client benchmark against the real local apiserver (bench/run.sh starts one):
// creates N Workloads, lists them all (objects/s), fills an informer and reports its resident
// memory per cached object, then patches M of them and times how fast the informer sees the
// updates through its watch. Last, it writes an admission into M Workloads' status, once by
// server-side apply (as rota and Kueue do) and once by merge patch, and reports what each write
// cost the apiserver in CPU (its own process_cpu_seconds_total), with the informer watching;
// then what the client's CPU per write is from one thread through a Pipeline, through threads
// blocked one request each, and through Boost.Beast instead of libcurl.
//
//   rota_bench_apiclient KUBECONFIG [OBJECTS=50000] [UPDATES=10000]

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "rota/apiclient/client.h"
#include "rota/apiclient/informer.h"
#include "rota/apiclient/thread_name.h"

using namespace rota::apiclient;
using Clock_ = std::chrono::steady_clock;

namespace {

// What a controller keeps of a Workload: a few strings and numbers, not the JSON document.
struct CompactWorkload {
  std::string name;
  std::string resource_version;
  std::string queue;
  int32_t priority = 0;
  int32_t count = 0;
  int64_t gpus_per_pod = 0;
  std::string generation_label;

  static rota::Result<CompactWorkload> Decode(const Json& j) {
    CompactWorkload w;
    const Json& m = j["metadata"];
    w.name = m.value("name", "");
    w.resource_version = m.value("resourceVersion", "");
    if (m.contains("labels") && m["labels"].is_object()) w.generation_label = m["labels"].value("round", "");
    const Json& spec = j["spec"];
    w.queue = spec.value("queueName", "");
    w.priority = spec.value("priority", 0);
    if (spec.contains("podSets") && !spec["podSets"].empty()) w.count = spec["podSets"][0].value("count", 1);
    w.gpus_per_pod = 1000;
    return w;
  }
};

// Resident memory after giving freed heap back to the system, so that transient JSON does not
// count as cached.
int64_t ResidentBytes() {
  malloc_trim(0);
  std::ifstream in("/proc/self/statm");
  long long size = 0, resident = 0;
  in >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// The apiserver's own CPU time so far (user + system), from its /metrics; -1 if unreadable.
double ApiserverCpuSeconds(Client& client) {
  auto body = client.GetRaw("/metrics");
  if (!body.ok()) return -1;
  const std::string key = "\nprocess_cpu_seconds_total ";
  const size_t at = body->find(key);
  return at == std::string::npos ? -1 : std::atof(body->c_str() + at + key.size());
}

double Seconds(Clock_::time_point since) { return std::chrono::duration<double>(Clock_::now() - since).count(); }

// Runs `work(i)` for i in [0, n) on `threads` threads.
void Parallel(int n, int threads, const std::function<bool(int)>& work, std::atomic<int>& failures) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      NameThisThread("bench-client");  // its CPU is read by name (ClientCpu)
      for (int i; (i = next++) < n;)
        if (!work(i)) ++failures;
    });
  }
  for (auto& t : pool) t.join();
}

// CPU seconds the threads named `name` have used so far.
double ThreadCpu(const std::string& name) {
  const auto by_name = ThreadCpuSeconds();
  auto it = by_name.find(name);
  return it == by_name.end() ? 0.0 : it->second;
}

// CPU seconds the benchmark's client threads (Parallel's) have used so far.
double ClientCpu() { return ThreadCpu("bench-client"); }

// Server-side apply patches of `updates` Workloads' status (reply unread, as rota's queue
// status) from the calling thread, keeping `in_flight` going through a Pipeline (libcurl's multi
// interface), as rota's status writer sends them. Returns the writes that failed.
int PipelineApplies(Client& client, const std::string& ns, int updates, size_t in_flight,
                    const std::function<Json(int)>& body) {
  PatchOptions options;
  options.subresource = "status";
  options.force = true;
  options.keep = Keep::kNothing;
  auto pipeline = client.NewPipeline();
  int next = 0, failed = 0;
  while (next < updates || pipeline->in_flight() > 0) {
    while (next < updates && pipeline->in_flight() < in_flight) {
      pipeline->Patch(static_cast<uint64_t>(next), resources::kWorkloads, ns, "wl-" + std::to_string(next),
                      PatchType::kApply, body(next), options);
      ++next;
    }
    for (auto& [id, r] : pipeline->Poll(std::chrono::seconds(1)))
      if (!r.ok()) ++failed;
  }
  return failed;
}

// Server-side apply patches of `updates` Workloads' status from one thread keeping `in_flight`
// going over as many kept HTTP/1.1 connections, through Boost.Beast (HTTP) and Asio's OpenSSL
// stream (TLS) instead of libcurl: what a leaner HTTP path would cost a write, beside the
// Pipeline's. TLS as the client has it (the kubeconfig's CA, client certificate, host checked);
// bearer tokens are sent, token files are not read. Returns the writes that failed.
int BeastApplies(const RestConfig& cfg, const std::string& ns, int updates, int in_flight,
                 const std::function<Json(int)>& body) {
  namespace net = boost::asio;
  namespace ssl = net::ssl;
  namespace http = boost::beast::http;
  namespace beast = boost::beast;
  const std::string hostport = cfg.server.substr(cfg.server.find("://") + 3);
  const std::string host = hostport.substr(0, hostport.rfind(':'));
  const std::string port = hostport.substr(hostport.rfind(':') + 1);
  net::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  if (!cfg.ca_data.empty())
    ctx.add_certificate_authority(net::buffer(cfg.ca_data));
  else if (!cfg.ca_file.empty())
    ctx.load_verify_file(cfg.ca_file);
  if (!cfg.client_cert_data.empty())
    ctx.use_certificate_chain(net::buffer(cfg.client_cert_data));
  else if (!cfg.client_cert_file.empty())
    ctx.use_certificate_chain_file(cfg.client_cert_file);
  if (!cfg.client_key_data.empty())
    ctx.use_private_key(net::buffer(cfg.client_key_data), ssl::context::pem);
  else if (!cfg.client_key_file.empty())
    ctx.use_private_key_file(cfg.client_key_file, ssl::context::pem);
  ctx.set_verify_mode(cfg.insecure ? ssl::verify_none : ssl::verify_peer);
  const auto endpoints = net::ip::tcp::resolver(io).resolve(host, port);

  int next = 0, failures = 0;
  struct Conn {
    explicit Conn(net::io_context& io, ssl::context& ctx) : stream(io, ctx) {}
    beast::ssl_stream<beast::tcp_stream> stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
  };
  std::vector<std::unique_ptr<Conn>> conns;
  std::function<void(Conn&)> send = [&](Conn& c) {
    if (next >= updates) return;
    const int i = next++;
    c.req = {};
    c.req.method(http::verb::patch);
    c.req.version(11);
    c.req.target("/apis/kueue.x-k8s.io/v1beta2/namespaces/" + ns + "/workloads/wl-" + std::to_string(i) +
                 "/status?fieldManager=bench&force=true");
    c.req.set(http::field::host, host);
    c.req.set(http::field::content_type, "application/apply-patch+yaml");
    c.req.set(http::field::accept, "application/json");
    if (!cfg.token.empty()) c.req.set(http::field::authorization, "Bearer " + cfg.token);
    c.req.body() = body(i).dump();
    c.req.prepare_payload();
    http::async_write(c.stream, c.req, [&, conn = &c](beast::error_code ec, size_t) {
      if (ec) {
        ++failures;
        return;
      }
      conn->res = {};
      http::async_read(conn->stream, conn->buffer, conn->res, [&, conn](beast::error_code ec, size_t) {
        if (ec) {
          ++failures;
          return;
        }
        if (conn->res.result_int() != 200) ++failures;
        send(*conn);
      });
    });
  };
  for (int k = 0; k < in_flight; ++k) {
    auto c = std::make_unique<Conn>(io, ctx);
    SSL_set_tlsext_host_name(c->stream.native_handle(), host.c_str());
    c->stream.set_verify_callback(ssl::host_name_verification(host));
    beast::get_lowest_layer(c->stream).connect(endpoints);
    c->stream.handshake(ssl::stream_base::client);
    conns.push_back(std::move(c));
  }
  for (auto& c : conns) send(*c);
  io.run();
  return failures + (updates - next);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s KUBECONFIG [OBJECTS] [UPDATES]\n", argv[0]);
    return 2;
  }
  const int objects = argc > 2 ? std::atoi(argv[2]) : 50000;
  const int updates = argc > 3 ? std::atoi(argv[3]) : 10000;
  auto cfg = LoadKubeconfig(argv[1]);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 1;
  }
  cfg->qps = 100000;
  cfg->burst = 100000;
  auto client = std::move(Client::Create(*cfg).value());
  const std::string ns = "bench-apiclient";
  (void)client->Create(resources::kNamespaces, "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});

  Json base = Json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"labels": {"round": "0"}}, "spec": {"queueName": "gpu", "priority": 100,
    "podSets": [{"name": "main", "count": 4, "template": {"spec": {"containers": [{"name": "trainer",
    "image": "registry.example/llm-finetune:1.0", "resources": {"requests": {"cpu": "16",
    "memory": "256Gi", "nvidia.com/gpu": "4"}}}]}}}]}})");
  std::atomic<int> failures{0};
  auto start = Clock_::now();
  Parallel(
      objects, 8,
      [&](int i) {
        Json w = base;
        w["metadata"]["name"] = "wl-" + std::to_string(i);
        auto r = client->Create(resources::kWorkloads, ns, w);
        return r.ok() || r.error().IsAlreadyExists();
      },
      failures);
  std::printf("created   %6d workloads in %6.1f s  (%7.0f objects/s, %d failed)\n", objects, Seconds(start),
              objects / Seconds(start), failures.load());

  start = Clock_::now();
  auto list = client->ListAll(resources::kWorkloads, ns);
  if (!list.ok()) {
    std::fprintf(stderr, "list: %s\n", list.error().ToString().c_str());
    return 1;
  }
  const size_t listed = list->items.size();
  std::printf("listed    %6zu workloads in %6.2f s  (%7.0f objects/s, pages of 500)\n", listed, Seconds(start),
              listed / Seconds(start));
  list = List{};  // free it before measuring the informer

  const int64_t rss_before = ResidentBytes();
  std::atomic<int> seen_updates{0};
  // A label value of this run's own, so that each patch is a real change.
  const std::string round = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  Informer<CompactWorkload>::Handlers h;
  h.on_update = [&](const CompactWorkload& o, const CompactWorkload& n) {
    if (n.generation_label == round && o.generation_label != round) ++seen_updates;
  };
  InformerOptions informer_options;
  informer_options.settle = std::chrono::milliseconds(50);  // as `rota run` reads its watches
  Informer<CompactWorkload> informer(*client, resources::kWorkloads, ns, CompactWorkload::Decode, h, informer_options);
  start = Clock_::now();
  informer.Start();
  while (!informer.HasSynced()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const double sync_s = Seconds(start);
  const int64_t rss_after = ResidentBytes();
  std::printf(
      "informer  %6zu cached in    %6.2f s  (%7.0f objects/s); resident memory +%.1f MiB = %.0f bytes per cached "
      "object\n",
      informer.Size(), sync_s, informer.Size() / sync_s, (rss_after - rss_before) / 1048576.0,
      static_cast<double>(rss_after - rss_before) / static_cast<double>(std::max<size_t>(1, informer.Size())));

  auto watch_cpu = [] { return ThreadCpu("watch/workloads"); };  // the informer's watch thread
  const double watch_cpu_before = watch_cpu();
  start = Clock_::now();
  failures = 0;
  Parallel(
      updates, 8,
      [&](int i) {
        return client
            ->Patch(resources::kWorkloads, ns, "wl-" + std::to_string(i), PatchType::kMerge,
                    {{"metadata", {{"labels", {{"round", round}}}}}})
            .ok();
      },
      failures);
  const double patch_s = Seconds(start);
  while (seen_updates < updates - failures && Seconds(start) < 120)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double watch_s = Seconds(start);
  std::printf(
      "patched   %6d workloads in %6.1f s  (%7.0f updates/s); informer saw %d of them after %.1f s (%7.0f updates/s "
      "through the watch); its watch thread %.0f us of CPU per update\n",
      updates, patch_s, updates / patch_s, seen_updates.load(), watch_s, seen_updates / watch_s,
      1e6 * (watch_cpu() - watch_cpu_before) / std::max(1, seen_updates.load()));

  // An admission as a controller writes it: the assignment and two conditions.
  auto admission_status = [&](int i, const std::string& message) {
    Json c = {{"type", "QuotaReserved"},
              {"status", "True"},
              {"reason", "QuotaReserved"},
              {"message", message},
              {"lastTransitionTime", "2026-11-23T00:00:00Z"}};
    Json a = c;
    a["type"] = "Admitted";
    a["reason"] = "Admitted";
    return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                {"kind", "Workload"},
                {"metadata", {{"name", "wl-" + std::to_string(i)}, {"namespace", ns}}},
                {"status",
                 {{"admission",
                   {{"clusterQueue", "team-a"},
                    {"podSetAssignments", Json::array({{{"name", "main"},
                                                        {"count", 4},
                                                        {"flavors", {{"nvidia.com/gpu", "a100"}}},
                                                        {"resourceUsage", {{"nvidia.com/gpu", "4"}}}}})}}},
                  {"conditions", Json::array({c, a})}}}};
  };
  int total_failures = failures;
  auto round_label = [&](int r) { return round + "-" + std::to_string(r); };  // each write a change
  // Each write's reply read whole, up to its metadata (as rota reads an admission's), or not at
  // all (as rota sends queue status): what the client's own CPU per write owes to the reply.
  struct Variant {
    PatchType type;
    Keep keep;
    const char* name;
  };
  for (const Variant& v : {Variant{PatchType::kApply, Keep::kAll, "apply"},
                           Variant{PatchType::kApply, Keep::kMetadata, "apply, reply's metadata"},
                           Variant{PatchType::kApply, Keep::kNothing, "apply, reply unread"},
                           Variant{PatchType::kMerge, Keep::kAll, "merge"}}) {
    const PatchType type = v.type;
    const char* verb = v.name;
    PatchOptions options;
    options.subresource = "status";
    options.force = type == PatchType::kApply;
    options.keep = v.keep;
    const double cpu_before = ApiserverCpuSeconds(*client);
    const double client_before = ClientCpu();
    start = Clock_::now();
    failures = 0;
    Parallel(
        updates, 8,
        [&](int i) {
          return client
              ->Patch(resources::kWorkloads, ns, "wl-" + std::to_string(i), type,
                      admission_status(i, std::string("Quota reserved by ") + verb + " " + round), options)
              .ok();
        },
        failures);
    const double write_s = Seconds(start);
    const double cpu_after = ApiserverCpuSeconds(*client);
    const double client_cpu = ClientCpu() - client_before;
    total_failures += failures;
    std::printf(
        "status %s: %d workloads in %.1f s (%.0f writes/s, %d failed); apiserver CPU %.2f ms per write (-1: "
        "unreadable); client CPU %.0f us per write\n",
        verb, updates, write_s, updates / write_s, failures.load(),
        cpu_before < 0 || cpu_after < 0 ? -1.0 : 1000 * (cpu_after - cpu_before) / updates, 1e6 * client_cpu / updates);
  }
  // The same apply patches (reply unread, as rota's queue status) from one thread keeping 8 in
  // flight through a Pipeline (libcurl's multi interface), as rota's status writer sends them,
  // against 8 threads each blocked in its own request; twice each, alternating, so that a drift
  // of the machine shows.
  for (int round = 0; round < 2; ++round) {
    for (const bool pipelined : {true, false}) {
      PatchOptions options;
      options.subresource = "status";
      options.force = true;
      options.keep = Keep::kNothing;
      const std::string label = std::string(pipelined ? "pipeline" : "threads") + " " + std::to_string(round);
      const double client_before = ClientCpu();
      start = Clock_::now();
      failures = 0;
      if (pipelined) {
        std::thread sender([&] {
          NameThisThread("bench-client");
          failures += PipelineApplies(*client, ns, updates, 8, [&](int i) {
            return admission_status(i, "Quota reserved by " + label + " " + round_label(round));
          });
        });
        sender.join();
      } else {
        Parallel(
            updates, 8,
            [&](int i) {
              return client
                  ->Patch(resources::kWorkloads, ns, "wl-" + std::to_string(i), PatchType::kApply,
                          admission_status(i, "Quota reserved by " + label + " " + round_label(round)), options)
                  .ok();
            },
            failures);
      }
      const double write_s = Seconds(start);
      total_failures += failures;
      std::printf(
          "status apply, reply unread, %s: %d workloads in %.1f s (%.0f writes/s, %d failed); client CPU %.0f us per "
          "write\n",
          pipelined ? "one thread, 8 in flight (Pipeline)" : "8 threads, one each", updates, write_s, updates / write_s,
          failures.load(), 1e6 * (ClientCpu() - client_before) / updates);
    }
  }
  // The same applies through Boost.Beast instead of libcurl (see BeastApplies), against the
  // Pipeline once more, alternating.
  for (int round = 2; round < 4; ++round) {
    for (const bool beast : {true, false}) {
      const std::string label = std::string(beast ? "beast" : "pipeline") + " " + std::to_string(round);
      auto body = [&](int i) { return admission_status(i, "Quota reserved by " + label + " " + round_label(round)); };
      const double client_before = ClientCpu();
      start = Clock_::now();
      int failed = 0;
      std::thread sender([&] {
        NameThisThread("bench-client");
        if (beast) {
          try {
            failed = BeastApplies(*cfg, ns, updates, 8, body);
          } catch (const std::exception& e) {
            std::fprintf(stderr, "beast: %s\n", e.what());
            failed = updates;
          }
          return;
        }
        failed = PipelineApplies(*client, ns, updates, 8, body);
      });
      sender.join();
      total_failures += failed;
      std::printf(
          "status apply, reply unread, one thread, 8 in flight, %s: %d workloads in %.1f s (%d failed); client CPU "
          "%.0f us per write\n",
          beast ? "Boost.Beast over HTTP/1.1" : "libcurl Pipeline", updates, Seconds(start), failed,
          1e6 * (ClientCpu() - client_before) / updates);
    }
  }
  informer.Stop();
  return total_failures > 0 ? 1 : 0;
}
