#pragma once

// The controller's log sink, injected: `level` is spdlog's ("debug", "info", "warn", "error").
// main.cc makes it; the parts never log to a sink of their own.

#include <functional>
#include <string>

namespace rota::controller {

using Logger = std::function<void(const std::string& level, const std::string& message)>;

}  // namespace rota::controller
