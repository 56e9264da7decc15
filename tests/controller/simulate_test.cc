// `rota simulate`: files in, decisions out, errors that name the file, document, object and field.

#include "simulate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "yaml_json.h"

namespace rota::simulate {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kExamples = fs::path(ROTA_SOURCE_DIR) / "examples";

class SimulateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rota-simulate-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // Runs simulate; returns the exit code and fills out_/err_.
  int Simulate(const std::vector<std::string>& files, Options options = {}) {
    std::ostringstream out, err;
    int code = rota::simulate::Run(files, options, out, err);
    out_ = out.str();
    err_ = err.str();
    return code;
  }
  json Output() const { return json::parse(out_); }

  fs::path dir_;
  std::string out_, err_;
};

const char* kCluster = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: gpu, namespace: ml}
spec: {clusterQueue: team}
)";

std::string Workload(const std::string& name, int gpus, const std::string& extra_spec = "",
                     const std::string& status = "") {
  return "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: " + name +
         ", namespace: ml, creationTimestamp: \"2026-11-01T10:00:00Z\"}\nspec:\n  queueName: gpu\n" + extra_spec +
         "  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n"
         "        - name: c\n          image: i\n          resources:\n            limits: {nvidia.com/gpu: " +
         std::to_string(gpus) + "}\n" + status;
}

const char* kAdmittedStatus = R"(status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: reserved, lastTransitionTime: "2026-11-01T10:01:00Z"}
  admission:
    clusterQueue: team
    podSetAssignments:
    - name: main
      count: 1
      flavors: {nvidia.com/gpu: a100}
      resourceUsage: {nvidia.com/gpu: "4"}
)";

TEST_F(SimulateTest, TheExampleClusterAdmitsItsWorkloads) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kExamples / "gpu-cluster")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(Simulate(files), 0) << err_;
  json out = Output();
  ASSERT_EQ(out["admitted"].size(), 4u) << out_;
  EXPECT_EQ(out["admitted"][2]["workload"], "team-llm/llm-finetune-70b");
  EXPECT_EQ(out["admitted"][2]["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"], "a100-80gb");
  EXPECT_EQ(out["admitted"][2]["podSetAssignments"][0]["count"], 4);
  EXPECT_EQ(out["admitted"][0]["podSetAssignments"][0]["flavors"]["nvidia.com/mig-1g.10gb"], "a100-mig");
  EXPECT_TRUE(out["pending"].empty());
  // Namespace objects are read; other kinds would be warned about.
  EXPECT_EQ(err_, "");
}

