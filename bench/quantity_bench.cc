// Quantity parsing and formatting sit on the informer path: every ClusterQueue quota and every pod
// request of every Workload goes through Parse, and every status write through ToString.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "rota/admission/quantity.h"

namespace {

const std::vector<std::string> kInputs = {"4", "500m", "36Gi", "1e3", "0.5", "80Gi", "1536Mi", "100M", "250m", "7"};

void BM_QuantityParse(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    auto q = rota::Quantity::Parse(kInputs[i++ % kInputs.size()]);
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuantityParse);

void BM_QuantityToString(benchmark::State& state) {
  std::vector<rota::Quantity> qs;
  for (const auto& s : kInputs) qs.push_back(*rota::Quantity::Parse(s));
  size_t i = 0;
  for (auto _ : state) {
    std::string s = qs[i++ % qs.size()].ToString();
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuantityToString);

}  // namespace
