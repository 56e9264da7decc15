#pragma once

// `rota replay`'s flags (replay/replay.h has what it does).

#include <CLI/CLI.hpp>
#include <functional>

namespace rota::replay {

// Adds the subcommand; its callback runs it through `guard` (which turns an escaped exception
// into an exit code) and sets `exit_code`.
using Guard = std::function<int(const char* command, const std::function<int()>& run)>;
void AddReplayCommand(CLI::App& app, int& exit_code, Guard guard);

}  // namespace rota::replay