TEST_F(SimulateTest, PreemptsAndReportsTheVictimAsPending) {
  std::string file = Write("c.yaml", std::string(kCluster) + Workload("low", 4, "", kAdmittedStatus) +
                                         Workload("urgent", 4,
                                                  "  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                                                  "WorkloadPriorityClass, name: high}\n  priority: 100\n"));
  ASSERT_EQ(Simulate({file}), 0) << err_;
  json out = Output();
  EXPECT_EQ(out["preempted"],
            json::parse(R"([{"workload": "ml/low", "preemptor": "ml/urgent", "reason": "InClusterQueue"}])"));
  ASSERT_EQ(out["admitted"].size(), 1u);
  EXPECT_EQ(out["admitted"][0]["workload"], "ml/urgent");
  ASSERT_EQ(out["pending"].size(), 1u);
  EXPECT_EQ(out["pending"][0]["workload"], "ml/low");
  EXPECT_EQ(out["pending"][0]["reason"], "WaitingForQuota");
}

// Two 2-GPU workloads fill the queue: "early" was admitted at 10:01 and checkpointed at 11:59,
// "late" was admitted at 11:00 and never checkpointed.
std::string TwoRunning() {
  auto admitted = [](const std::string& name, const std::string& at, const std::string& annotations) {
    std::string w = Workload(name, 2, "", kAdmittedStatus);
    w.replace(w.find("creationTimestamp"), 0, annotations);
    w.replace(w.find("2026-11-01T10:01:00Z"), 20, at);
    w.replace(w.find("nvidia.com/gpu: \"4\""), 19, "nvidia.com/gpu: \"2\"");
    return w;
  };
  return std::string(kCluster) +
         admitted("early", "2026-11-01T10:01:00Z",
                  "annotations: {rota.dev/checkpointed-at: \"2026-11-01T11:59:00Z\"}, ") +
         admitted("late", "2026-11-01T11:00:00Z", "") +
         Workload("urgent", 2,
                  "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}\n"
                  "  priority: 100\n");
}

TEST_F(SimulateTest, WithATimeTheVictimIsTheOneThatLosesLeastWork) {
  std::string file = Write("c.yaml", TwoRunning());
  Options at_noon;
  at_noon.now = 1793534400;  // 2026-11-01T12:00:00Z: early would lose 1 minute, late 60
  ASSERT_EQ(Simulate({file}, at_noon), 0) << err_;
  EXPECT_EQ(Output()["preempted"][0]["workload"], "ml/early") << out_;
  ASSERT_EQ(Simulate({file}), 0) << err_;
  EXPECT_EQ(Output()["preempted"][0]["workload"], "ml/late") << "without a time, Kueue's order: " << out_;
}

TEST_F(SimulateTest, TheCheckpointExampleSparesTheRunThatWouldLoseMost) {
  Options at_noon;
  at_noon.now = 1795694400;  // 2026-11-26T12:00:00Z, as its comment runs it
  ASSERT_EQ(Simulate({(kExamples / "simulate" / "checkpoint.yaml").string()}, at_noon), 0) << err_;
  EXPECT_EQ(Output()["preempted"],
            json::parse(R"([{"workload": "ml/pretrain", "preemptor": "ml/urgent", "reason": "InClusterQueue"}])"));
}

TEST_F(SimulateTest, SameOutputWhateverTheDocumentOrder) {
  std::string forward = Write("f.yaml", std::string(kCluster) + Workload("a", 2) + Workload("b", 2) + Workload("c", 2));
  std::string backward =
      Write("b.yaml", Workload("c", 2).substr(4) + Workload("b", 2) + Workload("a", 2) + "---" + kCluster);
  ASSERT_EQ(Simulate({forward}), 0) << err_;
  std::string first = out_;
  ASSERT_EQ(Simulate({backward}), 0) << err_;
  EXPECT_EQ(out_, first);
  EXPECT_EQ(Output()["pending"][0]["message"],
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
            "flavor a100, 2 more needed; no workload can be preempted to make room");
}

TEST_F(SimulateTest, InvalidInputNamesFileDocumentObjectAndField) {
  std::string file = Write("bad.yaml", R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 4 GPUs}]
)");
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_EQ(err_, file +
                      ": document 2: ClusterQueue \"team\": spec.resourceGroups[0].flavors[0]"
                      ".resources[0].nominalQuota: \"4 GPUs\" is not a valid quantity: unknown "
                      "suffix \" GPUs\" (use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an "
                      "exponent such as e3)\n");
  EXPECT_EQ(out_, "");

  std::string broken = Write("broken.yaml", "kind: ClusterQueue\nmetadata: {name: [unclosed\n");
  EXPECT_EQ(Simulate({broken}), 2);
  EXPECT_NE(err_.find(broken + ": line "), std::string::npos) << err_;

  EXPECT_EQ(Simulate({(dir_ / "missing.yaml").string()}), 2);
  EXPECT_NE(err_.find("missing.yaml: cannot be read"), std::string::npos) << err_;

  std::string pod =
      Write("pod.yaml",
            std::string(kCluster) + Workload("w", 1).substr(0, 0) +
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ml}\n"
                "spec:\n  queueName: gpu\n  podSets:\n  - name: main\n    template:\n      spec:\n        containers:\n"
                "        - name: c\n          resources: {requests: {cpu: lots}}\n");
  EXPECT_EQ(Simulate({pod}), 2);
  EXPECT_NE(err_.find("Workload \"ml/w\": spec.podSets[0].template.spec.containers[0].resources.requests[\"cpu\"]: "
                      "\"lots\" is not a valid quantity"),
            std::string::npos)
      << err_;
}

