#include "status_page.h"

#include <algorithm>

#include "html.h"
#include "sections.h"

namespace rota::statuspage {
namespace {

// Inline, so the page needs nothing but itself (it may be viewed where no other URL is reachable).
constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #111827; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .2em; }
h2 { font-size: 1.15em; margin: 1.6em 0 .4em; }
.meta { color: #4b5563; margin: 0; }
.standby { background: #fef3c7; border: 1px solid #f59e0b; padding: .4em .6em; display: inline-block; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .3em .7em; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #f3f4f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.message { max-width: 32em; color: #374151; }
td.name, td.estimate, time { white-space: nowrap; }
.resource { display: flex; align-items: center; gap: .5em; white-space: nowrap; }
.amount { min-width: 8em; font-variant-numeric: tabular-nums; }
.resource-name { color: #374151; }
.usage-bar { flex: none; }
.none, .empty { color: #6b7280; font-style: italic; }
.inactive { color: #b91c1c; font-weight: 600; }
.legend .swatch { display: inline-block; width: .9em; height: .9em; margin: 0 .3em 0 1em; vertical-align: -.1em; }
.swatch.used { background: #1f77b4; }
.swatch.borrowed { background: #ff7f0e; }
.swatch.headroom { background: #fbe3cc; }
.kind-admitted { color: #15803d; }
.kind-preempted, .kind-evicted { color: #b91c1c; }
.kind-checkpoint { color: #b45309; }
)css";

std::string Head(const StatusPage& page) {
  const int refresh = std::max(page.refresh_seconds, 1);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"" +
         std::to_string(refresh) + "\">\n<meta name=\"viewport\" content=\"width=device-width\">\n" +
         "<title>rota status</title>\n<style>" + kStyle + "</style></head>\n";
}

std::string Header(const StatusPage& page) {
  std::string out = "<header><h1>rota status</h1>\n<p class=\"meta\">Generated at <time id=\"generated-at\">" +
                    Escape(page.generated_at) + "</time>; refreshed every " +
                    std::to_string(std::max(page.refresh_seconds, 1)) + " s.</p>\n";
  if (!page.is_leader) {
    out +=
        "<p class=\"standby\" id=\"standby\">This replica is not the leader: positions and forecasts may lag "
        "the leader's.</p>\n";
  }
  return out + "</header>\n";
}

}  // namespace

std::string RenderStatusPage(const StatusPage& page) {
  return Head(page) + "<body>\n" + Header(page) + "<main>\n" + RenderQueuesSection(page) + RenderPendingSection(page) +
         RenderRecentSection(page) + "</main>\n</body></html>\n";
}

}  // namespace rota::statuspage
