#pragma once

// Names the calling thread as `top -H`, `ps -L`, gdb and perf show it (Linux keeps 15 bytes), and
// keeps account of the CPU that named threads used, by name, including threads that have ended.

#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace rota::apiclient {

void NameThisThread(std::string_view name);

// CPU time the calling thread has used so far.
std::chrono::nanoseconds ThisThreadCpu();

// CPU seconds (user + system) by thread name: the live threads of this process as the kernel
// counts them, plus every named thread that has ended. Threads never named count under the
// process's name.
std::map<std::string, double> ThreadCpuSeconds();

}  // namespace rota::apiclient