TEST_F(SimulateTest, OtherKindsAreSkippedWithAWarning) {
  std::string file =
      Write("mixed.yaml", std::string(kCluster) + "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\n");
  ASSERT_EQ(Simulate({file}), 0);
  EXPECT_EQ(err_, file +
                      ": document 5: skipping Job \"train\": rota simulate reads "
                      "kueue.x-k8s.io/v1beta2 objects, Namespaces and rota.dev/v1alpha1 Budgets\n");
}

// A Budget as its status gives it: used hours and the window it is in.
std::string Budget(const std::string& scope, const std::string& when_exhausted, const std::string& used,
                   const std::string& extra_spec = "", const std::string& conditions = "") {
  return "---\napiVersion: rota.dev/v1alpha1\nkind: Budget\nmetadata: {name: team-monthly, creationTimestamp: "
         "\"2026-10-01T00:00:00Z\"}\nspec:\n  " +
         scope +
         "\n  window: {calendar: Monthly, timeZone: UTC}\n  limits: [{resource: nvidia.com/gpu, hours: 100}]\n"
         "  whenExhausted: " +
         when_exhausted + "\n" + extra_spec +
         "status:\n  windowStart: \"2026-11-01T00:00:00Z\"\n  windowEnd: \"2026-12-01T00:00:00Z\"\n"
         "  accountedUntil: \"2026-11-01T12:00:00Z\"\n  used: [{resource: nvidia.com/gpu, hours: \"" +
         used + "\"}]\n" + conditions;
}

constexpr int64_t kNoon = 1793534400;  // 2026-11-01T12:00:00Z

TEST_F(SimulateTest, AnExhaustedHoldBudgetKeepsNewWorkloadsPending) {
  std::string file =
      Write("c.yaml", std::string(kCluster) + Budget("clusterQueue: team", "Hold", "100") + Workload("next", 1));
  ASSERT_EQ(Simulate({file}, {.now = kNoon}), 0) << err_;
  json out = Output();
  EXPECT_TRUE(out["admitted"].empty()) << out_;
  ASSERT_EQ(out["pending"].size(), 1u);
  EXPECT_EQ(out["pending"][0]["reason"], "BudgetExhausted");
  EXPECT_EQ(out["pending"][0]["message"],
            "ClusterQueue team used all 100 GPU-hours of Budget team-monthly this month; resets "
            "2026-12-01T00:00:00Z");

  // Below its limit, the budget holds nothing back.
  file = Write("c.yaml", std::string(kCluster) + Budget("clusterQueue: team", "Hold", "99.5") + Workload("next", 1));
  ASSERT_EQ(Simulate({file}, {.now = kNoon}), 0) << err_;
  EXPECT_EQ(Output()["admitted"].size(), 1u) << out_;
}

// A cohort's budget covers the ClusterQueues below it.
TEST_F(SimulateTest, ACohortBudgetCoversItsQueues) {
  std::string cluster = kCluster;
  cluster.replace(cluster.find("  namespaceSelector: {}"), 0, "  cohortName: research\n");
  std::string file = Write("c.yaml", cluster + Budget("cohort: ml-platform", "Hold", "100") +
                                         "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: "
                                         "research}\nspec: {parentName: ml-platform}\n" +
                                         Workload("next", 1));
  ASSERT_EQ(Simulate({file}, {.now = kNoon}), 0) << err_;
  ASSERT_EQ(Output()["pending"].size(), 1u) << out_;
  EXPECT_EQ(Output()["pending"][0]["reason"], "BudgetExhausted");
}

// Over a BestEffort budget, a team's workloads take only free capacity: the urgent one waits
// rather than preempt, and the one admitted since the exhaustion is the first victim of others.
TEST_F(SimulateTest, OverABestEffortBudgetAWorkloadPreemptsNoOne) {
  const std::string exhausted =
      "  conditions:\n  - {type: Exhausted, status: \"True\", reason: BudgetExhausted, message: m, "
      "lastTransitionTime: \"2026-11-01T09:00:00Z\"}\n";
  std::string file =
      Write("c.yaml", std::string(kCluster) + Budget("clusterQueue: team", "BestEffort", "120", "", exhausted) +
                          Workload("low", 4, "", kAdmittedStatus) + Workload("urgent", 4, "  priority: 100\n"));
  ASSERT_EQ(Simulate({file}, {.now = kNoon}), 0) << err_;
  json out = Output();
  EXPECT_TRUE(out["preempted"].empty()) << out_;
  ASSERT_EQ(out["pending"].size(), 1u);
  EXPECT_EQ(out["pending"][0]["workload"], "ml/urgent");
  EXPECT_NE(out["pending"][0]["message"].get<std::string>().find("preempts no one"), std::string::npos) << out_;
}

