// libFuzzer target: every parser of text that comes from outside, chosen by the input's first
// byte. Nothing here may crash, hang, leak or read out of bounds, whatever the input:
//   0  Kueue YAML as `rota simulate` reads it (YAML, the objects, the snapshot, the engine)
//   1  `rota run`'s config file
//   2  a kubeconfig file
//   3  a Kueue object as a list or watch delivers it (JSON), decoded as the cache decodes it
//   4  a Kubernetes quantity, which must print back to itself
// Built and run by tests/fuzz/run.sh with Debian's clang.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cache/compact_workload.h"
#include "rota/admission/quantity.h"
#include "rota/api/kueue.h"
#include "rota/apiclient/config.h"
#include "run_config.h"
#include "simulate.h"

namespace {

// A file holding `text`, for the parsers that read files; one per process, rewritten each time.
std::string AsFile(const std::string& text) {
  static const std::string path = "/tmp/rota-fuzz-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

void Simulate(const std::string& text) {
  std::ostringstream out, err;
  rota::simulate::Options options;
  options.max_passes = 20;
  (void)rota::simulate::Run({AsFile(text)}, options, out, err);
}

void DecodeAsTheCacheDoes(const std::string& text) {
  rota::api::Json doc = rota::api::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return;
  (void)rota::api::DecodeObject<rota::api::ClusterQueue>(doc);
  (void)rota::api::DecodeObject<rota::api::LocalQueue>(doc);
  (void)rota::api::DecodeObject<rota::api::Cohort>(doc);
  (void)rota::api::DecodeObject<rota::api::ResourceFlavor>(doc);
  (void)rota::api::DecodeObject<rota::api::WorkloadPriorityClass>(doc);
  static rota::api::JsonInterner templates;
  (void)rota::controller::DecodeCachedWorkload(doc, templates);
}

void QuantityRoundTrip(const std::string& text) {
  auto q = rota::Quantity::Parse(text);
  if (!q.ok()) return;
  const std::string printed = q->ToString();
  auto again = rota::Quantity::Parse(printed);
  if (!again.ok() || again->milli() != q->milli()) std::abort();  // printed must read back the same
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      Simulate(text);
      break;
    case 1:
      (void)rota::controller::ParseRunConfig(text, "rota.yaml");
      break;
    case 2:
      (void)rota::apiclient::LoadKubeconfig(AsFile(text));
      break;
    case 3:
      DecodeAsTheCacheDoes(text);
      break;
    case 4:
      QuantityRoundTrip(text);
      break;
  }
  return 0;
}
