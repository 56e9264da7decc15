#include "rota/apiclient/thread_name.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>

namespace rota::apiclient {
namespace {

// Never destroyed: threads may end after static destructors have run.
std::mutex& EndedMu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<std::string, double>& Ended() {
  static auto* ended = new std::map<std::string, double>;
  return *ended;
}

// Adds the thread's CPU to Ended() when the thread ends.
struct CountAtEnd {
  std::string name;
  ~CountAtEnd() {
    const double seconds = std::chrono::duration<double>(ThisThreadCpu()).count();
    std::lock_guard<std::mutex> l(EndedMu());
    Ended()[name] += seconds;
  }
};
thread_local std::optional<CountAtEnd> t_count;

}  // namespace

std::chrono::nanoseconds ThisThreadCpu() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return std::chrono::nanoseconds(0);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

void NameThisThread(std::string_view name) {
  const std::string kept(name.substr(0, 15));
  pthread_setname_np(pthread_self(), kept.c_str());
  if (!t_count) t_count.emplace();
  t_count->name = kept;
}

std::map<std::string, double> ThreadCpuSeconds() {
  std::map<std::string, double> out;
  {
    std::lock_guard<std::mutex> l(EndedMu());
    out = Ended();
  }
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // "pid (name) state ...": the name may hold spaces and parentheses, so it ends at the last ')'.
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open || close + 2 > stat.size()) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime and stime, in ticks
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    out[stat.substr(open + 1, close - open - 1)] += (utime + stime) / tick;
  }
  return out;
}

}  // namespace rota::apiclient