// requireFit: 2 GPUs for 3 hours is 6 GPU-hours; with 10 left, the first fits and the second,
// which would need 6 of the 4 left, waits.
TEST_F(SimulateTest, RequireFitChargesEachAdmissionItsMaximumExecutionTime) {
  std::string file =
      Write("c.yaml", std::string(kCluster) + Budget("clusterQueue: team", "Hold", "90", "  requireFit: true\n") +
                          Workload("first", 2, "  maximumExecutionTimeSeconds: 10800\n") +
                          Workload("second", 2, "  maximumExecutionTimeSeconds: 10800\n"));
  ASSERT_EQ(Simulate({file}, {.now = kNoon}), 0) << err_;
  json out = Output();
  ASSERT_EQ(out["admitted"].size(), 1u) << out_;
  EXPECT_EQ(out["admitted"][0]["workload"], "ml/first");
  ASSERT_EQ(out["pending"].size(), 1u);
  EXPECT_EQ(out["pending"][0]["reason"], "BudgetExhausted");
  EXPECT_NE(out["pending"][0]["message"].get<std::string>().find("used 90 of 100 GPU-hours"), std::string::npos)
      << out_;
}

TEST_F(SimulateTest, AnInvalidBudgetIsNamed) {
  std::string file = Write(
      "c.yaml", std::string(kCluster) + Budget("clusterQueue: team\n  cohort: x", "Hold", "1") + Workload("a", 1));
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_NE(err_.find("Budget \"team-monthly\": spec: name exactly one of clusterQueue and cohort"), std::string::npos)
      << err_;
  file = Write("c.yaml", std::string(kCluster) + Budget("clusterQueue: team", "Hold", "lots") + Workload("a", 1));
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_NE(err_.find("status.used[0].hours: \"lots\" is not a number of hours"), std::string::npos) << err_;
}

TEST_F(SimulateTest, WorkloadsThatCannotQueueSayWhy) {
  std::string file =
      Write("q.yaml",
            std::string(kCluster) +
                Workload("nowhere", 1).replace(Workload("nowhere", 1).find("queueName: gpu"), 14, "queueName: cpu") +
                Workload("finished", 1, "",
                         "status:\n  conditions:\n  - {type: Finished, status: \"True\", reason: Succeeded, message: "
                         "done, lastTransitionTime: \"2026-11-01T11:00:00Z\"}\n") +
                Workload("paused", 1, "  active: false\n"));
  ASSERT_EQ(Simulate({file}), 0) << err_;
  json out = Output();
  ASSERT_EQ(out["pending"].size(), 2u) << out_;  // the finished one is ignored
  EXPECT_EQ(out["pending"][0]["workload"], "ml/nowhere");
  EXPECT_EQ(out["pending"][0]["message"], "LocalQueue cpu doesn't exist");
  EXPECT_EQ(out["pending"][1]["reason"], "Inactive");
}

// Bad input is an error that names what is wrong, never an abort or an empty result.
TEST_F(SimulateTest, BadInputIsAnErrorNotACrash) {
  struct Case {
    std::string text, error;
  };
  for (const Case& c : {
           Case{"apiVersion: 5\nkind: ClusterQueue\nmetadata: {name: a}\n", "apiVersion: must be a string"},
           Case{"apiVersion: v1\nkind: List\nitems: 5\n", "items: must be a list"},
           Case{std::string(kCluster) + Workload("neg", 1).replace(Workload("neg", 1).find("count: 1"), 8, "count: -2"),
                "spec.podSets[0].count: -2 must be greater than or equal to 0"},
           Case{std::string(kCluster) + Workload("neg", -1),
                "resources.limits[\"nvidia.com/gpu\"]: -1 must be greater than or equal to 0"},
           Case{std::string(kCluster) + Workload("twice", 1) + Workload("twice", 1),
                "Workload ml/twice is given more than once"},
       }) {
    const std::string file = Write("bad.yaml", c.text);
    EXPECT_EQ(Simulate({file}), 2) << c.text;
    EXPECT_NE(err_.find(c.error), std::string::npos) << "want: " << c.error << "\ngot: " << err_;
    EXPECT_TRUE(out_.empty()) << out_;
  }
}

