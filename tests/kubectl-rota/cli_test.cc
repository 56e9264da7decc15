#include "rota/kubectl/cli.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rota::kubectl {
namespace {

struct Parsed {
  std::optional<int> exit;
  Invocation inv;
  std::string out, err;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  std::ostringstream out, err;
  p.exit = ParseCommandLine(args, p.inv, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

TEST(CliTest, ParsesEachCommand) {
  EXPECT_EQ(Parse({"queues"}).inv.command, Command::kQueues);
  Parsed why = Parse({"why", "job/train"});
  EXPECT_FALSE(why.exit);
  EXPECT_EQ(why.inv.command, Command::kWhy);
  EXPECT_EQ(why.inv.target, "job/train");
  EXPECT_EQ(Parse({"preempted"}).inv.command, Command::kPreempted);
  Parsed top = Parse({"top", "--by", "clusterqueue"});
  EXPECT_EQ(top.inv.command, Command::kTop);
  EXPECT_EQ(top.inv.by, GroupBy::kClusterQueue);
  EXPECT_EQ(Parse({"top"}).inv.by, GroupBy::kNamespace);
}

TEST(CliTest, KubectlsFlagsGoBeforeOrAfterTheCommand) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-n", "ml", "-o", "yaml", "--context", "prod", "--kubeconfig", "/k", "why", "x"},
           {"why", "x", "-n", "ml", "-o", "yaml", "--context", "prod", "--kubeconfig", "/k"},
           {"why", "--namespace=ml", "x", "--output=yaml", "--context=prod", "--kubeconfig=/k"}}) {
    Parsed p = Parse(args);
    ASSERT_FALSE(p.exit) << p.err;
    EXPECT_EQ(p.inv.ns, "ml");
    EXPECT_EQ(p.inv.output, Output::kYaml);
    EXPECT_EQ(p.inv.context, "prod");
    EXPECT_EQ(p.inv.kubeconfig, "/k");
    EXPECT_EQ(p.inv.target, "x");
  }
  EXPECT_TRUE(Parse({"top", "-A"}).inv.all_namespaces);
  EXPECT_EQ(Parse({"queues", "-o", "json"}).inv.output, Output::kJson);
  EXPECT_EQ(Parse({"queues", "-o", "wide"}).inv.output, Output::kWide);
  EXPECT_EQ(Parse({"queues"}).inv.output, Output::kTable);
}

TEST(CliTest, SinceIsAGoDuration) {
  EXPECT_EQ(Parse({"preempted", "--since", "1h30m"}).inv.since_seconds, 5400);
  EXPECT_EQ(Parse({"preempted"}).inv.since_seconds, 0);
  Parsed bad = Parse({"preempted", "--since", "yesterday"});
  EXPECT_EQ(bad.exit, kUsageError);
  EXPECT_NE(bad.err.find("--since"), std::string::npos) << bad.err;
}

TEST(CliTest, UsageErrorsExitTwoAndSayWhatWasWrong) {
  const std::vector<std::vector<std::string>> bad = {
      {"queues", "--no-such-flag"}, {"no-such-command"},     {"why"},           {"why", "pod/x"},
      {"queues", "-o", "xml"},      {"top", "--by", "team"}, {"why", "a", "b"}, {"-n"}};
  for (const auto& args : bad) {
    Parsed p = Parse(args);
    EXPECT_EQ(p.exit, kUsageError) << args.front();
    EXPECT_NE(p.err.find("error: "), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("kubectl rota --help"), std::string::npos) << p.err;
  }
  EXPECT_NE(Parse({"queues", "-o", "xml"}).err.find("unknown format \"xml\": use json, yaml or wide"),
            std::string::npos);
  EXPECT_NE(Parse({"why", "pod/x"}).err.find("unknown kind \"pod\""), std::string::npos);
}

TEST(CliTest, HelpExitsZero) {
  Parsed root = Parse({"--help"});
  EXPECT_EQ(root.exit, 0);
  for (const char* command : {"queues", "why", "preempted", "top"})
    EXPECT_NE(root.out.find(command), std::string::npos) << command;
  EXPECT_NE(root.out.find("Exit codes"), std::string::npos);
  Parsed why = Parse({"why", "--help"});
  EXPECT_EQ(why.exit, 0);
  EXPECT_NE(why.out.find("Usage: kubectl rota why [OPTIONS] TARGET"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("Global flags"), std::string::npos);
  EXPECT_EQ(Parse({}).exit, 0);  // (as kubectl: no command shows the help)
}

}  // namespace
}  // namespace rota::kubectl
