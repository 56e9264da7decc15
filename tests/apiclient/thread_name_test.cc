// The CPU account by thread name that rota logs when it stops ("CPU by thread: ...").

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "rota/apiclient/thread_name.h"

namespace rota::apiclient {
namespace {

// Spins for `cpu` of this thread's CPU time.
void Burn(std::chrono::milliseconds cpu) {
  const auto start = std::chrono::steady_clock::now();
  volatile uint64_t x = 0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x + static_cast<uint64_t>(i);
    if (ThisThreadCpu() >= cpu) return;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(30)) return;
  }
}

TEST(ThreadCpuTest, NamedThreadsAreCountedByNameAfterTheyEnd) {
  for (int i = 0; i < 2; ++i) {
    std::thread t([] {
      NameThisThread("cpu-test-burner");
      Burn(std::chrono::milliseconds(150));
    });
    t.join();
  }
  const auto by_name = ThreadCpuSeconds();
  ASSERT_TRUE(by_name.count("cpu-test-burner"));
  // Both threads, each with at least 150 ms.
  EXPECT_GE(by_name.at("cpu-test-burner"), 0.3);
  EXPECT_LT(by_name.at("cpu-test-burner"), 5.0);
}

TEST(ThreadCpuTest, LiveThreadsAreCountedToo) {
  std::atomic<bool> burned{false}, done{false};
  std::thread t([&] {
    NameThisThread("cpu-test-live");
    Burn(std::chrono::milliseconds(200));
    burned = true;
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  while (!burned) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto by_name = ThreadCpuSeconds();  // read while it still runs (the kernel's ticks)
  done = true;
  t.join();
  ASSERT_TRUE(by_name.count("cpu-test-live"));
  EXPECT_GE(by_name.at("cpu-test-live"), 0.15);
}

}  // namespace
}  // namespace rota::apiclient