// A count too large for any integer is a float, which the Workload's count cannot be.
TEST_F(SimulateTest, AHugeHexCountIsAnError) {
  std::string w = Workload("huge", 1);
  const std::string file =
      Write("huge.yaml", std::string(kCluster) + w.replace(w.find("count: 1"), 8, "count: 0xFFFFFFFFFFFFFFFFFFFF"));
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_NE(err_.find("count"), std::string::npos) << err_;
}

// A ',' that no node can start with is a syntax error where it is, not documents without end.
TEST_F(SimulateTest, AStrayCommaIsASyntaxError) {
  const std::string text = std::string(kCluster) + "---\n,\n";
  const auto line = std::count(text.begin(), text.end(), '\n');
  const std::string file = Write("comma.yaml", text);
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_EQ(err_, file + ": line " + std::to_string(line) + ", column 1: unexpected ','\n");
  EXPECT_EQ(out_, "");
}

// A string that yaml-cpp made of an escape is printed in the error, not a crash in the printing.
TEST_F(SimulateTest, AnEscapedLatin1CharacterInAnErrorIsPrinted) {
  const std::string file = Write("nel.yaml",
                                 "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
                                 "spec: {nodeLabels: \"gpu\\N\"}\n");
  EXPECT_EQ(Simulate({file}), 2);
  EXPECT_NE(err_.find("ResourceFlavor \"a100\": spec.nodeLabels: must be a map, not a string (\"gpu\xc2\x85\")"),
            std::string::npos)
      << err_;
}

TEST_F(SimulateTest, ADirectoryIsNotAFile) {
  EXPECT_EQ(Simulate({dir_.string()}), 2);
  EXPECT_NE(err_.find("is a directory"), std::string::npos) << err_;
}

// JSON strings are UTF-8: YAML that is not is refused where it goes wrong, not printed later.
TEST(YamlJsonTest, TextThatIsNotUtf8IsAnError) {
  auto docs = rota::yaml::ParseDocuments("a: 1\nb: caf\xc3\xa9\nc: \xa9\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(), "line 3: byte 17 is not valid UTF-8 (YAML manifests are UTF-8)");
  EXPECT_TRUE(rota::yaml::ParseDocuments("b: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\n").ok());
  EXPECT_FALSE(rota::yaml::ParseDocuments("overlong: \xc0\xaf\n").ok());
}

// A control character YAML does not allow is refused: yaml-cpp would read a NUL in a plain scalar
// as a backslash, and "\0N" as the escape \N.
TEST(YamlJsonTest, ControlCharactersAreAnError) {
  auto docs = rota::yaml::ParseDocuments(std::string("a: 1\nb: x\0Ny\n", 13));
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(), "line 2: byte 9 is the control character U+0000, which YAML does not allow");
  EXPECT_FALSE(rota::yaml::ParseDocuments("a: \x7f\n").ok());
  EXPECT_TRUE(rota::yaml::ParseDocuments("a:\tb\r\nc: \xc2\x85 \xc2\xa0\n").ok());  // tab, CR, NEL, no-break space
}

// yaml-cpp writes the escapes \N and \_ as the bytes 0x85 and 0xA0: they are U+0085 and U+00A0.
TEST(YamlJsonTest, EscapesOfLatin1CharactersAreUtf8) {
  auto docs = rota::yaml::ParseDocuments("a: \"\\N\\_ caf\xc3\xa9 \\xe9\"\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  EXPECT_EQ((*docs)[0]["a"], "\xc2\x85\xc2\xa0 caf\xc3\xa9 \xc3\xa9");
  EXPECT_NO_THROW((void)(*docs)[0].dump());
}

// Aliases that expand without end (a "billion laughs") are refused, not expanded.
TEST(YamlJsonTest, AliasesThatExpandWithoutEndAreAnError) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const std::string prev(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  auto docs = rota::yaml::ParseDocuments(bomb);
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(),
            "line 6, column 36: aliases expand to more than 64 MiB (aliases of aliases without end?)");
}

