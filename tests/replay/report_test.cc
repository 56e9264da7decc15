#include "rota/replay/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rota::replay {
namespace {

// Three teams over two hours of 3600 s: "a" (guarantee 4), "b" (guarantee 4), "<b>&x" (none).
Replay Sample() {
  Replay r;
  r.label = "lab";
  r.teams = {"a", "b", "<b>&x"};
  r.guarantee = {{"a", 4}, {"b", 4}, {"<b>&x", 0}};
  r.capacity = 8;
  r.start = 0;
  r.end = 7200;
  r.interval = 3600;
  r.epoch = "2017-10-01T00:00:00Z";
  // In use in each hour, then waiting in each hour.
  r.series["a"] = {{4, 2}, {0, 1}};
  r.series["b"] = {{2, 4}, {0, 0}};
  r.series["<b>&x"] = {{0, 0}, {3, 3}};
  // name, team, queue, submit, first start, finish, runtime, gpus, preemptions, lost, waited
  r.jobs = {
      {"a1", "a", "cq-a", 0, 10, 110, 100, 2, 0, 0, 0},        {"a2", "a", "cq-a", 0, 20, 220, 100, 2, 1, 7200, 5},
      {"a3", "a", "cq-a", 0, 30, 330, 100, 1, 0, 0, 0},        {"a4", "a", "cq-a", 0, 40, 440, 400, 1, 0, 0, 0},
      {"b1", "b", "cq-b", 100, 100, 200, 100, 4, 0, 0, 0},     {"b,\"2", "b", "cq-b", 100, -1, -1, 50, 1, 0, 0, 0},
      {"x1", "<b>&x", "cq-x", 0, 3600, 7200, 3600, 3, 0, 0, 0}};
  r.jobs[5].waiting_reason = "ExceedsMaxQuota: 50 > 8, too big";
  return r;
}

TEST(ReplaySummary, DelaysArePercentilesOfTheJobsThatStarted) {
  const nlohmann::json s = Summarize(Sample());
  const nlohmann::json& a = s["teams"]["a"]["queueingDelaySeconds"];
  EXPECT_EQ(a["mean"], 25.0);
  EXPECT_EQ(a["p50"], 20.0);  // nearest rank of 10, 20, 30, 40
  EXPECT_EQ(a["p95"], 40.0);
  EXPECT_EQ(a["max"], 40.0);
  EXPECT_EQ(s["trace"]["neverStarted"], 1);
  EXPECT_EQ(s["trace"]["stillWaiting"], (nlohmann::json{{"ExceedsMaxQuota", 1}}));
  EXPECT_EQ(s["trace"]["finished"], 6);
  EXPECT_EQ(s["teams"]["b"]["queueingDelaySeconds"]["mean"], 0.0);  // b,"2 never started: not counted
  EXPECT_EQ(s["teams"]["a"]["preemptions"], 1);
  EXPECT_EQ(s["teams"]["a"]["lostGpuHours"], 2.0);
  EXPECT_EQ(s["overall"]["jobs"], 7);
  EXPECT_EQ(s["overall"]["jobCompletionSeconds"]["p50"], 220.0);
}

TEST(ReplaySummary, UtilizationAndFairnessFollowTheSeries) {
  const nlohmann::json s = Summarize(Sample());
  EXPECT_DOUBLE_EQ(s["teams"]["a"]["meanGpusInUse"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(s["teams"]["a"]["guaranteeUse"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(s["overall"]["utilization"].get<double>(), (3.0 + 3.0 + 0) / 8);
  // a and b both used 3 of their 4: even.
  EXPECT_DOUBLE_EQ(s["jainFairness"].get<double>(), 1.0);
  EXPECT_TRUE(s["teams"]["<b>&x"]["guaranteeUse"].is_null());

  Replay uneven = Sample();
  uneven.series["b"] = {{0, 0}, {0, 0}};  // a gets something, b nothing: 1/2
  EXPECT_DOUBLE_EQ(Summarize(uneven)["jainFairness"].get<double>(), 0.5);
}

TEST(ReplayCsv, SeriesRowsHaveTimesAndJobsAreQuoted) {
  std::ostringstream series, jobs;
  WriteSeriesCsv(Sample(), series);
  WriteJobsCsv(Sample(), jobs);
  std::istringstream lines(series.str());
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 1 + 2 * 3u);
  EXPECT_EQ(rows[0], "interval_start,team,gpus_in_use,gpus_waiting");
  EXPECT_EQ(rows[1], "2017-10-01T00:00:00Z,a,4,0");
  EXPECT_EQ(rows[4], "2017-10-01T01:00:00Z,a,2,1");
  EXPECT_NE(jobs.str().find("\n\"b,\"\"2\",b,cq-b,100,-1,-1,50,1,0,0,0,\"ExceedsMaxQuota: 50 > 8, too big\"\n"),
            std::string::npos)
      << jobs.str();
}

TEST(ReplayHtml, OnePageWithEscapedNamesChartsAndNoScripts) {
  Replay r = Sample();
  r.violations = {"ClusterQueue <cq> holds too much"};
  std::ostringstream out;
  WriteHtml({&r}, out);
  const std::string html = out.str();
  EXPECT_NE(html.find("&lt;b&gt;&amp;x"), std::string::npos);
  EXPECT_EQ(html.find("<b>&x"), std::string::npos);
  EXPECT_NE(html.find("id=\"utilization-0\""), std::string::npos);
  EXPECT_NE(html.find("id=\"delay-cdf-0\""), std::string::npos);
  EXPECT_NE(html.find("ClusterQueue &lt;cq&gt; holds too much"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  std::string without_svg_ns = html;
  for (size_t p; (p = without_svg_ns.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    without_svg_ns.erase(p, 26);
  EXPECT_EQ(without_svg_ns.find("http://"), std::string::npos);
  EXPECT_EQ(without_svg_ns.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("id=\"comparison\""), std::string::npos);
}

TEST(ReplayHtml, TwoReplaysAreComparedSideBySide) {
  Replay a = Sample(), b = Sample();
  b.label = "other";
  b.jobs[0].preemptions = 3;
  std::ostringstream out;
  WriteHtml({&a, &b}, out);
  const std::string html = out.str();
  EXPECT_NE(html.find("id=\"comparison\""), std::string::npos);
  EXPECT_NE(html.find("<td>preemptions</td><td>1.00</td><td>4.00</td><td>3.00</td>"), std::string::npos);
  EXPECT_NE(html.find("id=\"utilization-1\""), std::string::npos);
}

}  // namespace
}  // namespace rota::replay
