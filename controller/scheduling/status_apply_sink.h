#pragma once

// The StatusWriter's sink for the apiserver: each write a server-side apply patch of the object's
// status subresource, several at once over one connection (a Pipeline of the client).

#include <functional>
#include <memory>
#include <string>

#include "logger.h"
#include "rota/apiclient/client.h"
#include "status_writer.h"

namespace rota::controller {

// The field manager of rota's status applies. Kueue's scheduler applies Workload admission status
// as "kueue-admission", and tools built on Kueue's libraries (its scheduler benchmark runner, for
// one) apply their own admission changes under that name, relying on server-side apply to remove
// what they omit; owning the fields under the same name makes those tools work on rota.
inline constexpr const char* kStatusFieldManager = "kueue-admission";

// A sink for one of the writer's threads; a failed write (but for a Workload gone) is logged as
// a warning through `log`, which must outlive the sink.
std::unique_ptr<StatusWriter::Sink> NewApplySink(apiclient::Client& client, const Logger& log);

}  // namespace rota::controller