// A text of aliases of aliases, each `fanout` times the last, `levels` deep, from `leaf`.
std::string AliasesOfAliases(const std::string& leaf, int levels, int fanout) {
  std::string text = "l0: &l0 " + leaf + "\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1), name = "l" + std::to_string(i);
    text += name + ": &" + name + " [" + prev;
    for (int k = 1; k < fanout; ++k) text += ", " + prev;
    text += "]\n";
  }
  return text;
}

// What aliases copy is counted by its size: a long string copied ten thousand times is too much.
TEST(YamlJsonTest, AliasesOfLongTextAreCountedByTheirText) {
  auto docs = rota::yaml::ParseDocuments(AliasesOfAliases(std::string(10'000, 'x'), 4, 10));
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("aliases expand to more than 64 MiB"), std::string::npos)
      << docs.status().message();
}

// The limit is the file's, not each document's: many documents cannot each expand to just under it.
TEST(YamlJsonTest, AliasesInManyDocumentsCountTogether) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "---\n" + AliasesOfAliases("x", 5, 10);
  auto docs = rota::yaml::ParseDocuments(text);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("aliases expand to more than 64 MiB"), std::string::npos)
      << docs.status().message();
}

// An alias inside the node it names would be a value without end: an error, not a stack overflow.
TEST(YamlJsonTest, AnAliasInsideItsOwnAnchorIsAnError) {
  auto docs = rota::yaml::ParseDocuments("a: 1\nb: &b [x, {y: *b}]\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(), "line 2, column 15: *b is inside the node it names");
}

// yaml-cpp makes a ',' no node can start with into an empty document without moving past it.
TEST(YamlJsonTest, ACommaNoNodeStartsWithIsAnError) {
  for (const char* text : {",", "a: 1\n---\n,\n", ", ]", "---\n---\n,"}) {
    auto docs = rota::yaml::ParseDocuments(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_NE(docs.status().message().find(", column 1: unexpected ','"), std::string::npos) << docs.status().message();
  }
}

// Long plain scalars are resolved without a recursion a character deep (std::regex's overflowed the stack).
TEST(YamlJsonTest, ALongNumberIsReadWithoutOverflowingTheStack) {
  const std::string digits(200'000, '7');
  auto docs = rota::yaml::ParseDocuments("a: " + digits + "\nb: -0." + digits + "e-3\nc: 0x" + digits + "\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  EXPECT_EQ((*docs)[0]["a"], digits);  // too large for a double: kept as text
  EXPECT_NEAR((*docs)[0]["b"].get<double>(), -0.000778, 1e-6);
  EXPECT_TRUE((*docs)[0]["c"].is_number());
}

// yaml-cpp refuses nodes nested past the depth it recurses to, as "bad file": said plainly.
TEST(YamlJsonTest, NestingTooDeepSaysSo) {
  auto docs = rota::yaml::ParseDocuments("a: " + std::string(1000, '['));
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find(": lists and maps nested too deep"), std::string::npos)
      << docs.status().message();
}

TEST(YamlJsonTest, ResolvesScalarsLikeKubectl) {
  auto docs = rota::yaml::ParseDocuments(
      "a: 8\nb: \"8\"\nc: 0.5\nd: 80Gi\ne: true\nf: ~\ng: 1e3\nh: 'yes'\ni: [1, two]\n---\n---\nx: 1\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0], json::parse(R"({"a": 8, "b": "8", "c": 0.5, "d": "80Gi", "e": true, "f": null,
                                       "g": 1000.0, "h": "yes", "i": [1, "two"]})"));
  EXPECT_TRUE((*docs)[1].is_null());
  EXPECT_EQ((*docs)[2]["x"], 1);
}

}  // namespace
}  // namespace rota::simulate
