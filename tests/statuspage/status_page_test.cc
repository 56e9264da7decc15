#include "status_page.h"

#include <gtest/gtest.h>

#include <string>

#include "sample_page.h"
#include "usage_bar.h"

namespace rota::statuspage {
namespace {

size_t Occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(StatusPage, SampleHasEverySectionAndRow) {
  const std::string html = RenderStatusPage(testing::SamplePage());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id : {"queues", "pending", "recent"}) {
    EXPECT_EQ(Occurrences(html, "<section id=\"" + std::string(id) + "\">"), 1u) << id;
  }
  EXPECT_EQ(Occurrences(html, "class=\"queue-row\""), 3u);
  EXPECT_EQ(Occurrences(html, "<svg class=\"usage-bar\""), 6u);
  EXPECT_EQ(Occurrences(html, "class=\"pending-row\""), 5u);
  EXPECT_EQ(Occurrences(html, "class=\"activity-row\""), 5u);
  EXPECT_NE(html.find("showing 5 of 5"), std::string::npos);
  // Every element opened is closed.
  for (const char* tag : {"section", "table", "tr", "svg", "title", "html", "body"}) {
    EXPECT_EQ(Occurrences(html, "<" + std::string(tag) + ">") + Occurrences(html, "<" + std::string(tag) + " "),
              Occurrences(html, "</" + std::string(tag) + ">"))
        << tag;
  }
}

TEST(StatusPage, SelfContainedWithoutScripts) {
  StatusPage empty;
  for (const StatusPage& page : {testing::SamplePage(), empty}) {
    const std::string html = RenderStatusPage(page);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find(" src="), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
  }
}

TEST(StatusPage, RefreshTag) {
  StatusPage page;
  EXPECT_NE(RenderStatusPage(page).find("<meta http-equiv=\"refresh\" content=\"5\">"), std::string::npos);
  page.refresh_seconds = 30;
  EXPECT_NE(RenderStatusPage(page).find("<meta http-equiv=\"refresh\" content=\"30\">"), std::string::npos);
  page.refresh_seconds = 0;  // never a reload loop
  EXPECT_NE(RenderStatusPage(page).find("<meta http-equiv=\"refresh\" content=\"1\">"), std::string::npos);
}

TEST(StatusPage, EmptyStatesSaySo) {
  const std::string html = RenderStatusPage(StatusPage{});
  EXPECT_NE(html.find("No ClusterQueues"), std::string::npos);
  EXPECT_NE(html.find("Nothing is waiting"), std::string::npos);
  EXPECT_NE(html.find("No recent admissions or preemptions"), std::string::npos);
  EXPECT_EQ(html.find("<table"), std::string::npos);
  EXPECT_EQ(html.find("id=\"standby\""), std::string::npos);
}

TEST(StatusPage, StandbyReplicaIsFlagged) {
  StatusPage page;
  page.is_leader = false;
  EXPECT_NE(RenderStatusPage(page).find("id=\"standby\""), std::string::npos);
}

TEST(StatusPage, PendingTotalBeyondWhatIsShown) {
  StatusPage page;
  page.pending.resize(100, PendingRow{"ns", "w", "cq", "lq"});
  page.pending_total = 12000;
  const std::string html = RenderStatusPage(page);
  EXPECT_NE(html.find("showing 100 of 12,000"), std::string::npos);
  EXPECT_EQ(Occurrences(html, "class=\"pending-row\""), 100u);
  EXPECT_EQ(html.find("Nothing is waiting"), std::string::npos);

  page.pending.clear();  // the model may carry none of many
  EXPECT_NE(RenderStatusPage(page).find("showing 0 of 12,000"), std::string::npos);
  page.pending.resize(3);
  page.pending_total = 0;  // a total below what is shown counts what is shown
  EXPECT_NE(RenderStatusPage(page).find("showing 3 of 3"), std::string::npos);
}

TEST(StatusPage, EstimateOrNone) {
  StatusPage page;
  PendingRow with{"ns", "a", "cq", "lq"}, without{"ns", "b", "cq", "lq"};
  with.estimated_start = "2024-05-14T10:42:00Z";
  with.estimate_basis = "running workloads' expected ends";
  without.estimate_basis = "no estimate: too big";
  page.pending = {with, without};
  const std::string html = RenderStatusPage(page);
  EXPECT_NE(html.find("<td class=\"estimate\" title=\"running workloads&#39; expected ends\"><time>"
                      "2024-05-14T10:42:00Z</time></td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"estimate none\" title=\"no estimate: too big\">none</td>"), std::string::npos);
}

}  // namespace
}  // namespace rota::statuspage
