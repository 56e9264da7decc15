// Every string of the model reaches the page escaped: names, reasons and messages come from users.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "status_page.h"

namespace rota::statuspage {
namespace {

// A hostile value unique to field `i`, and how it must appear in the page.
std::string Hostile(int i) { return "<script>alert(" + std::to_string(i) + ")</script>\"'&"; }
std::string Escaped(int i) { return "&lt;script&gt;alert(" + std::to_string(i) + ")&lt;/script&gt;&quot;&#39;&amp;"; }

// A page whose every string field holds Hostile(i) for a distinct i; `fields` is the number used.
StatusPage HostilePage(int& fields) {
  int i = 0;
  StatusPage page;
  page.generated_at = Hostile(i++);
  ResourceUsage gpu{Hostile(i++), Hostile(i++), Hostile(i++), 8, 2.0, 9};
  page.queues.push_back(QueueRow{Hostile(i++), Hostile(i++), {gpu}, 1, 1, false, Hostile(i++)});
  PendingRow w;
  for (std::string* s : {&w.namespace_, &w.name, &w.cluster_queue, &w.local_queue, &w.reason, &w.message,
                         &w.estimated_start, &w.estimate_basis}) {
    *s = Hostile(i++);
  }
  page.pending = {w};
  page.recent = {ActivityRow{Hostile(i++), Hostile(i++), Hostile(i++), Hostile(i++), Hostile(i++)}};
  fields = i;
  return page;
}

TEST(StatusPageEscaping, EveryModelStringIsEscaped) {
  int fields = 0;
  const std::string html = RenderStatusPage(HostilePage(fields));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("</script"), std::string::npos);
  for (int i = 0; i < fields; ++i) EXPECT_NE(html.find(Escaped(i)), std::string::npos) << "field " << i;
}

TEST(StatusPageEscaping, NoStrayQuotesInAttributes) {
  int fields = 0;
  const std::string html = RenderStatusPage(HostilePage(fields));
  EXPECT_EQ(html.find("\"'"), std::string::npos);
  EXPECT_EQ(html.find("alert(0)\""), std::string::npos);
}

}  // namespace
}  // namespace rota::statuspage
